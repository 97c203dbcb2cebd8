# Shared by the scripts/bench*.sh benchmarks (sourced, not run). Sourcing it moves to the
# repository root and sets: REPO, WORK (bench-work, or $BENCH_WORK), MD (BENCHMARKS.md, or
# $BENCHMARKS_MD), TIME (GNU time, checked), MK_BIN (the release binaries, or $MK_BIN),
# and die / note, which prefix messages with the script's name. ffmpeg must be installed.

BENCH_NAME=$(basename "${BASH_SOURCE[1]:-$0}" .sh)
die() { printf '%s: error: %s\n' "$BENCH_NAME" "$*" >&2; exit 1; }
note() { printf '%s: %s\n' "$BENCH_NAME" "$*"; }

cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$PWD
WORK=${BENCH_WORK:-bench-work}
MD=${BENCHMARKS_MD:-BENCHMARKS.md}
TIME=/usr/bin/time
[ -x "$TIME" ] || die "GNU time not found at $TIME (Debian package 'time'; run scripts/deps.sh)"
command -v ffmpeg >/dev/null || die "ffmpeg not found (run scripts/deps.sh)"
if [ -z "${MK_BIN:-}" ]; then
    MK_BIN=$("$(command -v swift || echo /opt/swift/usr/bin/swift)" build -c release --show-bin-path)
fi

# write_section MD NAME SECTION_FILE: puts SECTION_FILE into the report MD between the
# markers <!-- NAME:begin --> and <!-- NAME:end --> (which SECTION_FILE itself starts and
# ends with), replacing the previous figures of that benchmark, or appending them.
write_section() {
    local md=$1 name=$2 section=$3
    local b="<!-- $name:begin -->" e="<!-- $name:end -->"
    if [ -f "$md" ] && grep -qF "$b" "$md"; then
        awk -v b="$b" -v e="$e" -v f="$section" '
            $0 == b { while ((getline line < f) > 0) print line; skip = 1; next }
            $0 == e { skip = 0; next }
            !skip { print }' "$md" >"$md.tmp"
        mv "$md.tmp" "$md"
    else
        [ -f "$md" ] || printf '# Benchmarks\n\nFigures written by the scripts named in each section; rerun them with `make bench`.\n' >"$md"
        { echo; cat "$section"; } >>"$md"
    fi
}
