#!/usr/bin/env bash
# C-ABI benchmark: reading every packet of the 1080p benchmark file through the C API
# (Tests/c/read_packets.c against libmediakit) against reading them from Swift
# (`mk-probe --count`), in the same run, with hyperfine (warm-up, then 30 runs each).
# Target (issue 4): the C API costs at most 1.2x Swift. Writes its own section of
# BENCHMARKS.md. The input is the one scripts/bench.sh generates (bench-work/).
set -euo pipefail
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/.."

die() { printf 'bench_capi: error: %s\n' "$*" >&2; exit 1; }
WORK=${BENCH_WORK:-bench-work}
MD=${BENCHMARKS_MD:-BENCHMARKS.md}
MK_BIN=${MK_BIN:-$(swift build -c release --show-bin-path)}
IN=$(ls "$WORK"/h264_1920x1080_60s_*.mp4 2>/dev/null | head -n 1)
[ -n "$IN" ] || die "no benchmark input in $WORK: run scripts/bench.sh first (make bench does)"
command -v hyperfine >/dev/null || die "hyperfine is missing (scripts/deps.sh installs it)"

PROG="$WORK/read_packets"
cc -O2 -std=c99 -Wall -Wextra -Werror -I Include Tests/c/read_packets.c -L "$MK_BIN" -lmediakit \
   -Wl,-rpath,"$MK_BIN" -o "$PROG"
[ "$("$PROG" "$IN")" = "$("$MK_BIN/mk-probe" --count "$IN")" ] || die "C and Swift read different packets"

JSON="$WORK/bench_capi.json"
hyperfine -N --warmup 3 --runs 30 --export-json "$JSON" \
    -n swift "$MK_BIN/mk-probe --count $IN" -n c-api "$PROG $IN" >/dev/null

read -r SWIFT C_API < <(python3 -c '
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
print(r["swift"]["median"], r["c-api"]["median"])' "$JSON")
RATIO=$(awk -v a="$C_API" -v b="$SWIFT" 'BEGIN { printf "%.2f", a / b }')
MET=$(awk -v r="$RATIO" 'BEGIN { print (r <= 1.2) ? "met" : "missed" }')
COUNT=$("$PROG" "$IN")

SECTION=$(mktemp)
trap 'rm -f "$SECTION"' EXIT
{
    echo '<!-- bench_capi.sh:begin -->'
    echo "## Reading packets through the C API (scripts/bench_capi.sh, $(date -u +%Y-%m-%d))"
    echo
    echo "Input: \`$IN\` ($COUNT). Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')."
    echo "Command: \`hyperfine -N --warmup 3 --runs 30 -n swift 'mk-probe --count IN' -n c-api 'read_packets IN'\`"
    echo "(Tests/c/read_packets.c built with \`cc -O2\` against libmediakit). Median wall time:"
    echo
    echo '| reader | median ms | vs Swift | target |'
    echo '|---|---:|---:|---|'
    awk -v s="$SWIFT" 'BEGIN { printf "| Swift (MP4Demuxer.read) | %.1f | 1.00x | |\n", s * 1000 }'
    awk -v c="$C_API" -v r="$RATIO" -v m="$MET" 'BEGIN { printf "| C API (mk_demuxer_read_packet) | %.1f | %sx | <= 1.2x: %s |\n", c * 1000, r, m }'
    echo '<!-- bench_capi.sh:end -->'
} >"$SECTION"
cat "$SECTION"
write_section "$MD" bench_capi.sh "$SECTION"
