#!/usr/bin/python3
"""The peer comparison: runs our ensemble driver and every peer on the same systems, checks each
peer's final states against ours before its time counts, and writes benchmarks/RESULTS.md (tables
of ratios ours / peer per backend, machine, date, commit) and benchmarks/throughput.png.

Run by scripts/bench.sh (which builds what it needs); by hand:
    /usr/bin/python3 benchmarks/compare.py --build build-bench [--quick]

Peers that cannot run here (no GPU, a library missing) are listed as unavailable with the reason.
A peer whose final states disagree with ours beyond the bound gets a MISMATCH row, no ratio, and
the command exits 1 after writing the files.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PEERS = HERE / "peers"
MODELS = ["scara", "four_bar", "swarm", "duffing"]

# The same problem for everyone.
RK4_STEPS, RK4_DT = 200, 1e-3  # t_end = 0.2 s
ADAPTIVE_T_END, ADAPTIVE_RTOL, ADAPTIVE_ATOL = 0.2, 1e-8, 1e-8
# Final-state agreement required before a peer's time counts: max over systems of
# |q_peer - q_ours|_inf / (1 + |q_ours|_inf). Fixed-step RK4 at the same dt differs only by
# rounding; two adaptive Dormand-Prince codes at rtol = atol = 1e-8 by their error control.
BOUND_RK4, BOUND_ADAPTIVE = 1e-9, 1e-6
PEER_TIMEOUT_S = 900


def plan(args):
    """Sizes per run. Big batches get one repetition (their runs last seconds), small ones three;
    the single-threaded Python peers one (they last longest)."""
    if args.quick:
        p = {
            "cpu_n": [100], "numpy_n": [100], "scipy_count": 3, "dopri_n": 100,
            "gpu_n": [10_000, 100_000], "repetitions": lambda n: 1,
        }  # fmt: skip
    else:
        p = {
            "cpu_n": [100, 1000, 10_000], "numpy_n": [100, 1000], "scipy_count": 20,
            "dopri_n": 1000, "gpu_n": [10_000, 100_000, 1_000_000],
            "repetitions": lambda n: 3 if n <= 1000 else 1,
        }  # fmt: skip
    if args.cpu_n:
        p["cpu_n"] = args.cpu_n
        p["repetitions"] = lambda n: args.repetitions or (3 if n <= 1000 else 1)
    return p


# ---------------------------------------------------------------- running things


def log(msg):
    print(f"[compare {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run_json_lines(cmd, timeout=PEER_TIMEOUT_S, env=None):
    """Runs a command that prints JSON lines; returns them, or one line saying why it failed.
    env: variables set for it on top of ours."""
    log(" ".join([f"{k}={v}" for k, v in (env or {}).items()] + [str(c) for c in cmd]))
    try:
        p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, **env} if env else None)
    except subprocess.TimeoutExpired:
        return [{"error": f"timed out after {timeout} s"}]
    except OSError as e:
        return [{"error": f"could not start: {e}"}]
    lines = [json.loads(s) for s in p.stdout.splitlines() if s.startswith("{")]
    if p.returncode != 0 or not lines:
        tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
        return [{"error": f"exit {p.returncode}: {tail}"}]
    return lines


def python_for(module):
    """The first interpreter that can import `module`: this one, then python3 on PATH."""
    candidates = [sys.executable]
    other = shutil.which("python3")
    if other and os.path.realpath(other) != os.path.realpath(sys.executable):
        candidates.append(other)
    for exe in candidates:
        ok = subprocess.run([exe, "-c", f"import {module}"], capture_output=True).returncode == 0
        if ok:
            return exe
    return sys.executable  # the peer itself then reports why it is unavailable


def ic_paths(work, model, n):
    return work / f"ic_{model}_{n}_q0.npy", work / f"ic_{model}_{n}_qd0.npy"


class Runner:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.driver = Path(args.build) / "benchmarks" / "ensemble_driver"
        self.odeint = Path(args.build) / "benchmarks" / "peer_odeint_eigen"
        self.records = []

    def record(self, line, **extra):
        line.update(extra)
        self.records.append(line)
        return line

    def ours(self, model, counts, method, device, threads, reps):
        cmd = [self.driver, "--model", model, "--n", ",".join(map(str, counts)), "--method", method,
               "--device", device, "--threads", threads, "--repetitions", reps,
               "--dump-dir", self.work]  # fmt: skip
        return [self.record(x, role="ours") for x in self.driver_lines(cmd, model, method, device)]

    def ours_per_system(self, model, n, threads, reps, reference):
        """Our CPU backend without its SIMD lanes (UKES_CPU_ISA=scalar, docs/CPU_LANES.md), as a
        peer of the lanes: what the lanes bring, in the same run."""
        work = self.work / "per_system"
        work.mkdir(exist_ok=True)
        cmd = [self.driver, "--model", model, "--n", n, "--method", "rk4", "--device", "cpu",
               "--threads", threads, "--repetitions", reps, "--dump-dir", work,
               "--steps", RK4_STEPS, "--dt", RK4_DT]  # fmt: skip
        lines = self.driver_lines(cmd, model, "rk4", "cpu", env={"UKES_CPU_ISA": "scalar"})
        line = lines[0]
        line.update(impl="ukes_per_system", role="peer")
        if "error" not in line:
            check_against(line, reference, BOUND_RK4)
        return self.record(line)

    def driver_lines(self, cmd, model, method, device, env=None):
        if method == "rk4":
            cmd += ["--steps", RK4_STEPS, "--dt", RK4_DT]
        else:
            cmd += ["--t-end", ADAPTIVE_T_END, "--rtol", ADAPTIVE_RTOL, "--atol", ADAPTIVE_ATOL]
        out = []
        for line in run_json_lines(cmd, env=env):
            line.setdefault("impl", "ukes")
            line.setdefault("backend", device)
            line.setdefault("model", model)
            line.setdefault("method", method)
            out.append(line)
        return out

    def peer(self, cmd, model, n, impl, backend, method, reference):
        """Runs one peer on the driver's initial conditions of (model, n) and checks it."""
        q0, qd0 = ic_paths(self.work, model, n)
        out = self.work / f"final_{impl}_{model}_{n}_q.npy"
        cmd = cmd + ["--model", model, "--q0", q0, "--qd0", qd0, "--out", out]
        line = run_json_lines(cmd)[0]
        line.setdefault("impl", impl)
        line.setdefault("backend", backend)
        line.setdefault("model", model)
        line.setdefault("method", method)
        line.setdefault("n_systems", n)
        line["role"] = "peer"
        if "error" not in line and "unavailable" not in line:
            check_against(line, reference, BOUND_RK4 if method == "rk4" else BOUND_ADAPTIVE)
        if "error" in line:
            log(f"PEER FAILED {impl} {model} N={n}: {line['error']}")
        return self.record(line)


def check_against(line, reference, bound):
    """Compares the peer's final q with ours (reference: our driver's JSON line)."""
    import numpy as np

    if reference is None or "final_q" not in reference:
        line["error"] = "no reference run of ours to check against"
        return
    ours = np.load(reference["final_q"])
    theirs = np.load(line["final_q"])
    count = theirs.shape[0]
    ours = ours[:count]  # a peer may run the first systems of the batch only (SciPy)
    if theirs.shape != ours.shape:
        line["error"] = f"final q of shape {theirs.shape}, ours {ours.shape}"
        return
    scale = 1.0 + np.abs(ours).max(axis=1)
    rel = float((np.abs(theirs - ours).max(axis=1) / scale).max()) if count else 0.0
    line["check_rel_diff"] = rel if np.isfinite(rel) else float("inf")
    line["check_bound"] = bound
    line["check_ok"] = bool(np.isfinite(rel) and rel <= bound)
    if not line["check_ok"]:
        log(f"MISMATCH {line['impl']} {line['model']} N={count}: final q differs from ours by "
            f"{rel:.3e} (relative), bound {bound:.0e}: its time does not count")


# ---------------------------------------------------------------- the runs


def cpu_runs(r, p, threads):
    reps = p["repetitions"]
    for model in MODELS:
        ours_t = {}
        for n in p["cpu_n"]:
            for x in r.ours(model, [n], "rk4", "cpu", threads, reps(n)):
                ours_t[x.get("n_systems")] = x
        # One thread too where single-threaded peers run: their equal-thread ratio.
        for n in p["numpy_n"]:
            r.ours(model, [n], "rk4", "cpu", 1, reps(n))
        for n in p["cpu_n"]:
            if n not in ours_t:
                continue
            r.ours_per_system(model, n, threads, reps(n), ours_t[n])
            if r.odeint.exists():
                cmd = [r.odeint, "--steps", RK4_STEPS, "--dt", RK4_DT, "--threads", threads,
                       "--repetitions", reps(n), "--pinv", "cod"]  # fmt: skip
                r.peer(cmd, model, n, "odeint_eigen_cod", "cpu", "rk4", ours_t[n])
            else:
                r.record({"impl": "odeint_eigen_cod", "backend": "cpu", "model": model,
                          "method": "rk4", "n_systems": n, "role": "peer",
                          "unavailable": f"{r.odeint} not built (Boost or Eigen missing)"})
        # Eigen's other pseudoinverse at one size (what the choice of decomposition costs).
        n = p["numpy_n"][-1]
        if r.odeint.exists() and n in ours_t:
            cmd = [r.odeint, "--steps", RK4_STEPS, "--dt", RK4_DT, "--threads", threads,
                   "--repetitions", reps(n), "--pinv", "svd"]  # fmt: skip
            r.peer(cmd, model, n, "odeint_eigen_svd", "cpu", "rk4", ours_t[n])
        for n in p["numpy_n"]:
            if n in ours_t:
                cmd = [sys.executable, PEERS / "numpy_rk4.py", "--steps", RK4_STEPS, "--dt", RK4_DT,
                       "--repetitions", 1]  # fmt: skip
                r.peer(cmd, model, n, "numpy_batched_rk4", "cpu", "rk4", ours_t[n])
        # SciPy: our DOPRI5 at the same tolerances; the first K systems of the batch for SciPy.
        dn = p["dopri_n"]
        ours_d = r.ours(model, [dn], "dopri5", "cpu", threads, reps(dn))
        r.ours(model, [dn], "dopri5", "cpu", 1, reps(dn))
        ref = ours_d[0] if ours_d and "final_q" in ours_d[0] else None
        cmd = [sys.executable, PEERS / "scipy_ivp.py", "--t-end", ADAPTIVE_T_END,
               "--rtol", ADAPTIVE_RTOL, "--atol", ADAPTIVE_ATOL, "--repetitions", 1,
               "--count", p["scipy_count"]]  # fmt: skip
        r.peer(cmd, model, dn, "scipy_solve_ivp", "cpu", "dopri5", ref)


def gpu_runs(r, p, gpu):
    reps = p["repetitions"]
    if not gpu.get("available"):
        reason = gpu.get("reason", "no GPU")
        for impl, method in [("ukes", "rk4"), ("torch_batched_rk4", "rk4"),
                             ("ukes", "dopri5"), ("jax_diffrax_dopri5", "dopri5")]:
            for model in MODELS:
                r.record({"impl": impl, "backend": "gpu", "model": model, "method": method,
                          "role": "ours" if impl == "ukes" else "peer",
                          "unavailable": f"no GPU here: {reason}"})  # fmt: skip
        return
    torch_py, jax_py = python_for("torch"), python_for("jax")
    for model in MODELS:
        ours = {x["n_systems"]: x for x in r.ours(model, p["gpu_n"], "rk4", "gpu", 0, reps(0))
                if "n_systems" in x}  # fmt: skip
        for n in p["gpu_n"]:
            cmd = [torch_py, PEERS / "torch_rk4.py", "--steps", RK4_STEPS, "--dt", RK4_DT,
                   "--repetitions", reps(0)]  # fmt: skip
            r.peer(cmd, model, n, "torch_batched_rk4", "gpu", "rk4", ours.get(n))
        oursd = {x["n_systems"]: x for x in r.ours(model, p["gpu_n"], "dopri5", "gpu", 0, reps(0))
                 if "n_systems" in x}  # fmt: skip
        for n in p["gpu_n"]:
            cmd = [jax_py, PEERS / "jax_diffrax.py", "--t-end", ADAPTIVE_T_END,
                   "--rtol", ADAPTIVE_RTOL, "--atol", ADAPTIVE_ATOL, "--repetitions", reps(0)]
            r.peer(cmd, model, n, "jax_diffrax_dopri5", "gpu", "dopri5", oursd.get(n))


# ---------------------------------------------------------------- the report


def sh(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO).stdout.strip()
    except OSError:
        return ""


def machine():
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 2**20:.0f} GiB memory"
    except (OSError, ValueError, IndexError):
        pass
    commit = sh(["git", "rev-parse", "--short", "HEAD"]) or "unknown"
    dirty = bool(sh(["git", "status", "--porcelain", "--untracked-files=no"]))
    versions = [sh(["c++", "--version"]).splitlines()[0] if sh(["c++", "--version"]) else "",
                f"Python {platform.python_version()}"]  # fmt: skip
    for mod in ("numpy", "scipy"):
        try:
            versions.append(f"{mod} {__import__(mod).__version__}")
        except ImportError:
            versions.append(f"{mod} missing")
    return {
        "cpu": f"{cpu}, {os.cpu_count()} hardware threads (nproc){mem}",
        "os": f"{platform.system()} {platform.release()}",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit + (" (dirty: uncommitted changes in tracked files)" if dirty else ""),
        "versions": ", ".join(v for v in versions if v),
    }


def fmt_rate(x):
    if x is None:
        return "-"
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x:.3g}"


def find(records, **keys):
    for x in records:
        if all(x.get(k) == v for k, v in keys.items()) and "system_steps_per_s" in x:
            return x
    return None


def peer_status(peer):
    if "unavailable" in peer:
        return f"unavailable: {peer['unavailable']}"
    if "error" in peer:
        return f"FAILED: {peer['error']}"
    if not peer.get("check_ok"):
        return (f"**MISMATCH**: {peer.get('check_rel_diff', float('nan')):.2e} > "
                f"{peer.get('check_bound', 0):.0e}")  # fmt: skip
    return f"{peer['check_rel_diff']:.1e} <= {peer['check_bound']:.0e}"


def ratio_cells(ours_rate, peer, key="system_steps_per_s"):
    if ours_rate is None or peer is None or not peer.get("check_ok") or key not in peer:
        return "-"
    return f"**{ours_rate / peer[key]:.3g}**"


def cpu_table(records, threads):
    rows = ["| model | N | method | ours: threads | ours | peer, threads | peer | ours / peer | "
            "ours / peer, equal threads | check: max rel. diff of final q |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    peers = [x for x in records if x.get("role") == "peer" and x.get("backend", "cpu") == "cpu"]
    for peer in peers:
        model, method, n = peer["model"], peer["method"], peer.get("n_systems")
        key = "system_steps_per_s" if method == "rk4" else "systems_per_s"
        unit = "steps/s" if method == "rk4" else "systems/s"
        # SciPy runs the first K systems of our N-system batch: compare with ours at that N.
        ref_n = n if method == "rk4" else peer_reference_n(records, peer)
        ours_t = find(records, role="ours", backend="cpu", model=model, method=method,
                      n_systems=ref_n, threads=threads)  # fmt: skip
        ours_1 = find(records, role="ours", backend="cpu", model=model, method=method,
                      n_systems=ref_n, threads=1)  # fmt: skip
        pthreads = peer.get("threads", "-")
        equal = ours_1 if pthreads == 1 else ours_t
        rate = lambda x: fmt_rate(x.get(key)) + " " + unit if x and key in x else "-"  # noqa: E731
        n_cell = f"{n}" if method == "rk4" else f"{peer.get('n_systems', '?')} of {ref_n}"
        rows.append(
            f"| `{model}` | {n_cell} | {method_cell(peer)} | {threads} | {rate(ours_t)} | "
            f"`{peer['impl']}`, {pthreads} | {rate(peer)} | "
            f"{ratio_cells(ours_t.get(key) if ours_t else None, peer, key)} | "
            f"{ratio_cells(equal.get(key) if equal else None, peer, key)} | {peer_status(peer)} |"
        )
    return "\n".join(rows)


def peer_reference_n(records, peer):
    path = str(peer.get("final_q", ""))
    for x in records:
        if x.get("role") == "ours" and x.get("method") == peer["method"] and \
                x.get("model") == peer["model"] and "n_systems" in x and \
                f"_{peer['model']}_{x['n_systems']}_" in path:
            return x["n_systems"]
    return peer.get("n_systems")


def method_cell(x):
    if x.get("method") == "rk4":
        return f"RK4, dt = {RK4_DT:g}, {RK4_STEPS} steps"
    return f"DOPRI5, rtol = atol = {ADAPTIVE_RTOL:g}, t_end = {ADAPTIVE_T_END:g}"


def gpu_table(records):
    gpu = [x for x in records if x.get("backend") == "gpu"]
    reasons = {x["unavailable"] for x in gpu if "unavailable" in x}
    if gpu and all("unavailable" in x for x in gpu) and len(reasons) == 1:
        peers = sorted({x["impl"] for x in gpu if x.get("role") == "peer"})
        return (f"Not measured: {reasons.pop()}. Unavailable here: ours on the GPU and the GPU "
                f"peers ({', '.join(f'`{p}`' for p in peers)}) for {', '.join(MODELS)}.")
    rows = ["| model | N | method | ours | peer | peer rate | ours / peer | check |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for peer in [x for x in gpu if x.get("role") == "peer"]:
        model, method, n = peer["model"], peer["method"], peer.get("n_systems")
        key = "system_steps_per_s" if method == "rk4" else "systems_per_s"
        ours = find(records, role="ours", backend="gpu", model=model, method=method, n_systems=n)
        unav = next((x for x in records if x.get("role") == "ours" and x.get("backend") == "gpu"
                     and x.get("model") == model and "unavailable" in x), None)  # fmt: skip
        ours_cell = (fmt_rate(ours[key]) if ours else
                     f"unavailable: {unav['unavailable']}" if unav else "-")  # fmt: skip
        rows.append(
            f"| `{model}` | {n if n else '-'} | {method_cell(peer)} | {ours_cell} | "
            f"`{peer['impl']}` | {fmt_rate(peer.get(key)) if key in peer else '-'} | "
            f"{ratio_cells(ours.get(key) if ours else None, peer, key)} | {peer_status(peer)} |"
        )
    return "\n".join(rows)


# The CPU lanes' targets over Boost.Odeint + Eigen at equal threads (docs/CPU_LANES.md).
EIGEN_TARGET = {"scara": 4.0, "duffing": 4.0, "four_bar": 3.0, "swarm": 3.0}


def rk4_step_operations(build):
    """Counted arithmetic operations of one RK4 step per model (benchmarks/perf_model/op_count:
    add, mul, div, sqrt and transcendental calls, each one); {} when op_count is not built."""
    exe = Path(build) / "benchmarks" / "op_count"
    if not exe.exists():
        return {}
    ops = {}
    for line in sh([str(exe), "--tsv"]).splitlines()[1:]:
        fields = line.split("\t")
        rk4 = next((f for f in fields if f.startswith("rk4:")), None)
        if rk4:
            ops[fields[0]] = sum(int(v) for v in rk4[4:].split(",")[:5])
    return ops


def fp64_peak(threads, build):
    """This CPU's FP64 peak in operations/s on `threads` cores, and how it was found: measured by
    benchmarks/perf_model/fp64_peak (multiply-add chains in the lanes' vectors, at the clock the
    cores run under load), else reckoned as two FMA units of the widest vector (16 operations a
    cycle with AVX2 + FMA, 32 with AVX-512) at the clock /proc/cpuinfo lists, which is lower."""
    exe = Path(build) / "benchmarks" / "fp64_peak"
    measured = sh([str(exe), "--threads", str(threads)]) if exe.exists() else ""
    if measured:
        m = json.loads(measured)
        return m["fp64_peak_ops_per_s"], (
            f"measured in this run: {threads} threads of {m['isa']} multiply-add chains, "
            f"{m['ops_per_cycle_per_core']} operations a cycle at {m['effective_ghz']:.2f} GHz")
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None, ""
    flags = next((ln.split(":", 1)[1].split() for ln in text.splitlines()
                  if ln.startswith("flags")), [])  # fmt: skip
    mhz = next((float(ln.split(":", 1)[1]) for ln in text.splitlines()
                if ln.startswith("cpu MHz")), None)  # fmt: skip
    if mhz is None:
        return None, ""
    per_cycle = 32 if "avx512f" in flags else 16 if "fma" in flags else 4
    peak = threads * mhz * 1e6 * per_cycle
    return peak, (f"reckoned: {threads} cores x {mhz / 1e3:.2f} GHz (listed) x {per_cycle} FP64 "
                  "operations a cycle")


def targets(records, threads, p, build):
    lines = []
    n = p["cpu_n"][-1]
    ops = rk4_step_operations(build)
    peak, peak_how = fp64_peak(threads, build)
    for model in MODELS:
        ours = find(records, role="ours", backend="cpu", model=model, method="rk4", n_systems=n,
                    threads=threads)  # fmt: skip
        od = find(records, role="peer", impl="odeint_eigen_cod", model=model, n_systems=n)
        scalar = find(records, role="peer", impl="ukes_per_system", model=model, n_systems=n)
        sp = next((x for x in records if x.get("impl") == "scipy_solve_ivp"
                   and x.get("model") == model), None)  # fmt: skip
        ours_d = sp and find(records, role="ours", backend="cpu", model=model, method="dopri5",
                             n_systems=peer_reference_n(records, sp), threads=threads)
        cells = []
        if ours and od and od.get("check_ok"):
            r = ours["system_steps_per_s"] / od["system_steps_per_s"]
            goal = EIGEN_TARGET.get(model, 2.0)
            cells.append(f"{r:.2f}x Boost.Odeint+Eigen at {threads} threads, N = {n} "
                         f"({'meets' if r >= goal else 'short of'} {goal:g}x)")
        else:
            cells.append("no valid Boost.Odeint+Eigen ratio")
        if ours and scalar and scalar.get("check_ok"):
            r = ours["system_steps_per_s"] / scalar["system_steps_per_s"]
            cells.append(f"{r:.2f}x our per-system path")
        if ours and peak and model in ops:
            share = ours["system_steps_per_s"] * ops[model] / peak
            cells.append(f"{100 * share:.1f}% of FP64 peak ({ops[model]} counted operations a "
                         f"step; peak {peak / 1e9:.1f} G/s: {peak_how})")
        if ours_d and sp and sp.get("check_ok"):
            r = ours_d["systems_per_s"] / sp["systems_per_s"]
            cells.append(f"{r:.0f}x SciPy ({'meets' if r >= 1000 else 'short of'} 1000x)")
        else:
            cells.append("no valid SciPy ratio")
        lines.append(f"- `{model}`: " + "; ".join(cells))
    gpu_rows = [x for x in records if x.get("backend") == "gpu" and x.get("role") == "peer"
                and x.get("check_ok") and x.get("model") in ("scara", "four_bar")]  # fmt: skip
    if not gpu_rows:
        lines.append("- GPU (100x JAX+Diffrax and 100x PyTorch for `scara`, `four_bar` at N = 10^5 "
                     "and 10^6): not measured in this run (see the GPU table for why).")
    else:
        for peer in gpu_rows:
            key = "system_steps_per_s" if peer["method"] == "rk4" else "systems_per_s"
            ours = find(records, role="ours", backend="gpu", model=peer["model"],
                        method=peer["method"], n_systems=peer["n_systems"])  # fmt: skip
            if ours and peer["n_systems"] >= 100_000:
                r = ours[key] / peer[key]
                lines.append(f"- GPU `{peer['model']}` N = {peer['n_systems']}: {r:.3g}x "
                             f"`{peer['impl']}` ({'meets' if r >= 100 else 'short of'} 100x)")
    return "\n".join(lines)


def plot(records, path, threads):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return f"not drawn: matplotlib is not importable ({e})"
    fig, axes = plt.subplots(2, 2, figsize=(11, 8.5))
    styles = {"ukes": "o-", "odeint_eigen_cod": "s--", "numpy_batched_rk4": "^:",
              "torch_batched_rk4": "v-.", "odeint_eigen_svd": "x"}  # fmt: skip
    for ax, model in zip(axes.flat, MODELS):
        series = {}
        for x in records:
            if x.get("model") != model or x.get("method") != "rk4" or "system_steps_per_s" not in x:
                continue
            if x.get("role") == "peer" and not x.get("check_ok"):
                continue
            label = f"{x['impl']} ({x.get('backend', 'cpu')}"
            label += f", {x['threads']} thr)" if x.get("backend") == "cpu" and "threads" in x else ")"
            series.setdefault(label, []).append((x["n_systems"], x["system_steps_per_s"]))
        for label, pts in sorted(series.items()):
            pts.sort()
            impl = label.split(" ")[0]
            ax.plot([a for a, _ in pts], [b for _, b in pts], styles.get(impl, "o-"), label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{model}: RK4, dt = {RK4_DT:g}, FP64")
        ax.set_xlabel("N (systems)")
        ax.set_ylabel("system-steps / s")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("ukes vs peers: throughput against ensemble size (same run)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return None


def write_markdown(path, records, info, threads, p, quick, png_note, raw_path, build):
    cpu_unav = [x for x in records if x.get("backend", "cpu") == "cpu" and "unavailable" in x]
    md = [
        "# Peer comparison",
        "",
        "Written by `scripts/bench.sh`" + (" `--quick` (a smoke run: few sizes, one repetition)"
                                            if quick else "") + " (`benchmarks/compare.py`); do "
        "not edit by hand. Ratios are ours / peer, both measured in this run on this machine.",
        "",
        f"- Machine: {info['cpu']}; {info['os']}",
        f"- Date: {info['date']}; commit {info['commit']}",
        f"- Toolchain: {info['versions']}",
        f"- Raw measurements (JSON lines): `{raw_path}`",
        "",
        "## The problem",
        "",
        "- Models `scara` (n = 4, 4 position rows, Baumgarte 30 / 225), `four_bar` (n = 9, 8 rows),"
        " `swarm` (n = 10, 10 velocity rows, Baumgarte 5), `duffing` (n = 2, 1 rheonomic row), "
        "default parameters, FP64.",
        "- Initial conditions: the model's default state perturbed per system i by eps_i = 1e-3 "
        "frac(0.618... i): velocities scaled by 1 + eps_i (`scara`, `four_bar`: `four_bar` stays "
        "on its constraint set), both velocities + eps_i (`duffing`, keeps its rheonomic row), "
        "x1 + eps_i (`swarm`, at rest). Written once by `ensemble_driver` (.npy) and read by every"
        " peer, so all integrate the same systems.",
        f"- Fixed step: classical RK4, dt = {RK4_DT:g}, {RK4_STEPS} steps (t_end = "
        f"{RK4_DT * RK4_STEPS:g} s; the models' own t_end is far too long for SciPy). "
        "Throughput is system-steps/s = systems x accepted steps / wall time of the whole batch "
        "(threads started and joined inside the timing). Median of 3 runs for N <= 1000, one "
        "run above and for the Python peers (those runs last seconds to minutes).",
        f"- SciPy: `solve_ivp(method=\"RK45\")` is adaptive, so it is compared with our DOPRI5 at "
        f"the same pair and tolerances (rtol = atol = {ADAPTIVE_RTOL:g}, t_end = "
        f"{ADAPTIVE_T_END:g} s); both use Hairer's step control (RMS error norm, safety 0.9, "
        "factors in [0.2, 10]) but may take different steps, so the rate is **systems/s** (time to "
        "the same solution), not steps/s. SciPy is timed on the first K systems of our batch (it "
        "is slow), one repetition; its per-system rate is compared with ours on the whole batch.",
        "- Every peer's final q is checked against ours before its time counts: max over systems of"
        f" |q_peer - q_ours|_inf / (1 + |q_ours|_inf) <= {BOUND_RK4:g} for RK4 at the same dt, "
        f"<= {BOUND_ADAPTIVE:g} for the adaptive pairs. A mismatch gives no ratio.",
        "- Peers compute the same UK acceleration qdd = a + L^-T (A L^-T)^+ (b - A a) (Cholesky "
        "factor for M^1/2), their models written independently of ours (`benchmarks/peers/`): "
        "constraint rows in second-order form by hand, where ours derives them by automatic "
        "differentiation. Ours also computes per-step diagnostics (residuals, constraint force, "
        "inconsistency) that the peers skip.",
        "- Boost.Odeint + Eigen: `runge_kutta4` over `std::array`, fixed-size Eigen matrices, "
        "`LLT`, pseudoinverse by `CompleteOrthogonalDecomposition` (`_cod`; `JacobiSVD` as "
        f"`_svd` at N = {p['numpy_n'][-1]}), `std::thread`s pulling chunks of 16 systems, as ours does, same "
        "thread count. NumPy: one batch, batched `cholesky` / `inv` / `pinv`, one thread. SciPy: "
        "per-system loop, one thread; for these the last ratio column compares with ours on one "
        "thread.",
        "",
        f"## CPU ({threads} threads unless stated)",
        "",
        cpu_table(records, threads),
        "",
    ]
    if cpu_unav:
        md += [f"- `{x['impl']}` ({x['model']}): unavailable: {x['unavailable']}" for x in cpu_unav]
        md.append("")
    md += ["Ours alone (system-steps/s, RK4):", "", ours_table(records, p, threads), ""]
    md += ["## GPU", "", gpu_table(records), "",
           "GPU peers: PyTorch batched RK4 (`torch.linalg.pinv`, float64) against our RK4; JAX + "
           "Diffrax (`vmap` of `diffeqsolve`, `Dopri5`, `PIDController`, `jnp.linalg.pinv`, "
           "compile time excluded) against our DOPRI5 at the same tolerances.", ""]
    md += ["## Where we stand against the targets", "",
           "Targets: CPU at least 2x Boost.Odeint+Eigen at equal threads and 1000x SciPy; GPU at "
           "least 100x JAX+Diffrax and 100x PyTorch for `scara` and `four_bar` in FP64 at "
           "N = 10^5 and 10^6.", "", targets(records, threads, p, build), ""]
    md += ["## Plot", "",
           "![throughput](throughput.png)" if png_note is None else f"`throughput.png` {png_note}",
           ""]
    Path(path).write_text("\n".join(md))


def ours_table(records, p, threads):
    head = "| model | " + " | ".join(f"N = {n}, {t} thr" for n in p["cpu_n"] for t in (threads, 1))
    rows = [head + " |", "|" + " --- |" * (1 + 2 * len(p["cpu_n"]))]
    for model in MODELS:
        cells = []
        for n in p["cpu_n"]:
            for t in (threads, 1):
                x = find(records, role="ours", backend="cpu", model=model, method="rk4",
                         n_systems=n, threads=t)  # fmt: skip
                cells.append(fmt_rate(x["system_steps_per_s"]) if x else "-")
        rows.append(f"| `{model}` | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=str(REPO / "build-bench"), help="Release build directory")
    ap.add_argument("--quick", action="store_true", help="smoke run: few sizes, one repetition")
    ap.add_argument("--cpu-n", type=int, nargs="+", help="the CPU batch sizes ours, Boost.Odeint "
                    "+ Eigen and our per-system path run at (default: 100 1000 10000)")
    ap.add_argument("--repetitions", type=int, help="with --cpu-n: runs per measurement")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=str(HERE / "RESULTS.md"))
    ap.add_argument("--png", default=str(HERE / "throughput.png"))
    args = ap.parse_args()
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"  # the peers leave no __pycache__ in the tree
    p = plan(args)
    work = Path(args.build) / "compare"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    r = Runner(args, work)
    if not r.driver.exists():
        sys.exit(f"compare: {r.driver} is missing: build it first (scripts/bench.sh does)")
    listing = run_json_lines([r.driver, "--list"])[0]
    gpu = listing.get("backends", {}).get("gpu", {"available": False, "reason": "driver failed"})
    log(f"GPU: {'available: ' + gpu.get('name', '') if gpu.get('available') else gpu.get('reason')}")
    info = machine()  # before this run rewrites the tracked RESULTS.md and plot
    start = time.time()
    cpu_runs(r, p, args.threads)
    gpu_runs(r, p, gpu)
    raw = work / "raw.jsonl"
    raw.write_text("".join(json.dumps(x) + "\n" for x in r.records))
    png_note = plot(r.records, args.png, args.threads)
    write_markdown(args.out, r.records, info, args.threads, p, args.quick, png_note,
                   os.path.relpath(raw, REPO), args.build)
    log(f"wrote {args.out} and {args.png if png_note is None else '(no plot)'} "
        f"in {time.time() - start:.0f} s")
    bad = [x for x in r.records if x.get("role") == "peer" and "check_ok" in x and not x["check_ok"]]
    failed = [x for x in r.records if "error" in x]
    for x in bad + failed:
        log(f"NOT COUNTED: {x['impl']} {x['model']} N={x.get('n_systems')}: "
            f"{x.get('error') or 'final states differ from ours'}")
    sys.exit(1 if bad or failed else 0)


if __name__ == "__main__":
    main()
