#!/usr/bin/env bash
# `make fuzz SECONDS=N [TARGETS="mp4 ogg"]`: builds the libFuzzer targets of Tests/fuzz with
# -sanitize=fuzzer,address, seeds each one's corpus, runs each for N seconds and prints one line per
# target: executions, coverage (edges and features), corpus size, peak RSS and what it found.
#
# Limits (issue 17): an allocation over 256 MiB (-malloc_limit_mb), an input taking over 10 s
# (-timeout) and a leak (LeakSanitizer) are findings, as are crashes. A finding's input is left in
# $WORK/<target>/artifacts/; replay it with `$BIN/fuzz-<target> <file>`, then fix the parser and save
# the input under Tests/fuzz/regressions/<target>/ (FuzzRegressionTests replays it in `swift test`).
#
# Environment: SECONDS_PER_TARGET (or first argument), TARGETS, MEDIA (seed files, default
# ../shared/media beside the checkout), SEED_MAX_BYTES (65536), MAX_LEN (65536),
# FUZZ_NO_BUILD=1 to skip the build, SWIFT.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
seconds=${1:-${SECONDS_PER_TARGET:-60}}
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
MEDIA=${MEDIA:-$repo/../shared/media}
SEED_MAX_BYTES=${SEED_MAX_BYTES:-65536}
MAX_LEN=${MAX_LEN:-65536}
# Every Sources/fuzz_<name> folder is a target (its executable: fuzz-<name with - for _>).
ALL_TARGETS=$(cd "$here/Sources" && ls -d fuzz_* | sed -e 's/^fuzz_//' -e 's/_/-/g' | tr '\n' ' ')
TARGETS=${TARGETS:-$ALL_TARGETS}
WORK=${WORK:-$here/.build/fuzz-work}
# --sanitize=fuzzer makes SwiftPM leave main to libFuzzer; the combined -sanitize=fuzzer,address
# after it is what swiftc keeps (separate -sanitize= flags do not add up: the last one wins).
BUILD_FLAGS=(-c release --package-path "$here" --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=address)

if [[ "${FUZZ_NO_BUILD:-}" != 1 ]]; then
    echo "== building fuzz targets (Tests/fuzz, -sanitize=fuzzer,address)"
    "$SWIFT" build "${BUILD_FLAGS[@]}" 2>&1 | grep -v "asan_extra_spill_area" | tail -3 || exit 1
fi
BIN=$("$SWIFT" build "${BUILD_FLAGS[@]}" --show-bin-path)

# Seed files for a target: corpus files of its formats up to SEED_MAX_BYTES, and the generated
# seeds of Tests/fuzz/seeds/<dir>.
seed_globs() {
    case $1 in
        mp4)  echo "*.mp4 *.m4a *.m4b *.m4s *.mov *.3gp *.cmfv *.qta" ;;
        ogg)  echo "*.ogg *.opus" ;;
        ivf)  echo "*.ivf" ;;
        wav|flac) echo "" ;;
        audiostream|audiostream-demuxer) echo "*.mp3 *.mp2 *.aac" ;;
        rawaudio) echo "" ;;                # the corpus's raw streams are in breadth/: cut copies in seeds/rawaudio
        probe|capi|remux) echo "*.mp4 *.m4a *.mov *.ogg *.opus *.ivf *.mp3 *.aac" ;;
        matroska) echo "*.mkv *.mka *.webm" ;;
        mux) echo "" ;;                     # scripts for the writers, not media files
        webvtt) echo "*.vtt" ;;
        tx3g|ass|ilst|tagedit) echo "" ;;   # samples, event lines, udta payloads, tag-edit scripts: seeds/<target>
        lavf) echo "" ;;                    # every file of breadth/, cut (see seed)
        mkvzlib) echo "" ;;                 # zlib streams (a selector byte first): seeds/mkvzlib
        *) echo "*.$1" ;;                   # another new target: the corpus files named after it
    esac
}
seed_dirs() {
    case $1 in
        mp4|ivf) echo "" ;;
        ogg) echo ogg ;;
        wav) echo wav ;;
        flac) echo flac ;;
        audiostream) echo "audiostream wav flac ogg aiff caf mpegts" ;;   # the push parser reads these containers too
        audiostream-demuxer) echo audiostream ;;
        rawaudio) echo rawaudio ;;
        probe|capi|remux) echo "wav flac ogg audiostream aiff caf mpegts rawaudio" ;;
        mux) echo mux ;;
        *) echo "$1" ;;
    esac
}
dict_for() {
    case $1 in
        audiostream|audiostream-demuxer) echo audiostream ;;
        probe|capi|remux) echo all ;;
        *) if [[ -f "$here/dict/$1.dict" ]]; then echo "$1"; else echo all; fi ;;
    esac
}

seed() {
    local target=$1 corpus=$2 f
    mkdir -p "$corpus"
    {
        if [[ -d "$MEDIA" ]]; then
            for g in $(seed_globs "$target"); do
                find "$MEDIA" -maxdepth 1 -name "$g" -size -"$((SEED_MAX_BYTES + 1))"c
            done
        fi
        for d in $(seed_dirs "$target"); do [[ -d "$here/seeds/$d" ]] && find "$here/seeds/$d" -type f; done
        # The libavformat target: the containers only the plugin reads are in breadth/; their
        # first SEED_MAX_BYTES bytes (a cut file is still a demuxer's input).
        [[ $target == lavf && -d "$MEDIA/breadth" ]] && find "$MEDIA/breadth" -maxdepth 1 -type f ! -name MANIFEST.tsv
    } | while read -r f; do
        local name out
        name=seed-$(basename "$f")
        out=$corpus/$name
        [[ -e "$out" ]] && continue
        if [[ $target == lavf ]]; then
            head -c "$SEED_MAX_BYTES" "$f" > "$out"
        elif [[ $target == audiostream || $target == rawaudio ]]; then
            # The target takes its first two bytes as the chunking seed.
            { printf '\x00\x10'; cat "$f"; } > "$out"
        else
            cp "$f" "$out"
        fi
    done
}

mkdir -p "$WORK"
printf '%-20s %10s %8s %8s %8s %8s  %s\n' target execs exec/s cov ft corpus findings > "$WORK.summary"
status=0
for t in $TARGETS; do
    dir=$WORK/$t
    mkdir -p "$dir/artifacts"
    # Findings of earlier runs stay in artifacts/ until someone saves them; only new ones count.
    before=$(ls "$dir/artifacts")
    seed "$t" "$dir/corpus"
    echo "== fuzz-$t: ${seconds}s, $(ls "$dir/corpus" | wc -l) corpus files"
    # libavformat's demuxers allocate what a chunk or box size claims, up to libavutil's own
    # bound (av_max_alloc: INT_MAX); such an allocation fails or succeeds without touching
    # memory, so for the lavf target (FFmpeg's code, not ours) that bound is the limit, and a
    # process that really uses more than -rss_limit_mb is still a finding. FUZZING.md lists them.
    malloc_limit=256
    [[ $t == lavf ]] && malloc_limit=2048
    # The Swift runtime's own crash handler hides ASan's report: off.
    SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0} \
    "$BIN/fuzz-$t" "$dir/corpus" -dict="$here/dict/$(dict_for "$t").dict" \
        -max_total_time="$seconds" -max_len="$MAX_LEN" -timeout=10 -malloc_limit_mb="$malloc_limit" -rss_limit_mb=2048 \
        -artifact_prefix="$dir/artifacts/" -print_final_stats=1 > "$dir/log" 2>&1
    rc=$?
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/log" | grep -o '[0-9]*$' | tail -1)
    eps=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$dir/log" | grep -o '[0-9]*$' | tail -1)
    last=$(grep -E '^#[0-9]+' "$dir/log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' <<<"$last" | grep -o '[0-9]*')
    ft=$(grep -o 'ft: [0-9]*' <<<"$last" | grep -o '[0-9]*')
    files=$(ls "$dir/corpus" | wc -l)
    found=$(comm -13 <(echo "$before") <(ls "$dir/artifacts" 2>/dev/null) | tr '\n' ' ')
    found=${found% }
    # The writers' target: each file it wrote must be one ffprobe reads. ffprobe per input is too
    # slow inside the loop, so up to REPLAY_FFPROBE (200) corpus inputs are run again, one by one,
    # with MK_FUZZ_FFPROBE set (FuzzHarness.mux stops on a file ffprobe does not read).
    if [[ $t == mux && $rc -eq 0 ]] && command -v ffprobe > /dev/null; then
        mapfile -t replay < <(find "$dir/corpus" -type f | shuf -n "${REPLAY_FFPROBE:-200}" --random-source=<(yes))
        echo "== fuzz-$t: ffprobe on the files of ${#replay[@]} corpus inputs"
        # Leak checking off here only: Foundation's Process.run (which starts ffprobe) leaks a
        # 32-byte weak-reference side table per process (see "Sanitizer runs" in FUZZING.md).
        if ! SWIFT_BACKTRACE=enable=no MK_FUZZ_FFPROBE=1 ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=0 \
            "$BIN/fuzz-$t" -artifact_prefix="$dir/artifacts/" "${replay[@]}" >> "$dir/log" 2>&1; then
            rc=1
        fi
        found=$(comm -13 <(echo "$before") <(ls "$dir/artifacts" 2>/dev/null) | tr '\n' ' ')
        found=${found% }
    fi
    if [[ $rc -ne 0 || -n "$found" ]]; then
        status=1
        kind=$(grep -m1 -oE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer): [a-z -]+|Swift runtime failure: [^/]*' "$dir/log" | head -1)
        findings="FOUND ($kind): $found"
    else
        findings=none
    fi
    printf '%-20s %10s %8s %8s %8s %8s  %s\n' "fuzz-$t" "${execs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "$files" "$findings" | tee -a "$WORK.summary"
done
echo "== summary ($seconds s per target; logs and findings in $WORK/<target>/)"
cat "$WORK.summary"
exit $status
