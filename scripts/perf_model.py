#!/usr/bin/python3
"""The performance model's table (benchmarks/perf_model/README.md): per catalogue model, the
operations of one RK4 step counted by build/benchmarks/op_count, the fused FP64 kernel's
resources from benchmarks/kernel_resources.tsv, and what they predict on an H100 SXM5.

    /usr/bin/python3 scripts/perf_model.py [--build build]

The assumptions are constants below, each with its source; the README explains the reasoning.
"""
import argparse
import math
import pathlib
import re
import subprocess

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
# Local-memory traffic per right-hand side, as a multiple of the stack frame: written once and
# read once (a lower bound: a frame's arrays are often read many times).
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


def fused_resources() -> dict:
    """Registers and stack of the fused FP64 kernel per model type name."""
    table = {}
    for line in (ROOT / "benchmarks/kernel_resources.tsv").read_text().splitlines():
        m = re.match(r"(\d+)\t(\d+)\t(\d+)\t(\d+)\tvoid ukes::cuda::system_kernel"
                     r"<ukes::FusedSystem<ukes::models::(\w+), double> ?>", line)
        if m:
            table[m.group(5)] = tuple(int(x) for x in m.groups()[:4])
    return table


def type_names() -> dict:
    text = (ROOT / "kernels/models/catalogue.hpp").read_text()
    return dict(re.findall(r"\n  X\(([a-z_]+), ([A-Za-z]+)\)", text))


def resident_warps(registers: int) -> int:
    per_warp = math.ceil(registers * 32 / 256) * 256  # allocation unit: 256 registers per warp
    return min(MAX_WARPS, REGISTERS // per_warp // 4 * 4)  # whole warps on each of 4 partitions


def row(model: str, c: dict, resources: tuple) -> str:
    step = c["rk4"]
    issue = sum(COST[k] * v for k, v in step.items())
    fused = issue - min(step["add"], step["mul"])  # every mul merged with an add into an FMA
    peak = SMS * FP64_LANES * CLOCK_HZ  # FP64 lane-operations per second
    registers, stack, spill_st, spill_ld = resources
    warps = resident_warps(registers)
    busy = min(1.0, (warps / 4) * ASSUMED_ILP * ISSUE_INTERVAL / FP64_LATENCY)
    resident_stack = warps * 32 * stack
    level = "L1" if resident_stack <= L1_BYTES else "L2" if resident_stack <= L2_SHARE else "HBM"
    traffic = STAGES * FRAME_PASSES * stack
    memory_bound = BANDWIDTH[level] / traffic if traffic else math.inf
    predicted = min(busy * peak / issue, memory_bound)
    memory = f"{memory_bound / 1e9:.2f}" if traffic else "-"
    return (f"| `{model}` | {c['n']}, {c['rows']} | {issue:,} | {fused:,} | "
            f"{registers} / {stack} B / {spill_st + spill_ld} B | {warps} | "
            f"{resident_stack / 1024:,.0f} KB in {level} | {peak / issue / 1e9:.1f} | "
            f"{busy:.0%} | {memory} | **{predicted / 1e9:.2f}** |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=str(ROOT / "build"))
    args = parser.parse_args()
    counts, resources, types = op_counts(pathlib.Path(args.build)), fused_resources(), type_names()
    print("| model | n, rows | FP64 issue slots per RK4 step | with FMA | fused FP64 kernel: "
          "registers / stack / spills | resident warps per SM | stack of resident threads | "
          "FP64 bound, G steps/s | pipe busy | local-memory bound, G steps/s | "
          "predicted, G steps/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for model, c in counts.items():
        print(row(model, c, resources[types[model]]))


if __name__ == "__main__":
    main()
