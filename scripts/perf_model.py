#!/usr/bin/python3
"""The performance model's tables (benchmarks/perf_model/README.md): per catalogue model, the
operations of one RK4 step counted by build/benchmarks/op_count, the FP64 RK4 kernels' resources
from benchmarks/kernel_resources.tsv, and what they predict on an H100 SXM5 for the fused kernel
and for the warp path.

    /usr/bin/python3 scripts/perf_model.py [--build build]           # the tables
    /usr/bin/python3 scripts/perf_model.py [--build build] --check   # the launch policy's premise

--check exits 1 unless the fused kernel is predicted ahead of the warp path for every catalogue
model: the premise of `auto` never choosing the warp path (kernels/backend/gpu/launch_policy.hpp).

The assumptions are constants below, each with its source; the README explains the reasoning.
"""
import argparse
import math
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

# H100 SXM5 (NVIDIA H100 Tensor Core GPU datasheet and architecture whitepaper): 132 SMs at a
# 1.98 GHz boost clock; per SM 64 FP64 lanes (4 partitions of 16), 65,536 32-bit registers, at
# most 64 resident warps, 256 KB of combined L1 and shared memory.
SMS, CLOCK_HZ, FP64_LANES, REGISTERS, MAX_WARPS, L1_BYTES = 132, 1.98e9, 64, 65536, 64, 256 << 10
# FP64 pipe issue slots per operation, the SASS sequences nvcc emits for sm_90: add, mul and
# compare one each (an FMA would merge a mul and an add: the "fused" bound below); division and
# square root a MUFU seed plus Newton-Raphson DFMAs (about 10); sin, cos, exp and friends a
# range reduction and a polynomial of about 40.
COST = {"add": 1, "mul": 1, "div": 10, "sqrt": 10, "transcendental": 40, "compare": 1}
# Dependent FP64 latency on Hopper (cycles) and the issue interval of one warp's FP64 instruction
# on a 16-lane partition: a partition stays busy when latency / interval independent FP64
# instructions are in flight, from its warps times the code's instruction-level parallelism.
FP64_LATENCY, ISSUE_INTERVAL = 8, 2
ASSUMED_ILP = 1.5  # a guess for scalar UK code: Cholesky and QR chains are mostly serial
# Where a thread's stack frame (local memory) lives, by the frames of all resident threads of an
# SM: in L1 (what the kernel's zero shared memory leaves of 256 KB), else in the SM's share of
# the 50 MB L2, else in HBM3. Bandwidths in bytes per second for the whole GPU: L1 128 B per
# clock per SM; L2 about 5.5 TB/s (microbenchmark figures; no datasheet number); HBM3 3.35 TB/s.
L2_SHARE = (50 << 20) // SMS
BANDWIDTH = {"L1": SMS * 128 * CLOCK_HZ, "L2": 5.5e12, "HBM": 3.35e12}
# Local-memory traffic per right-hand side. The fused kernel's loop evaluates the right-hand side at
# one place, so each spill instruction in the loop runs about once per evaluation: the traffic is
# the spill bytes ptxas reports (stores plus loads), or, where arrays rather than spills fill the
# frame, the frame written once and read once; the larger of the two (a lower bound either way:
# an array in the frame is often read many times).
FRAME_PASSES = 2
STAGES = 4  # RK4


def op_counts(build: pathlib.Path) -> dict:
    out = subprocess.run([build / "benchmarks/op_count", "--tsv"], check=True,
                         capture_output=True, text=True).stdout.splitlines()[1:]
    counts = {}
    for line in out:
        model, n, rows, *parts = line.split("\t")
        fields = {}
        for part in parts:
            what, numbers = part.split(":")
            fields[what] = dict(zip(COST, map(int, numbers.split(","))))
        counts[model] = {"n": int(n), "rows": int(rows), **fields}
    return counts


def kernel_resources(pattern: str) -> dict:
    """Registers, stack and spills per model type name of the kernels whose name matches
    `pattern` (one group: the type name) in the committed table."""
    table = {}
    for line in (ROOT / "benchmarks/kernel_resources.tsv").read_text().splitlines():
        m = re.match(r"(\d+)\t(\d+)\t(\d+)\t(\d+)\t[^\t]+\t" + pattern, line)
        if m:
            table[m.group(5)] = tuple(int(x) for x in m.groups()[:4])
    return table


def fused_resources() -> dict:
    """The plain fused FP64 RK4 kernel ((ukes::Method)0): runs without the step projection,
    control and events (the default)."""
    return kernel_resources(r"void ukes::cuda::system_kernel<ukes::FusedSystem<"
                            r"ukes::models::(\w+), double, \(ukes::Method\)0, false, false, "
                            r"false> ?>")


def warp_resources() -> dict:
    """The warp path's FP64 kernel."""
    return kernel_resources(r"void ukes::cuda::team_kernel<ukes::WarpSystem<ukes::models::(\w+), "
                            r"double> ?>")


def rhs_alone_resources(variant: str) -> dict:
    """One right-hand side alone (benchmarks/perf_model/rhs_alone.cu): `rhs_alone` or
    `rhs_alone_168_registers`."""
    return kernel_resources(r"void ukes::perf_model::" + variant +
                            r"<ukes::models::(\w+), double>")


def type_names() -> dict:
    text = (ROOT / "kernels/models/catalogue.hpp").read_text()
    return dict(re.findall(r"\n  X\(([a-z_]+), ([A-Za-z]+)\)", text))


def resident_warps(registers: int) -> int:
    per_warp = math.ceil(registers * 32 / 256) * 256  # allocation unit: 256 registers per warp
    return min(MAX_WARPS, REGISTERS // per_warp // 4 * 4)  # whole warps on each of 4 partitions


def issue_slots(c: dict) -> int:
    return sum(COST[k] * v for k, v in c["rk4"].items())


def pipe_busy(warps: int) -> float:
    return min(1.0, (warps / 4) * ASSUMED_ILP * ISSUE_INTERVAL / FP64_LATENCY)


def fused_prediction(c: dict, resources: tuple) -> dict:
    """System-steps/s of the fused kernel: the FP64 pipe or local memory, whichever binds."""
    issue = issue_slots(c)
    registers, stack, spill_st, spill_ld = resources
    warps = resident_warps(registers)
    busy = pipe_busy(warps)
    resident_stack = warps * 32 * stack
    level = "L1" if resident_stack <= L1_BYTES else "L2" if resident_stack <= L2_SHARE else "HBM"
    traffic = STAGES * max(FRAME_PASSES * stack, spill_st + spill_ld)
    memory_bound = BANDWIDTH[level] / traffic if traffic else math.inf
    pipe_bound = busy * SMS * FP64_LANES * CLOCK_HZ / issue
    return {"warps": warps, "busy": busy, "resident_stack": resident_stack, "level": level,
            "pipe": pipe_bound, "memory": memory_bound, "predicted": min(pipe_bound, memory_bound)}


def warp_prediction(c: dict, resources: tuple) -> dict:
    """System-steps/s of the warp path, one system per resident warp. Lane 0 runs the scalar work
    (counted as the whole step: the team factorizations spread only part of it over the lanes),
    and a warp instruction with one active lane still takes the partition's FP64 issue slot, so
    the pipe bound is the fused one's over 32 at the warp kernel's occupancy. Lane 0's local
    memory moves 8 bytes per access, one L1 wavefront each, about one wavefront per clock per SM."""
    issue = issue_slots(c)
    registers, stack, spill_st, spill_ld = resources
    warps = resident_warps(registers)
    pipe_bound = pipe_busy(warps) * SMS * FP64_LANES * CLOCK_HZ / issue / 32
    traffic = STAGES * max(FRAME_PASSES * stack, spill_st + spill_ld)
    memory_bound = SMS * CLOCK_HZ / (traffic / 8) if traffic else math.inf
    return {"warps": warps, "pipe": pipe_bound, "memory": memory_bound,
            "predicted": min(pipe_bound, memory_bound)}


def fused_row(model: str, c: dict, resources: tuple) -> str:
    issue = issue_slots(c)
    fused = issue - min(c["rk4"]["add"], c["rk4"]["mul"])  # every mul merged with an add (FMA)
    registers, stack, spill_st, spill_ld = resources
    f = fused_prediction(c, resources)
    memory = f"{f['memory'] / 1e9:.2f}" if math.isfinite(f["memory"]) else "-"
    return (f"| `{model}` | {c['n']}, {c['rows']} | {issue:,} | {fused:,} | "
            f"{registers} / {stack} B / {spill_st + spill_ld} B | {f['warps']} | "
            f"{f['resident_stack'] / 1024:,.0f} KB in {f['level']} | "
            f"{SMS * FP64_LANES * CLOCK_HZ / issue / 1e9:.1f} | {f['busy']:.0%} | {memory} | "
            f"**{f['predicted'] / 1e9:.2f}** |")


def path_row(model: str, c: dict, fused: tuple, warp: tuple) -> str:
    f, w = fused_prediction(c, fused), warp_prediction(c, warp)
    memory = f"{w['memory'] / 1e9:.3f}" if math.isfinite(w["memory"]) else "-"
    return (f"| `{model}` | {warp[0]} / {warp[1]} B / {warp[2] + warp[3]} B | {w['warps']} | "
            f"{w['pipe'] / 1e9:.3f} | {memory} | **{w['predicted'] / 1e9:.3f}** | "
            f"**{f['predicted'] / 1e9:.2f}** | {f['predicted'] / w['predicted']:,.0f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--check", action="store_true",
                        help="exit 1 unless the fused kernel is predicted ahead of the warp path")
    args = parser.parse_args()
    counts, types = op_counts(pathlib.Path(args.build)), type_names()
    fused, warp = fused_resources(), warp_resources()
    if args.check:
        losers = [m for m, c in counts.items()
                  if warp_prediction(c, warp[types[m]])["predicted"]
                  >= fused_prediction(c, fused[types[m]])["predicted"]]
        for m in losers:
            print(f"perf_model: the warp path is predicted ahead of the fused kernel for {m}: "
                  "kernels/backend/gpu/launch_policy.hpp's premise no longer holds")
        ahead = len(counts) - len(losers)
        print(f"perf_model: {len(counts)} models, fused kernel ahead for {ahead}")
        sys.exit(1 if losers else 0)
    print("| model | n, rows | FP64 issue slots per RK4 step | with FMA | fused FP64 kernel: "
          "registers / stack / spills | resident warps per SM | stack of resident threads | "
          "FP64 bound, G steps/s | pipe busy | local-memory bound, G steps/s | "
          "predicted, G steps/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for model, c in counts.items():
        print(fused_row(model, c, fused[types[model]]))
    print()
    print("| model | warp FP64 kernel: registers / stack / spills | systems per SM | "
          "FP64 bound, G steps/s | local-memory bound, G steps/s | warp path, G steps/s | "
          "fused kernel, G steps/s | fused / warp |")
    print("|---|---|---|---|---|---|---|---|")
    for model, c in counts.items():
        print(path_row(model, c, fused[types[model]], warp[types[model]]))
    print()
    alone, capped = rhs_alone_resources("rhs_alone"), rhs_alone_resources("rhs_alone_168_registers")
    print("| model | n, rows | one RHS alone: registers / stack / spills | held to 168 registers: "
          "stack / spills | fused RK4 kernel: registers / stack / spills |")
    print("|---|---|---|---|---|")
    for model, c in counts.items():
        a, h, f = alone[types[model]], capped[types[model]], fused[types[model]]
        print(f"| `{model}` | {c['n']}, {c['rows']} | {a[0]} / {a[1]} B / {a[2] + a[3]} B | "
              f"{h[1]} B / {h[2] + h[3]} B | {f[0]} / {f[1]} B / {f[2] + f[3]} B |")


if __name__ == "__main__":
    main()
