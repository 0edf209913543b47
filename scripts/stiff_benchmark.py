#!/usr/bin/python3
"""The stiff study of client/examples/friction_ring_stiff.json, by the rosenbrock method and by
DOPRI5, on the CPU and on a GPU module (benchmarks/README.md, "Stiff systems"): wall time, steps
and each system's error at t_end against SciPy's Radau on the reduced equation
(scripts/friction_ring_reference.py), for every system of the sweep.

    /usr/bin/python3 scripts/stiff_benchmark.py BUILD [--gpu-module PATH] [--threads N]

--gpu-module runs the GPU rows on that module (build/libukes_host_gpu.so: the host emulation, whose
times are the CPU's; on a machine with a GPU, leave it out to use the build's CUDA module).
"""
import argparse
import functools
import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from friction_ring_reference import reduced_solution  # noqa: E402

SOURCE = pathlib.Path(__file__).resolve().parents[1]
SPEC = SOURCE / "client/examples/friction_ring_stiff.json"


def run(build, spec, device, threads, module, work):
    spec = dict(spec, device=device)
    path = work / f"spec_{device}_{spec['integrator']['method']}.json"
    out = work / f"results_{device}_{spec['integrator']['method']}.json"
    path.write_text(json.dumps(spec))
    env = dict(os.environ)
    if module:
        env.update(UKES_CUDA_MODULE=str(module), UKES_DISABLE_GPU="0")
    if device == "cpu":
        env["UKES_DISABLE_GPU"] = "1"
    subprocess.run([str(pathlib.Path(build) / "ukes"), "run", str(path), "--threads",
                    str(threads), "--out", str(out)], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())


@functools.lru_cache(maxsize=None)
def reference_angle(eps, mu, t_end):
    th, _, _ = reduced_solution(eps, mu, np.array([0.0, t_end]), rtol=1e-11, atol=1e-13)
    return th[-1]


def errors(result, t_end):
    """|th(t_end) - th_Radau(t_end)| of every system."""
    worst = []
    for system in result["systems"]:
        eps, mu = system["sample"]["params.eps"], system["sample"]["params.mu"]
        x, y = system["q"]
        worst.append(abs(math.atan2(y, x) - reference_angle(eps, mu, t_end)))
    return worst


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--gpu-module")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    spec = json.loads(SPEC.read_text())
    t_end = spec["integrator"]["t_end"]
    devices = ["cpu", "gpu"]
    print("| device | method | wall (s) | steps per system, mean (max) | rejected | "
          "max error of th(t_end) |")
    print("| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as work:
        for device in devices:
            for method in ("rosenbrock", "dopri5"):
                s = dict(spec, integrator=dict(spec["integrator"], method=method))
                result = run(args.build, s, device, args.threads, args.gpu_module,
                             pathlib.Path(work))
                steps = [sys_["steps"] for sys_ in result["systems"]]
                rejected = sum(sys_["rejected"] for sys_ in result["systems"])
                bad = [sys_["status"] for sys_ in result["systems"] if sys_["status"] != "ok"]
                print(f"| {result['backend']} | {method} | {result['elapsed_s']:.2f} | "
                      f"{np.mean(steps):.0f} ({max(steps)}) | {rejected} | "
                      f"{max(errors(result, t_end)):.1e} |" + (f" failed: {bad}" if bad else ""))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
