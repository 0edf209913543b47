#!/usr/bin/python3
"""Registers, stack and spills of every CUDA kernel, from the ptxas reports a build keeps.

Each CUDA compile of a build leaves <object>.ptxas (scripts/nvcc-resources.sh): ptxas's
--resource-usage lines. This script gathers the figures of every function ptxas reports: the
kernels (entry functions) and the device functions they call that nvcc did not inline (ptxas
gives no register count for those: it reads 0). A kernel pays for what it calls, so its row
counts its cumulative stack (its frame and its callees') and the spill bytes of its callees (those
ptxas lists under the kernel) with its own. A row is a function of one unit (the object's name,
cuda_scara for generated/cuda_scara.cu.o): the same device function, a template instance or
CUDA's own, is compiled in many units, with other options in some (CMakeLists.txt: the buckets
compiled for speed of compilation), and each copy keeps its own budget. It

  --write FILE   writes them as the committed table (benchmarks/kernel_resources.tsv);
  --check FILE   compares them with that table and exits 1 when a kernel uses more registers,
                 stack or spill bytes than the table allows (bytes: its row plus SLACK of it),
                 or is missing from it;
  (neither)      prints them, the largest register counts first.

The table is the budget: lower it when a kernel improves, raise it only with a reason in the
commit. Run from anywhere:  scripts/kernel_resources.py --build build --check \
benchmarks/kernel_resources.tsv
"""
import argparse
import pathlib
import re
import subprocess
import sys

FIELDS = ("registers", "stack", "spill_stores", "spill_loads")
ENTRY = re.compile(r"Compiling entry function '(\S+)'")
PROPERTIES = re.compile(r"Function properties for (\S+)")
STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers")
CUMULATIVE = re.compile(r"(\d+) bytes cumulative stack size")
# ptxas is repeatable on one machine, yet the project's CI, with the same nvcc and source, gave two
# heavily spilling swarm kernels figures that no compile here gives: 0.3% more spill bytes (FP32,
# 8,988 -> 9,016), then 1.0% more stack (FP64, 12,736 -> 12,864), while here the same PTX gives the
# same figures with an empty or a large environment, without address randomization and under a
# memory limit. So a row's byte figures may be exceeded by 5% of themselves. What the check must
# catch stays exact: a row at 0 stays 0 (no new spills), and registers are exact.
SLACK = 0.05


def parse_report(text):
    """{mangled function: {field: value}} of one .ptxas file, each kernel's row with its callees'
    spills and its cumulative stack."""
    functions, callees, entry, current = {}, {}, None, None
    for line in text.splitlines():
        if m := ENTRY.search(line):
            entry = m.group(1)
            callees[entry] = {}
        elif m := PROPERTIES.search(line):
            current = m.group(1)
            functions.setdefault(current, dict.fromkeys(FIELDS, 0))
        elif current and (m := STACK.search(line)):
            f = functions[current]
            f["stack"], f["spill_stores"], f["spill_loads"] = map(int, m.groups())
            if entry and current != entry:  # listed under the kernel that calls it
                callees[entry][current] = dict(f)
        elif current and (m := USED.search(line)):
            functions[current]["registers"] = int(m.group(1))
            if c := CUMULATIVE.search(line):
                functions[current]["stack"] = max(functions[current]["stack"], int(c.group(1)))
    for kernel, called in callees.items():
        for figures in called.values():
            for f in ("spill_stores", "spill_loads"):
                functions[kernel][f] += figures[f]
    return functions


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                         check=True).stdout.splitlines()
    return dict(zip(names, out))


def unit_of(report):
    """generated/cuda_scara.cu.o.ptxas -> cuda_scara"""
    return report.name.split(".", 1)[0]


def gather(build):
    """{(unit, demangled function): figures}"""
    reports = sorted(pathlib.Path(build).rglob("*.ptxas"))
    if not reports:
        sys.exit(f"kernel_resources: no *.ptxas reports under {build} (a CUDA build keeps them)")
    mangled = {}
    for r in reports:
        unit = unit_of(r)
        for name, figures in parse_report(r.read_text()).items():
            if (unit, name) in mangled:
                sys.exit(f"kernel_resources: two reports of unit {unit} under {build}")
            mangled[(unit, name)] = figures
    names = demangle(sorted({name for _, name in mangled}))
    return {(unit, names[name]): v for (unit, name), v in mangled.items()}


def read_table(path):
    table = {}
    for line in pathlib.Path(path).read_text().splitlines():
        if not line or line.startswith("#") or line.startswith("registers"):
            continue
        *values, unit, name = line.split("\t")
        table[(unit, name)] = dict(zip(FIELDS, map(int, values)))
    return table


def write_table(path, kernels):
    with open(path, "w") as f:
        f.write("# Per-kernel budget, checked by scripts/kernel_resources.py (ctest KernelResources)."
                "\n# Bytes; registers per thread. Regenerate with --write after a CUDA build.\n")
        f.write("\t".join(FIELDS + ("unit", "kernel")) + "\n")
        for key in sorted(kernels):
            f.write("\t".join(str(kernels[key][x]) for x in FIELDS) + "\t" + "\t".join(key) + "\n")


def check(kernels, table):
    problems = []
    for (unit, name), figures in sorted(kernels.items()):
        allowed = table.get((unit, name))
        if allowed is None:
            problems.append(f"not in the table (run --write and commit it): {unit}: {name}")
            continue
        for f in FIELDS:
            if figures[f] > allowed[f] + (0 if f == "registers" else int(allowed[f] * SLACK)):
                problems.append(f"{f} {allowed[f]} -> {figures[f]}: {unit}: {name}")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", required=True, help="a build directory with the CUDA module")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--write", metavar="FILE")
    g.add_argument("--check", metavar="FILE")
    args = p.parse_args()
    kernels = gather(args.build)
    if args.write:
        write_table(args.write, kernels)
        print(f"kernel_resources: {len(kernels)} kernels written to {args.write}")
        return 0
    if args.check:
        problems = check(kernels, read_table(args.check))
        for line in problems:
            print("kernel_resources:", line)
        print(f"kernel_resources: {len(kernels)} kernels, {len(problems)} over the table")
        return 1 if problems else 0
    for (unit, name), v in sorted(kernels.items(), key=lambda kv: -kv[1]["registers"]):
        print("\t".join(str(v[f]) for f in FIELDS) + f"\t{unit}\t{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
