"""Folder rules of Sources/MediaKit (issue 29, item 3), read from the source text (no build).

- No container folder (Sources/MediaKit/Containers/*) uses a name declared in another container
  folder: containers depend on Core/, IO/ and Codecs/, never on each other, so a codec fact
  two containers need lives in Codecs/ and bit reading in IO/.
- Codecs/ and IO/ use no name declared under Containers/ or in the layers above them
  (Streaming, Registry, Audio, Video, Output, Session, Text), and IO/ none of Codecs/: codec
  facts depend on Core/ and IO/ only.

The names of a folder are its top-level types (struct, class, enum, protocol, actor,
typealias) and functions, and the members it adds in extensions of types declared elsewhere
(`extension Array { func be32 }` is as much a shared helper as a free function); private and
fileprivate ones cannot be used from another file and are left out. A use is a whole-word
match outside comments and string literals (code inside a string's interpolation counts).

Oracle: the rule itself (README "Architecture"); the test that it detects a use is
test_the_check_finds_a_use_across_folders, on a made-up tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import oracle_lib as lib

MEDIAKIT = lib.REPO / "Sources" / "MediaKit"


def strip_swift(text: str) -> str:
    """`text` with comments and string literals blanked (newlines kept, so line numbers hold);
    the code of string interpolations `\\( ... )` is kept."""
    out: list[str] = []
    i, n = 0, len(text)
    # Stack of contexts: "code" (with the paren depth at which an interpolation closes),
    # or a string kind ('"' or '"""') with its count of raw-string hashes.
    stack: list[tuple[str, int]] = [("code", -1)]
    parens = 0

    def blank(s: str) -> None:
        out.append("".join(c if c == "\n" else " " for c in s))

    while i < n:
        kind, extra = stack[-1]
        c = text[i]
        if kind == "code":
            if text.startswith("//", i):
                j = text.find("\n", i)
                j = n if j < 0 else j
                blank(text[i:j]); i = j
            elif text.startswith("/*", i):
                depth, j = 1, i + 2
                while j < n and depth:
                    if text.startswith("/*", j):
                        depth += 1; j += 2
                    elif text.startswith("*/", j):
                        depth -= 1; j += 2
                    else:
                        j += 1
                blank(text[i:j]); i = j
            elif c == '"' or (c == "#" and re.match(r'#+"', text[i:])):
                hashes = len(text[i:]) - len(text[i:].lstrip("#"))
                j = i + hashes
                quote = '"""' if text.startswith('"""', j) else '"'
                stack.append((quote, hashes))
                blank(text[i:j + len(quote)]); i = j + len(quote)
            elif c == "(":
                parens += 1; out.append(c); i += 1
            elif c == ")":
                if len(stack) > 1 and extra == parens:   # the end of an interpolation
                    stack.pop(); blank(c)
                else:
                    out.append(c)
                parens -= 1; i += 1
            else:
                out.append(c); i += 1
        else:
            hashes = extra
            close = kind + "#" * hashes
            if text.startswith(close, i):
                stack.pop(); blank(close); i += len(close)
            elif text.startswith("\\" + "#" * hashes + "(", i):
                opener = "\\" + "#" * hashes + "("
                blank(opener); i += len(opener)
                parens += 1
                stack.append(("code", parens))
            elif c == "\\" and hashes == 0:
                blank(text[i:i + 2]); i += 2
            else:
                blank(c); i += 1
    return "".join(out)


@dataclass(frozen=True)
class Decl:
    name: str
    where: str              # path:line relative to the repository
    private: bool = False   # private / fileprivate: not usable from another file
    member: bool = False    # a member added by an extension of a type declared elsewhere


DECL = re.compile(
    r"^[ \t]*((?:@\w+(?:\([^)]*\))?\s+|(?:public|internal|package|open|private|fileprivate|final|"
    r"indirect|static|nonisolated|mutating|@usableFromInline)\s+)*)"
    r"(struct|class|enum|protocol|actor|typealias|func|extension|let|var)\s+([A-Za-z_]\w*)",
    re.M)


def declarations(path: Path, repo: Path) -> list[tuple[Decl, str | None, str]]:
    """What `path` declares: (declaration, the type it extends or None, keyword) for its
    top-level types and functions and the members of its top-level extensions."""
    text = strip_swift(path.read_text())
    rel = path.relative_to(repo)
    found: list[tuple[Decl, str | None, str]] = []
    depth = 0
    extension: str | None = None   # the extended type while inside a top-level extension
    pos = 0
    for m in DECL.finditer(text):
        depth += text.count("{", pos, m.start()) - text.count("}", pos, m.start())
        pos = m.start()
        if depth == 0:
            extension = None
        modifiers, keyword, name = m.group(1), m.group(2), m.group(3)
        private = re.search(r"\b(private|fileprivate)\b", modifiers) is not None
        where = f"{rel}:{text.count(chr(10), 0, m.start()) + 1}"
        if depth == 0:
            if keyword == "extension":
                extension = name
            elif keyword not in ("let", "var"):
                found.append((Decl(name, where, private), None, keyword))
        elif depth == 1 and extension is not None and keyword != "extension":
            found.append((Decl(name, where, private, member=True), extension, keyword))
    return found


def folder_names(folder: Path, repo: Path, mediakit_types: set[str]) -> dict[str, Decl]:
    """Names declared in `folder` (recursively), private ones included (they shadow another
    folder's name of the same spelling). Members of extensions count when the extended type
    is not the folder's own: functions always, stored or static properties only on a type
    MediaKit does not declare (`ContainerFormat.flac`, a descriptor, is read by the
    Registry; it is not a helper another container could lean on)."""
    decls = [d for f in sorted(folder.rglob("*.swift")) for d in declarations(f, repo)]
    own_types = {d.name for d, ext, _ in decls if ext is None}
    names: dict[str, Decl] = {}
    for d, extended, keyword in decls:
        if extended is not None:
            if extended in own_types:
                continue   # a member of the folder's own type: used through that type's name
            if keyword in ("let", "var") and extended in mediakit_types:
                continue
        names.setdefault(d.name, d)
    return names


def mediakit_type_names(root: Path) -> set[str]:
    """Every top-level type name declared under `root`."""
    repo = root.parent.parent
    return {d.name for f in root.rglob("*.swift") for d, ext, kw in declarations(f, repo)
            if ext is None and kw != "func"}


def uses(folder: Path, names: dict[str, Decl], repo: Path) -> list[str]:
    """Each use, in a Swift file under `folder`, of one of `names` (a member only after a
    dot): 'file:line uses X (declared at ...)', once per line and name."""
    names = {k: d for k, d in names.items() if not d.private}
    if not names:
        return []
    words = [re.escape(k) for k, d in names.items() if not d.member]
    members = [re.escape(k) for k, d in names.items() if d.member]
    pattern = re.compile("|".join(
        ([r"\b(?P<word>" + "|".join(words) + r")\b"] if words else [])
        + ([r"(?<=\.)(?P<member>" + "|".join(members) + r")\b"] if members else [])))
    found: list[str] = []
    for f in sorted(folder.rglob("*.swift")):
        text = strip_swift(f.read_text())
        for m in pattern.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            d = names[m.group("word") or m.group("member")]
            hit = f"{f.relative_to(repo)}:{line} uses {d.name} (declared at {d.where})"
            if not found or found[-1] != hit:
                found.append(hit)
    return found


def container_folders(root: Path) -> list[Path]:
    return sorted(p for p in (root / "Containers").iterdir() if p.is_dir())


def cross_container_uses(root: Path) -> list[str]:
    """Uses of a name of one container folder in another, for the tree Sources/MediaKit `root`."""
    repo = root.parent.parent
    folders = container_folders(root)
    types = mediakit_type_names(root)
    declared = {f: folder_names(f, repo, types) for f in folders}
    problems = []
    for f in folders:
        others: dict[str, Decl] = {}
        for g in folders:
            if g != f:
                for name, d in declared[g].items():
                    if name not in declared[f]:   # the folder's own name of the same spelling
                        others.setdefault(name, d)
        problems += uses(f, others, repo)
    return problems


# The folders above Codecs/ and IO/ (Containers/* is added folder by folder).
UPPER_LAYERS = ("Streaming", "Registry", "Audio", "Video", "Output", "Session", "Text")


def lower_layer_uses(root: Path) -> list[str]:
    """Uses, in Codecs/ and IO/ of the tree `root`, of a name declared under Containers/ or
    in a layer above them, and in IO/ of a name declared in Codecs/."""
    repo = root.parent.parent
    types = mediakit_type_names(root)
    above: dict[str, Decl] = {}
    for f in container_folders(root) + [root / u for u in UPPER_LAYERS if (root / u).is_dir()]:
        for name, d in folder_names(f, repo, types).items():
            above.setdefault(name, d)
    problems = []
    for lower, also in (("Codecs", ()), ("IO", ("Codecs",))):
        if not (root / lower).is_dir():
            continue
        names = dict(above)
        for a in also:
            if (root / a).is_dir():
                names.update(folder_names(root / a, repo, types))
        own = folder_names(root / lower, repo, types)
        problems += uses(root / lower, {k: v for k, v in names.items() if k not in own}, repo)
    return problems


def test_no_container_folder_uses_another_container_folder() -> None:
    problems = cross_container_uses(MEDIAKIT)
    assert not problems, ("a container folder uses a name declared in another container folder "
                          "(move the shared codec fact to Sources/MediaKit/Codecs/ or the byte "
                          "reading to Sources/MediaKit/IO/):\n" + "\n".join(problems))


def test_codecs_and_io_use_nothing_from_containers() -> None:
    assert (MEDIAKIT / "Codecs").is_dir(), "Sources/MediaKit/Codecs/ is missing"
    problems = lower_layer_uses(MEDIAKIT)
    assert not problems, ("Codecs/ or IO/ uses a name declared under Containers/ or a layer "
                          "above them (or IO/ one of Codecs/):\n" + "\n".join(problems))


def test_the_check_finds_a_use_across_folders(tmp_path: Path) -> None:
    """The scanner on a made-up tree: a type, a free function and an extension member used
    across container folders are found; comments, strings and a folder's own names are not."""
    root = tmp_path / "Sources" / "MediaKit"
    (root / "Containers" / "A").mkdir(parents=True)
    (root / "Containers" / "B").mkdir(parents=True)
    (root / "Codecs").mkdir(parents=True)
    (root / "Containers" / "A" / "A.swift").write_text(
        "struct Shared {\n  struct Inner {}\n  func method() {}\n}\n"
        "func helper(_ x: Int) -> Int { x }\n"
        "private struct Hidden {}\n"
        "extension Array where Element == UInt8 {\n  func readBE() -> Int { 0 }\n}\n"
        "extension Shared {\n  func ownMember() {}\n}\n")
    (root / "Containers" / "B" / "B.swift").write_text(
        "// Shared in a comment\n"
        "let s = \"Shared helper readBE in a string\"\n"
        "let t = \"\\(helper(1))\"\n"                # interpolation: a use (line 3)
        "/* Shared /* nested */ Shared */\n"
        "struct Hidden {}\n"                         # A's Hidden is private: not a use
        "let u: Shared? = nil\n"                     # line 6
        "let v = [UInt8]().readBE()\n"               # line 7
        "let w = x.method()\n")                      # members of A's own types: not names
    (root / "Codecs" / "C.swift").write_text("let c = #\"Shared \\#(helper(2))\"#\nstruct Fact {}\n")
    (root / "IO").mkdir()
    (root / "IO" / "R.swift").write_text("struct Reader { let f: Fact? }\n")
    found = sorted(p.split(" (")[0] for p in cross_container_uses(root))
    assert found == ["Sources/MediaKit/Containers/B/B.swift:3 uses helper",
                     "Sources/MediaKit/Containers/B/B.swift:6 uses Shared",
                     "Sources/MediaKit/Containers/B/B.swift:7 uses readBE"]
    assert [p.split(" (")[0] for p in lower_layer_uses(root)] == ["Sources/MediaKit/Codecs/C.swift:1 uses helper",
                                                                  "Sources/MediaKit/IO/R.swift:1 uses Fact"]
