#!/usr/bin/python3
"""The CPU in lanes as one table (benchmarks/README.md, "The CPU in lanes"): every lane
instruction set this CPU has (UKES_CPU_ISA, docs/CPU_LANES.md), our per-system path and the
independent Boost.Odeint + Eigen peer on the same systems, each in turn within a run so that a busy
moment of a shared machine falls on all of them; the median of the runs; every final state checked
(each lane variant against the per-system path within docs/CPU_LANES.md's 1e-12, the peer against
it within compare.py's RK4 bound); and each variant's share of the FP64 peak that fp64_peak
measures in that variant's own vectors, from op_count's counted operations a step.

    /usr/bin/python3 benchmarks/lanes_table.py --build build-ci
        [--systems 10000] [--threads 2] [--runs 5] [--models scara duffing four_bar swarm]

scripts/gpu-session.sh runs it on a lent device machine's CPU. Prints the table in Markdown and
exits 1, after it, when a final state disagrees or a run failed.
"""

import argparse
import os
import shutil
import statistics
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare  # noqa: E402  (its runners, checks, peak and operation counts)

# Lane variants from the widest, with their vector widths in doubles (docs/CPU_LANES.md).
WIDTHS = {"avx512": 8, "avx2": 4, "sse2": 2}
NAMES = {"avx512": "AVX-512", "avx2": "AVX2", "sse2": "SSE2"}
LANES_BOUND = 1e-12  # lanes against the per-system path on RK4 (docs/CPU_LANES.md, "Guarantees")


def lane_isas():
    """The lane instruction sets this CPU runs, widest first (as the process's own dispatch:
    AVX2 needs FMA too; every x86-64 CPU has SSE2)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    flags = next((ln.split(":", 1)[1].split() for ln in text.splitlines()
                  if ln.startswith("flags")), [])  # fmt: skip
    if "sse2" not in flags:
        return []
    isas = ["sse2"]
    if "avx2" in flags and "fma" in flags:
        isas.insert(0, "avx2")
    if "avx512f" in flags:
        isas.insert(0, "avx512")
    return isas


def peak_of(build, isa, threads):
    """fp64_peak in `isa`'s vectors: the best of three, as a shared machine's busy moments only
    lower it."""
    exe = Path(build) / "benchmarks" / "fp64_peak"
    if not exe.exists():
        return None
    lines = []
    for _ in range(3):
        lines += compare.run_json_lines([exe, "--threads", threads], env={"UKES_CPU_ISA": isa})
    values = [x["fp64_peak_ops_per_s"] for x in lines if "fp64_peak_ops_per_s" in x]
    return max(values) if values else None


def measure(runner, model, args, isas):
    """args.runs rounds of every variant and the peer; returns each one's median rate and its last
    line (with its check)."""
    rates, last = {}, {}
    for _ in range(args.runs):
        for v in isas + ["scalar"]:
            work = runner.work / v  # each variant's final states apart
            work.mkdir(exist_ok=True)
            cmd = [runner.driver, "--model", model, "--n", args.systems, "--method", "rk4",
                   "--device", "cpu", "--threads", args.threads, "--repetitions", 1,
                   "--dump-dir", work]  # fmt: skip
            last[v] = runner.driver_lines(cmd, model, "rk4", "cpu", env={"UKES_CPU_ISA": v})[0]
            if "error" not in last[v]:
                rates.setdefault(v, []).append(last[v]["system_steps_per_s"])
        if runner.odeint.exists() and "error" not in last["scalar"]:
            last["peer"] = run_peer(runner, model, args, last["scalar"])
            if last["peer"].get("check_ok"):
                rates.setdefault("peer", []).append(last["peer"]["system_steps_per_s"])
    for v in isas:
        if "error" not in last[v] and "error" not in last["scalar"]:
            compare.check_against(last[v], last["scalar"], LANES_BOUND)
    return {v: statistics.median(x) for v, x in rates.items()}, last


def run_peer(runner, model, args, reference):
    """The peer from the initial states the per-system run wrote, checked against its finals."""
    q0, qd0 = compare.ic_paths(runner.work / "scalar", model, args.systems)
    cmd = [runner.odeint, "--model", model, "--q0", q0, "--qd0", qd0, "--steps",
           compare.RK4_STEPS, "--dt", compare.RK4_DT, "--threads", args.threads,
           "--repetitions", 1, "--pinv", "cod", "--out", runner.work / f"peer_{model}.npy"]
    line = compare.run_json_lines(cmd)[0]
    if "error" not in line:
        compare.check_against(line, reference, compare.BOUND_RK4)
    return line


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "-"


def table(results, isas, peaks, ops):
    heads = [f"lanes, {NAMES[v]} ({WIDTHS[v]})" for v in isas] + ["per system", "Eigen peer"]
    heads += [f"{NAMES[v]} / peer" for v in isas[:2]]
    if len(isas) > 1:
        heads.append(f"{NAMES[isas[0]]} / {NAMES[isas[1]]}")
    heads += [f"{NAMES[v]}, % of FP64 peak" for v in isas[:2]]
    rows = ["| model | " + " | ".join(heads) + " |", "|" + " --- |" * (len(heads) + 1)]
    for model, (med, _) in results.items():
        cells = [compare.fmt_rate(med[v]) + "/s" if v in med else "-"
                 for v in isas + ["scalar", "peer"]]  # fmt: skip
        cells += [ratio(med.get(v), med.get("peer")) for v in isas[:2]]
        if len(isas) > 1:
            cells.append(ratio(med.get(isas[0]), med.get(isas[1])))
        for v in isas[:2]:
            share = med.get(v, 0) * ops.get(model, 0) / peaks[v] if peaks.get(v) else 0
            cells.append(f"{100 * share:.1f}%" if share else "-")
        rows.append(f"| `{model}` | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def checks(results, isas):
    """One line per model: each check's largest relative difference; whether all held and every
    run succeeded."""
    lines, ok = [], True
    for model, (_, last) in results.items():
        cells = []
        for v in isas + ["peer"]:
            line = last.get(v)
            if line is None:
                continue
            if "check_rel_diff" in line:
                ok = ok and line["check_ok"]
                cells.append(f"{NAMES.get(v, v)} {line['check_rel_diff']:.1e}"
                             f"{'' if line['check_ok'] else ' (OVER THE BOUND)'}")
            else:
                ok = False
                cells.append(f"{NAMES.get(v, v)}: {line.get('error', 'not checked')}")
        ok = ok and "error" not in last["scalar"]
        lines.append(f"- `{model}`: " + "; ".join(cells))
    return "\n".join(lines), ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default="build-ci", help="Release build with the benchmarks")
    ap.add_argument("--systems", type=int, default=10_000)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--models", nargs="+", default=compare.MODELS)
    args = ap.parse_args()
    isas = lane_isas()
    if not isas:
        sys.exit("lanes_table: this CPU has no lane instruction set (docs/CPU_LANES.md)")
    work = Path(args.build) / "lanes_table"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    runner = compare.Runner(args, work)
    if not runner.driver.exists():
        sys.exit(f"lanes_table: {runner.driver} is missing: build the benchmarks first")
    peaks = {v: peak_of(args.build, v, args.threads) for v in isas}
    ops = compare.rk4_step_operations(args.build)
    results = {m: measure(runner, m, args, isas) for m in args.models}
    info = compare.machine()
    print(f"{info['cpu']}; {info['date']}; commit {info['commit']}")
    print(f"{args.systems} systems, RK4, dt = {compare.RK4_DT}, {compare.RK4_STEPS} steps, "
          f"{args.threads} threads, median of {args.runs} run{'s' if args.runs > 1 else ''}, each "
          "variant and the peer in turn")
    print()
    print(table(results, isas, peaks, ops))
    print()
    print("FP64 peak (fp64_peak, best of 3): " + ", ".join(
        f"{NAMES[v]} {peaks[v] / 1e9:.1f} G operations/s" if peaks[v] else f"{NAMES[v]} -"
        for v in isas))  # fmt: skip
    text, ok = checks(results, isas)
    print("Final states, max |dq| / (1 + |q|) against the per-system path's:")
    print(text)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
