#!/usr/bin/env bash
# Wall time of one sweep run in-process, on one server, as shards over servers and over MPI ranks
# on this machine (docs/SCALING.md, "What it costs"): the best of 3 runs each (shared machines
# are noisy), every result checked equal to the in-process one; with --write, the table replaces
# the one in docs/SCALING.md.
# Usage: scripts/scaling.sh [build-dir] [--write]   (default build-dir: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
write="${2:-}"
cores="$(nproc)"
work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

cat > "$work/spec.json" <<'EOF'
{"model": "scara", "device": "cpu",
 "sweep": {"count": 10000, "seed": 1, "vary": {"q0[0]": {"normal": [0.0, 0.01]}}},
 "integrator": {"method": "rk4", "t_end": 1.0, "dt": 1e-3}, "output": {"samples": 2}}
EOF

# start_server NAME THREADS: a CPU server on a free port, its address in $work/NAME.address.
start_server() {
  "$build/ukes-server" --port 0 --port-file "$work/$1.port" --device cpu --threads "$2" \
    2> "$work/$1.log" &
  pids+=($!)
  for _ in $(seq 1 500); do
    [[ -s "$work/$1.port" ]] && break
    sleep 0.02
  done
  echo "127.0.0.1:$(cat "$work/$1.port")" > "$work/$1.address"
}
start_server all "$cores"
start_server a $((cores / 2 > 0 ? cores / 2 : 1))
start_server b $((cores / 2 > 0 ? cores / 2 : 1))

# run LABEL ARGS...: the best wall seconds of 3 runs of `$launch ukes run spec ARGS --out
# LABEL.json`, appended to the rows ($launch: an MPI launcher, or nothing).
rows=()
launch=()
run() {
  local label="$1"
  shift
  local start end times=""
  for _ in 1 2 3; do
    start="$(date +%s.%N)"
    UKES_DISABLE_GPU=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      "${launch[@]}" "$build/ukes" run "$work/spec.json" --out "$work/$label.json" "$@" \
      > /dev/null 2> "$work/$label.err"
    end="$(date +%s.%N)"
    times+="${times:+,}$start:$end"
  done
  rows+=("$label|$times")
}
run in-process --threads "$cores"
run one-server --server "$(cat "$work/all.address")"
run two-servers --server "$(cat "$work/a.address"),$(cat "$work/b.address")"
run two-servers-8-shards --server "$(cat "$work/a.address"),$(cat "$work/b.address")" --shards 8
if command -v mpirun > /dev/null; then
  launch=(mpirun --oversubscribe --bind-to none -n 1)
  run mpi-1-rank --threads "$cores"
  launch=(mpirun --oversubscribe --bind-to none -n 2)
  run mpi-2-ranks --threads $((cores / 2 > 0 ? cores / 2 : 1))
fi

/usr/bin/python3 - "$work" "$cores" "$write" "${rows[@]}" <<'EOF'
import json, pathlib, re, sys
work, cores, write, rows = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
def systems(label):
    return json.loads((work / f"{label}.json").read_text())["systems"]
reference = systems("in-process")
what = {
    "in-process": f"`ukes run` in-process, {cores} threads",
    "one-server": f"one server, {cores} threads per job",
    "two-servers": "two servers of half the threads each, one shard each",
    "two-servers-8-shards": "the same two servers, 8 shards",
    "mpi-1-rank": f"`mpirun -n 1 ukes run`, {cores} threads",
    "mpi-2-ranks": "`mpirun -n 2 ukes run`, half the threads per rank",
}
base = None
lines = ["| run | wall s (best of 3) | vs in-process | results |",
         "| --- | ---: | ---: | --- |"]
for row in rows:
    label, times = row.split("|")
    seconds = min(float(end) - float(start)
                  for start, end in (t.split(":") for t in times.split(",")))
    base = base or seconds
    same = systems(label) == reference
    lines.append(f"| {what[label]} | {seconds:.2f} | {seconds / base:.2f}x | "
                 f"{'identical' if same else 'DIFFERENT'} |")
    if not same:
        sys.exit(f"scaling: {label}'s results differ from the in-process run's")
table = "\n".join(lines)
print(table)
if write == "--write":
    doc = pathlib.Path("docs/SCALING.md")
    text = doc.read_text()
    text = re.sub(r"(<!-- scaling:begin -->\n).*?(<!-- scaling:end -->)",
                  lambda m: m.group(1) + table + "\n" + m.group(2), text, flags=re.S)
    doc.write_text(text)
EOF
