#!/usr/bin/env bash
# Ray benchmark (issue 19): a folder of 20 copies of a 1080p 10 s H.264 file (bench_lib's
# input recipe: 30 fps, 3 B-frames, AAC) decoded to NV12 numpy frames, in the same run:
#   (a) a plain loop in one process (mediakit, one decoder thread: one core);
#   (b) mediakit.ray.read_media(paths, "frames") on a local Ray cluster of RAY_CPUS (2) CPUs;
#   (c) the same job written with PyAV 18.1.0 in Ray (ray.data.from_items(paths).flat_map
#       over av.open / container.decode / frame.to_ndarray(format="nv12"), PyAV's defaults).
# The Ray jobs end in a map_batches in the workers (a model's place); one more run pulls
# every frame into the driver (iter_batches, through Ray's object store). Cluster start-up is
# outside the timings, and so are each worker's one-time costs: each job first runs once,
# untimed, on one file per worker (imports, the decoder plugin, block memory). Also timed: the
# plain loop in RAY_CPUS processes side by side (what the cores give without Ray). Three runs
# (BENCH_RUNS), the jobs taking turns in each, so that a shared machine's change of speed falls
# on all of them; the ratios are each run's own, then their median. The load average is
# written next to the figures. PyAV lives in bench-work/ray-venv (a venv
# over the system site-packages, where scripts/deps.sh put Ray).
set -euo pipefail
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

RUNS=${BENCH_RUNS:-3}
COPIES=${RAY_COPIES:-20}
CPUS=${RAY_CPUS:-2}
python3 -c 'import ray.data' 2>/dev/null || die "Ray is not installed (scripts/deps.sh installs it)"

h264_bench_input 1920x1080 10
FOLDER="$WORK/ray-$COPIES-copies"     # only these copies: the job reads every .mp4 there
mkdir -p "$FOLDER"
for i in $(seq -w 1 "$COPIES"); do
    [ -s "$FOLDER/copy$i.mp4" ] || cp "$IN" "$FOLDER/copy$i.mp4"
done

VENV="$WORK/ray-venv"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import av, numpy, ray.data' 2>/dev/null; then
    python3 -m venv --system-site-packages "$VENV"
    "$VENV/bin/pip" install -q av==18.1.0 numpy || die "could not install PyAV 18.1.0"
fi
PY="$VENV/bin/python"
export MEDIAKIT_LIBRARY="$MK_BIN/libmediakit.so" PYTHONPATH="$REPO/Bindings/python" RAY_USAGE_STATS_ENABLED=0

SCRIPT="$WORK/bench_ray.py"
cat >"$SCRIPT" <<'PY'
import glob, os, statistics, sys, time
import numpy as np
folder, cpus, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
paths = sorted(glob.glob(os.path.join(folder, "*.mp4")))

def plain(sel=paths):
    import mediakit
    n = 0
    for p in sel:
        with mediakit.open(p) as d:
            v = next(t for t in d.tracks if t.media_type == "video")
            d.select([v])
            with mediakit.DecodeSession(v, threads=1) as dec:
                for f in dec.frames(d.packets(v)):
                    a = f.to_numpy("nv12"); n += 1
    return n

if len(sys.argv) > 4:                            # one process of plain_processes: its share of the files
    print(plain(paths[int(sys.argv[4])::cpus]))
    sys.exit(0)

def plain_processes():
    """The plain loop in `cpus` processes side by side, each over its share of the files: what
    the machine's cores give at this moment without Ray (the best Ray could do)."""
    import subprocess
    procs = [subprocess.Popen([sys.executable, __file__, folder, str(cpus), "1", str(i)], stdout=subprocess.PIPE, text=True)
             for i in range(cpus)]
    return sum(int(p.communicate()[0]) for p in procs)

def pyav_rows(row):
    import av
    with av.open(row["path"]) as c:              # a generator: frames stream out as decoded
        for f in c.decode(video=0):
            yield {"path": row["path"], "pts": f.pts, "frame": f.to_ndarray(format="nv12")}

def count_frames(batch):
    # The consumer a real job has in the workers (a model, an encoder, a writer): here it
    # only looks at the arrays. Ray fuses it with the read, so frames stay in the worker.
    return {"n": np.array([batch["frame"].shape[0] if batch["frame"].dtype != object else len(batch["frame"])])}

def in_workers(ds):
    return int(sum(r["n"] for r in ds.map_batches(count_frames, batch_size=None, batch_format="numpy").take_all()))

def to_driver(ds):
    n = 0
    for batch in ds.iter_batches(batch_size=64, batch_format="numpy"):
        n += len(batch["pts"])
    return n

def mediakit_ds(paths=paths):
    import mediakit.ray as mkray
    return mkray.read_media(paths, "frames", pixel_format="nv12")

def pyav_ds(paths=paths):
    import ray.data
    return ray.data.from_items([{"path": p} for p in paths], override_num_blocks=len(paths)).flat_map(pyav_rows)

def tree_cpu():
    """CPU seconds used so far by this process and every process under it (Ray's raylet and
    workers), from /proc: a measure of the work that other load on the machine does not skew."""
    parent, ticks = {}, {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(pid)] = int(fields[1])
        ticks[int(pid)] = sum(int(x) for x in fields[11:15])    # utime stime cutime cstime
    mine, total = {os.getpid()}, 0
    changed = True
    while changed:
        changed = False
        for pid, ppid in parent.items():
            if ppid in mine and pid not in mine:
                mine.add(pid); changed = True
    return sum(ticks.get(p, 0) for p in mine) / os.sysconf("SC_CLK_TCK")

import ray, ray.data
import mediakit.ray as mkray
t0 = time.perf_counter()
ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, runtime_env=mkray.runtime_env())
ray.data.DataContext.get_current().enable_progress_bars = False
startup = time.perf_counter() - t0
# Each job once, untimed, on one file per worker: starts the workers and warms them (imports,
# the decoder plugin loaded, each process's block memory), as the first minutes of a long job would.
in_workers(mediakit_ds(paths[:cpus]))
in_workers(pyav_ds(paths[:cpus]))
c0 = tree_cpu(); time.sleep(10); idle = (tree_cpu() - c0) / 10     # Ray's own processes, idle
jobs = {"plain": plain, "plain_processes": plain_processes,
        "ray_mediakit": lambda: in_workers(mediakit_ds()), "ray_pyav": lambda: in_workers(pyav_ds()),
        "ray_mediakit_driver": lambda: to_driver(mediakit_ds())}
# The jobs take turns, run after run, so that a change in the shared machine's speed during the
# benchmark falls on all of them; the ratios are taken within each run, then their median.
times, cpu_s, frames = {k: [] for k in jobs}, {k: [] for k in jobs}, {}
for _ in range(runs):
    for k, fn in jobs.items():
        c0 = tree_cpu(); t0 = time.perf_counter(); frames[k] = fn()
        times[k].append(time.perf_counter() - t0); cpu_s[k].append(tree_cpu() - c0)
for k in jobs:
    print(k, f"{statistics.median(times[k]):.2f}", frames[k], f"{statistics.median(cpu_s[k]):.1f}")
def ratio(a, b):
    return statistics.median(x / y for x, y in zip(times[a], times[b]))
for k in jobs:
    print("ratio_" + k, f"{ratio('plain', k):.2f}x", 0, 0)
print("vs_pyav", f"{ratio('ray_pyav', 'ray_mediakit'):.2f}x", 0, 0)
print("vs_processes", f"{ratio('plain_processes', 'ray_mediakit'):.2f}x", 0, 0)
print("runs_speedup", ", ".join(f"{x / y:.2f}x" for x, y in zip(times["plain"], times["ray_mediakit"])).replace(" ", ""), 0, 0)
print("startup", f"{startup:.2f}", 0, 0)
print("idle", f"{idle:.3f}", 0, 0)
PY

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
note "decoding $COPIES copies of $IN, $RUNS runs of five jobs (load before: $LOAD_BEFORE) ..."
declare -A T N C
while read -r k t n c; do T[$k]=$t; N[$k]=$n; C[$k]=$c; done < <("$PY" "$SCRIPT" "$FOLDER" "$CPUS" "$RUNS" 2>"$WORK/bench_ray.log" \
    || die "the benchmark failed (see $WORK/bench_ray.log)")
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
[ -n "${N[plain]:-}" ] && [ "${N[plain]}" = "${N[ray_mediakit]}" ] && [ "${N[plain]}" = "${N[ray_pyav]}" ] \
        && [ "${N[plain]}" = "${N[ray_mediakit_driver]}" ] && [ "${N[plain]}" = "${N[plain_processes]}" ] \
    || die "frame counts differ (or a run failed, see $WORK/bench_ray.log): plain ${N[plain]:-}, Ray mediakit ${N[ray_mediakit]:-}, Ray PyAV ${N[ray_pyav]:-}"

fps() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.0f", n / t }'; }
SECTION=$(mktemp)
trap 'rm -f "$SECTION"' EXIT
SPEEDUP=${T[ratio_ray_mediakit]}
{
    echo '<!-- bench_ray.sh:begin -->'
    echo "## Ray: decoding a folder to frames (scripts/bench_ray.sh, $(date -u +%Y-%m-%d))"
    echo
    echo "Input: $COPIES copies of \`$IN\` (${N[plain]} frames in all). Machine: $(nproc) cores ($CPU), shared:"
    echo "load average $LOAD_BEFORE before the run, $LOAD_AFTER after (a load above the core count means other"
    echo "work competed for the cores, so the speed-up below understates the one on an idle machine). Ray $("$PY" -c 'import ray; print(ray.__version__)'),"
    echo "local cluster of $CPUS CPUs (started in ${T[startup]} s, not counted; each job ran once untimed on one file per worker"
    echo "first, to start and warm the workers). $RUNS run(s), the jobs taking turns in each; wall seconds in the driver and"
    echo "CPU seconds: the median of the runs; \"against the plain loop\": the median of the runs' own ratios; revision $REV."
    echo
    echo '| job | wall s | frames/s | against the plain loop | CPU s (all its processes) | CPU ms / frame | the same without Ray idle |'
    echo '|---|---:|---:|---:|---:|---:|---:|'
    row() {
        local idle=${T[idle]}     # Ray runs (idle, or its jobs) through every job, the plain loops' too
        echo "| $1 | ${T[$2]} | $(fps "${N[$2]}" "${T[$2]}") | ${T[ratio_$2]} | ${C[$2]} | $(awk -v c="${C[$2]}" -v n="${N[$2]}" 'BEGIN { printf "%.1f", 1000 * c / n }') | $(awk -v c="${C[$2]}" -v n="${N[$2]}" -v i="$idle" -v t="${T[$2]}" 'BEGIN { printf "%.1f", 1000 * (c - i * t) / n }') |"
    }
    row "plain loop, one process (mediakit, 1 decoder thread)" plain
    row "the plain loop in $CPUS processes side by side, each over its share of the files (no Ray)" plain_processes
    row "mediakit.ray.read_media(paths, \"frames\"), $CPUS Ray workers" ray_mediakit
    row "PyAV 18.1.0 in Ray (flat_map, PyAV's defaults), $CPUS Ray workers" ray_pyav
    row "mediakit.ray, every frame pulled into the driver (iter_batches)" ray_mediakit_driver
    echo
    echo "Targets: near-linear speed-up on $CPUS cores (mediakit in Ray against the plain loop: $SPEEDUP, runs ${T[runs_speedup]};"
    echo "$(awk -v r="${SPEEDUP%x}" -v c="$CPUS" 'BEGIN { print (r >= 0.8 * c) ? "met, >= 80% of linear" : "missed, < 80% of linear" }'));"
    echo "faster than the PyAV job: mediakit ${T[vs_pyav]} as fast ($(awk -v r="${T[vs_pyav]%x}" 'BEGIN { print (r > 1) ? "met" : "missed" }'))."
    echo "The plain loop in $CPUS processes shows what the cores give at that moment without Ray (a shared machine's"
    echo "cores do not always give twice one core); the Ray job ran at ${T[vs_processes]} their speed."
    echo "The first two Ray jobs end in a map_batches in the workers (fused with the read: the"
    echo "frames, NV12 numpy arrays, stay where they were decoded, as a model or encoder would take them); the last"
    echo "row pulls every frame through Ray's object store into the one driver process, which shares the cores."
    echo "CPU s: user + system time of the driver and every process under it (raylet, workers) during the job,"
    echo "from /proc; unlike wall time it does not depend on what else the machine runs. Ray's own processes"
    echo "(GCS, raylet, agents) use ${T[idle]} CPU s per second when idle (measured over 10 s before the jobs; Ray is"
    echo "up, idle, during the plain loops too); the last column takes that out."
    echo '<!-- bench_ray.sh:end -->'
} >"$SECTION"
cat "$SECTION"
write_section "$MD" bench_ray.sh "$SECTION"
