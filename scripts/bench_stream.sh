#!/usr/bin/env bash
# MP3 benchmark (issue 12): MediaKit's AudioStreamParser against ffmpeg in the same run, on a
# 10-minute MP3 (128 kbit/s CBR, libmp3lame):
#
#   the parser alone:    mk-stream --benchmark --chunk N IN   (the file held in memory, pushed in
#                        pieces of N bytes; CPU time of the parsing thread, fastest of 5 passes)
#   demux every packet:  mk-probe --count IN               vs  ffmpeg -i IN -c copy -f null -
#   decode to s16le:     mk-decode IN --audio-out OUT      vs  ffmpeg -i IN -f s16le OUT
#   peak memory of the decode on a 1-minute cut of the same signal, to show it flat with length.
#
# Each command runs BENCH_RUNS times (default 5, alternating) under GNU time; the median wall time
# and peak memory are reported. These are whole-process times (start-up included), so the parser's
# own rate is higher than the figure shown. Untimed check: both decoders write identical bytes.
# Results go to the terminal and to BENCHMARKS.md (between the bench_stream markers).
#
# Usage: make bench        (or: MK_BIN=DIR scripts/bench_stream.sh)
set -euo pipefail
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

RUNS=${BENCH_RUNS:-5}
PROBE="$MK_BIN/mk-probe" DECODE="$MK_BIN/mk-decode"
[ -x "$PROBE" ] && [ -x "$DECODE" ] || die "mk-probe / mk-decode not found in $MK_BIN; run 'make build' first"
mkdir -p "$WORK"
IN="$WORK/mp3_cbr128_600s.mp3"
GEN_CMD=(ffmpeg -v error -nostdin -y -f lavfi -i "sine=frequency=440:sample_rate=44100:duration=600"
         -f lavfi -i "anoisesrc=color=pink:sample_rate=44100:amplitude=0.2:duration=600"
         -filter_complex "[0:a][1:a]join=inputs=2:channel_layout=stereo[a]" -map "[a]" -c:a libmp3lame -b:a 128k -f mp3)
make_input "$IN" "${GEN_CMD[@]}"
# The same signal, 1 minute: peak memory of the decode must not grow with the file's length.
SHORT="$WORK/mp3_cbr128_60s.mp3"
SHORT_CMD=("${GEN_CMD[@]//duration=600/duration=60}")
make_input "$SHORT" "${SHORT_CMD[@]}"
STREAM="$MK_BIN/mk-stream"
[ -x "$STREAM" ] || die "mk-stream not found in $MK_BIN; run 'make build' first"
cat "$IN" "$SHORT" >/dev/null
BYTES=$(stat -c %s "$IN")
if [ -d /dev/shm ] && [ -w /dev/shm ]; then OUT=/dev/shm/mediakit-bench; else OUT=$WORK; fi
mkdir -p "$OUT"
O="$OUT/stream.pcm"

rm -f "$WORK"/stream_*.times "$WORK"/stream_parser_*.rates
for ((run = 1; run <= RUNS; run++)); do
    note "run $run/$RUNS"
    if (( run % 2 )); then order=(ff mk); else order=(mk ff); fi
    for who in "${order[@]}"; do
        if [ "$who" = ff ]; then
            measure stream_ff_demux "" ffmpeg -v error -nostdin -i "$IN" -c copy -f null -
            measure stream_ff_decode "$O" ffmpeg -v error -nostdin -y -i "$IN" -f s16le "$O"
            measure stream_ff_decode_short "$O" ffmpeg -v error -nostdin -y -i "$SHORT" -f s16le "$O"
        else
            for c in 4096 65536; do
                "$STREAM" --benchmark --chunk $c "$IN" | tee -a "$WORK/stream_parser_$c.log" \
                    | sed -E 's/.*cpu-seconds=([0-9.]+) rate=([0-9]+) MB\/s wall-seconds=([0-9.]+).*/\1 \2 \3/' >>"$WORK/stream_parser_$c.rates"
            done
            measure stream_mk_decode_short "$O" "$DECODE" -q "$SHORT" --audio-out "$O"
            measure stream_mk_demux "" "$PROBE" --count "$IN"
            measure stream_mk_decode "$O" "$DECODE" -q "$IN" --audio-out "$O"
        fi
    done
done
ffmpeg -v error -nostdin -y -i "$IN" -f s16le "$O.ff"
"$DECODE" -q "$IN" --audio-out "$O.mk"
if cmp -s "$O.ff" "$O.mk"; then CHECK="identical (cmp, $(stat -c %s "$O.mk") bytes)"; else CHECK="DIFFERS: $(cmp "$O.ff" "$O.mk" 2>&1 | head -n 1)"; fi
rm -f "$O" "$O.ff" "$O.mk"

W() { median "$WORK/stream_$1.times" 1; }
P() { median "$WORK/stream_parser_$1.rates" "$2"; }
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
R() { median "$WORK/stream_$1.times" 2; }
mbs() { awk -v b="$BYTES" -v s="$1" 'BEGIN { if (s > 0) printf "%.0f MB/s", b / s / 1e6; else print "n/a" }'; }
ROWS=("| parse in memory, 4 KiB pushes | mk-stream --benchmark --chunk 4096 | $(P 4096 3) |  | $(ratio "$(P 4096 3)" "$(W ff_demux)") | $(P 4096 2) MB/s | CPU $(P 4096 1) s |"
      "| parse in memory, 64 KiB pushes | mk-stream --benchmark --chunk 65536 | $(P 65536 3) |  | $(ratio "$(P 65536 3)" "$(W ff_demux)") | $(P 65536 2) MB/s | CPU $(P 65536 1) s |"
      "| demux every packet | ffmpeg -c copy -f null | $(W ff_demux) | $(mib "$(R ff_demux)") | 1.00x | $(mbs "$(W ff_demux)") |  |"
      "| demux every packet | mk-probe --count | $(W mk_demux) | $(mib "$(R mk_demux)") | $(ratio "$(W mk_demux)" "$(W ff_demux)") | $(mbs "$(W mk_demux)") |  |"
      "| decode to s16le | ffmpeg | $(W ff_decode) | $(mib "$(R ff_decode)") | 1.00x |  | reference |"
      "| decode to s16le | mk-decode | $(W mk_decode) | $(mib "$(R mk_decode)") | $(ratio "$(W mk_decode)" "$(W ff_decode)") |  | $CHECK |"
      "| decode to s16le, 1-minute file | ffmpeg | $(W ff_decode_short) | $(mib "$(R ff_decode_short)") | 1.00x |  | peak memory 10 min / 1 min: $(ratio "$(R ff_decode)" "$(R ff_decode_short)") |"
      "| decode to s16le, 1-minute file | mk-decode | $(W mk_decode_short) | $(mib "$(R mk_decode_short)") | $(ratio "$(W mk_decode_short)" "$(W ff_decode_short)") |  | peak memory 10 min / 1 min: $(ratio "$(R mk_decode)" "$(R mk_decode_short)") |")
HEAD="| case | tool | wall s | peak MiB | wall vs ffmpeg -c copy / decode | input rate | output |"
RULE="|---|---|---:|---:|---:|---:|---|"
echo; echo "$HEAD"; echo "$RULE"; printf '%s\n' "${ROWS[@]}"; echo

SECTION=$(mktemp)
trap 'rm -f "$SECTION"' EXIT
{
    echo "<!-- bench_stream:begin -->"
    echo "## MP3: AudioStreamParser (mk-probe, mk-decode) vs ffmpeg"
    echo
    echo "Written by \`scripts/bench_stream.sh\` (\`make bench\`) on $(date -u '+%Y-%m-%d %H:%M UTC')."
    echo "Machine: $(nproc) cores; $(ffmpeg -version | head -n 1); MediaKit $(git rev-parse --short HEAD 2>/dev/null || echo '?') (release build)."
    echo "Input (made once): \`$IN\` ($BYTES bytes, 600 s) by \`$(q "${GEN_CMD[@]}" "$IN")\`;"
    echo "the 1-minute file: the same command with duration=60 ($(stat -c %s "$SHORT") bytes)."
    echo "Method: each command $RUNS times, alternating, under GNU time; medians. Whole-process wall times"
    echo "(start-up included); decoded outputs written to \`$OUT/\`. The parser rows: \`mk-stream --benchmark\`"
    echo "holds the file in memory in pieces of 4 KiB or 64 KiB and pushes them to a new parser 5 times;"
    echo "the rate is bytes / the parsing thread's least CPU time (unaffected by other load), the wall"
    echo "column its least wall time (the parser alone, no start-up: compared with ffmpeg's whole process,"
    echo "as the issue asks; its rate is per CPU second). Other rates: bytes / whole-process wall time."
    echo "Commands: \`mk-stream --benchmark --chunk N IN\`, \`mk-probe --count IN\`, \`ffmpeg -v error -nostdin -i IN -c copy -f null -\`,"
    echo "\`mk-decode -q IN --audio-out OUT\`, \`ffmpeg -v error -nostdin -y -i IN -f s16le OUT\`; peak memory: GNU time's max RSS."
    echo "Rerun: \`make bench\`, or \`MK_BIN=\$(swift build -c release --show-bin-path) scripts/bench_stream.sh\`."
    echo "Load average when the run ended: $LOAD (2 cores shared with other work: wall times are inflated, ratios hold)."
    echo
    echo "$HEAD"; echo "$RULE"; printf '%s\n' "${ROWS[@]}"
    echo "<!-- bench_stream:end -->"
} >"$SECTION"
write_section "$MD" bench_stream "$SECTION"
note "wrote the bench_stream section of $MD"
[[ $CHECK == identical* ]] || die "mk-decode's output differs from ffmpeg's"
