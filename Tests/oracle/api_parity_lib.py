"""The public Swift API of MediaKit's main types, read from Sources/MediaKit, and the parity
table docs/api-parity.md that names each one's C and Python counterparts (test_api_parity.py).

The Swift side is found by a small scanner of the sources: comments and string literals are
blanked, braces counted, and at the body depth of each type (its declaration, nested types and
extensions) the `public` members are collected (`var`, `let`, `func`, `init`, `subscript`,
`case`; in a public protocol every requirement; in a public enum every `case`, which Swift
declares without `public`: a case added in Swift only fails the checker as a member would).
Overloads share one name: `Type.member`.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCES = REPO / "Sources" / "MediaKit"
TABLE = REPO / "docs" / "api-parity.md"

# The main types the issue names (and the types their APIs hand out); nested types are included
# as Outer.Inner.
TYPES = ["Demuxer", "SourceDemuxer", "Track", "CodecParameters", "EditListEntry", "Packet", "Frame", "Decoder",
         "DecodeSession", "AsyncDecodeSession", "Muxer", "MP4Muxer", "ContainerCatalog", "Remuxer", "AudioConverter", "PacketAudioConverter", "FrameAudioConverter",
         "AudioEncodingConverter", "AudioConverterInput", "AudioOutputRequest", "AssetReader", "PacketWriter", "AssetStatus",
         "Encoder", "EncoderSettings", "Transcoder", "TranscodeOptions", "FileDecoder", "FileDecodeOptions", "MediaRegistry",
         "SampleFormat", "ChannelMix", "ResampleQuality", "TrimMode", "VideoEncoder", "VideoEncoderSettings", "VideoFormat", "VideoEncodingConverter", "CompressionSession", "AssetWriter", "TagEditor", "AudioStreamParser"]

_DECL = re.compile(r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*((?:public|open)\s+)?(?:(?:final|indirect)\s+)*"
                   r"(class|struct|enum|protocol|actor|extension)\s+([A-Za-z_][\w.]*)")
_MODIFIERS = r"(?:(?:static|class|final|override|convenience|required|mutating|nonmutating|lazy|nonisolated|" \
             r"(?:private|fileprivate|internal)\(set\))\s+)*"
_MEMBER = re.compile(r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:public|open)\s+" + _MODIFIERS + r"(var|let|func|init|subscript|case)\b(.*)")
_CASE = re.compile(r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:indirect\s+)?(case)\b(.*)")
_REQUIREMENT = re.compile(r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*" + _MODIFIERS + r"(var|func|init|subscript)\b(.*)")


def _blank(text: str) -> str:
    """The source with comments and string literals blanked (braces in them do not count)."""
    text = re.sub(r'"""(?:.|\n)*?"""', '""', text)
    text = re.sub(r"/\*(?:.|\n)*?\*/", "", text)
    out = []
    for line in text.splitlines():
        line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
        out.append(re.sub(r"//.*", "", line))
    return "\n".join(out)


def _names(kind: str, rest: str) -> list[str]:
    if kind == "init":
        return ["init"]
    if kind == "subscript":
        return ["subscript"]
    if kind == "func":
        m = re.match(r"\s*([A-Za-z_]\w*|[^\s(<]+)", rest)
        return [m.group(1)] if m else []
    # var / let / case: comma-separated names, commas inside brackets or parentheses skipped.
    names, depth, segment = [], 0, ""
    for c in rest.split("{")[0]:
        if c in "([<":
            depth += 1
        elif c in ")]>":
            depth -= 1
        if c == "," and depth == 0:
            names.append(segment)
            segment = ""
        else:
            segment += c
    names.append(segment)
    found = [re.match(r"\s*`?([A-Za-z_]\w*)", n) for n in names]
    return [m.group(1) for m in found if m]


def swift_members() -> set[str]:
    """`Type.member` for every public member of TYPES (and their nested types)."""
    members: set[str] = set()
    for path in sorted(SOURCES.rglob("*.swift")):
        # (full name, depth inside its body, is a public protocol, is a public enum)
        stack: list[tuple[str, int, bool, bool]] = []
        depth = 0
        pending: tuple[str, bool, bool] | None = None
        for line in _blank(path.read_text()).splitlines():
            decl = _DECL.match(line)
            if decl:
                kind, name = decl.group(2), decl.group(3)
                if kind == "extension":
                    full = name
                else:
                    full = f"{stack[-1][0]}.{name}" if stack else name
                pending = (full, kind == "protocol" and bool(decl.group(1)), kind == "enum" and bool(decl.group(1)))
            elif stack and depth == stack[-1][1]:
                owner, _, protocol, enum = stack[-1]
                if owner.split(".")[0] in TYPES:
                    m = _MEMBER.match(line) or (_REQUIREMENT.match(line) if protocol else None) or (_CASE.match(line) if enum else None)
                    if m:
                        members.update(f"{owner}.{n}" for n in _names(m.group(1), m.group(2)))
            for c in line:
                if c == "{":
                    depth += 1
                    if pending:
                        stack.append((pending[0], depth, pending[1], pending[2]))
                        pending = None
                elif c == "}":
                    if stack and stack[-1][1] == depth:
                        stack.pop()
                    depth -= 1
    return members


def table_rows() -> list[tuple[str, str, str]]:
    """(Swift, C, Python) cells of every row of the parity table's tables."""
    rows = []
    for line in TABLE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not line.lstrip().startswith("|") or cells[0] in ("Swift", "") or set(cells[0]) <= set("-: "):
            continue
        rows.append((cells[0], cells[1], cells[2]))
    return rows


def case_table_members() -> list[str]:
    """`SampleFormat.case` of every row of the four-column cases table (case, value, C, Python)
    that test_every_sample_format_has_its_c_code_and_python_name checks."""
    out = []
    for line in TABLE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and line.lstrip().startswith("| `SampleFormat."):
            out.append(names_in(cells[0])[0])
    return out


def names_in(cell: str) -> list[str]:
    """The code names of a cell: the backticked words, `Type.member` style."""
    return re.findall(r"`([^`]+)`", cell)


if __name__ == "__main__":
    for m in sorted(swift_members()):
        print(m)
