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

# measure KEY OUTPUT CMD...: one timed run of CMD (OUTPUT, if not empty, deleted first;
# `sync` first, so the previous run's dirty pages reach the disk before this one is timed);
# appends "wall_seconds peak_rss_kib" (GNU time's %e %M) to $WORK/KEY.times.
measure() {
    local key=$1 out=$2
    shift 2
    [ -n "$out" ] && rm -f "$out"
    sync
    if ! "$TIME" -f '%e %M' -o "$WORK/$key.time" "$@" >"$WORK/$key.log" 2>&1; then
        die "$key failed: $* (see $WORK/$key.log)"
    fi
    tail -n 1 "$WORK/$key.time" >>"$WORK/$key.times"
}

# median FILE COLUMN: the median of a column of numbers.
median() {
    awk -v c="$2" '{print $c}' "$1" | sort -g | awk '{v[NR]=$1} END {
        if (NR % 2) print v[(NR+1)/2]; else printf "%.3f\n", (v[NR/2]+v[NR/2+1])/2 }'
}

# table HEAD RULE ROW...: a Markdown table (header, rule, rows) on standard output.
table() { printf '%s\n' "$@"; }

# mib KIB: whole MiB. ratio A B: "A/Bx" with two decimals.
mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "n/a" }'; }

# q ARG...: a shell-quoted command line, quoting only the arguments that need it.
# shown ARG...: the same with $MK (a MediaKit binary) shown as $MK_SHOWN.
q() {
    local out="" a
    for a in "$@"; do
        if [[ $a =~ ^[A-Za-z0-9_./:=+,@%-]+$ ]]; then out+=" $a"; else out+=" '${a//\'/\'\\\'\'}'"; fi
    done
    echo "${out# }"
}
shown() { local s; s=$(q "$@"); echo "${s//"$MK"/"$MK_SHOWN"}"; }

# venv_with DIR IMPORTS PACKAGE...: DIR's python (printed), after making the venv DIR and
# installing PACKAGE... from PyPI into it when the Python statement IMPORTS fails there.
venv_with() {
    local dir=$1 imports=$2
    shift 2
    [ -x "$dir/bin/python" ] || python3 -m venv "$dir" >&2 || die "could not make the venv $dir"
    if ! "$dir/bin/python" -c "$imports" 2>/dev/null; then
        note "installing $* into $dir" >&2
        "$dir/bin/pip" install -q "$@" >&2 || die "could not install $* into $dir"
    fi
    echo "$dir/bin/python"
}

# The machine and the revision, for the reports.
CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
REV=$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo "no commit yet")

# make_input OUT CMD...: runs CMD OUT.part (niced) unless OUT exists, then moves it into place.
make_input() {
    local out=$1
    shift
    [ -s "$out" ] && return 0
    note "generating $out (once; niced) ..."
    local start
    start=$(date +%s)
    nice -n 10 "$@" "$out.part" || { rm -f "$out.part"; die "could not generate $out"; }
    mv "$out.part" "$out"
    note "generated in $(( $(date +%s) - start )) s ($(du -h "$out" | cut -f1))"
}

# h264_bench_input SIZE SECONDS: sets IN (in $WORK) and GEN_CMD (the command that makes it,
# without its output path) for the H.264 (3 B-frames) + AAC stereo input that bench.sh and
# bench_remux.sh share, and makes it when missing.
h264_bench_input() {
    local size=$1 seconds=$2
    IN="$WORK/h264_${size}_${seconds}s_30fps_bf3_aac48k_stereo.mp4"
    GEN_CMD=(ffmpeg -v error -nostdin -y
        -f lavfi -i "testsrc2=size=$size:rate=30"
        -f lavfi -i "sine=frequency=440:sample_rate=48000"
        -f lavfi -i "sine=frequency=660:sample_rate=48000"
        -filter_complex "[1:a][2:a]join=inputs=2:channel_layout=stereo[a]"
        -map 0:v -map "[a]" -t "$seconds"
        -c:v libx264 -preset veryfast -bf 3 -pix_fmt yuv420p
        -c:a aac -b:a 128k -ar 48000 -ac 2
        -fflags +bitexact -flags:v +bitexact -flags:a +bitexact -map_metadata -1
        -f mp4)
    mkdir -p "$WORK"
    make_input "$IN" "${GEN_CMD[@]}"
}
