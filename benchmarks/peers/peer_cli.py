"""What every Python peer shares: its command line, reading the driver's initial conditions,
writing final positions, and the one JSON line it prints (or the reason it is unavailable)."""

import argparse
import json
import statistics
import sys


def parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--model", required=True)
    p.add_argument("--q0", required=True, help="initial positions, .npy [N][n]")
    p.add_argument("--qd0", required=True, help="initial velocities, .npy [N][n]")
    p.add_argument("--count", type=int, default=0, help="use the first COUNT systems (0: all)")
    p.add_argument("--steps", type=int, default=200, help="rk4: steps of dt")
    p.add_argument("--dt", type=float, default=1e-3)
    p.add_argument("--t-end", type=float, default=0.0, help="adaptive: end time (0: steps * dt)")
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--atol", type=float, default=1e-8)
    p.add_argument("--repetitions", type=int, default=3, help="timed runs; the median counts")
    p.add_argument("--out", default="", help="final positions, .npy [N][n]")
    return p


def unavailable(impl, backend, model, reason):
    """A peer that cannot run here says why, on stdout, and exits 0: the comparison goes on."""
    print(json.dumps({"impl": impl, "backend": backend, "model": model, "unavailable": reason}))
    sys.stdout.flush()
    sys.exit(0)


def load_initial_conditions(args, n):
    import numpy as np

    q0, qd0 = np.load(args.q0), np.load(args.qd0)
    if q0.shape != qd0.shape or q0.ndim != 2 or q0.shape[1] != n:
        raise SystemExit(f"initial conditions of shape {q0.shape}, {qd0.shape} do not fit n = {n}")
    if args.count > 0:
        q0, qd0 = q0[: args.count], qd0[: args.count]
    return np.ascontiguousarray(q0), np.ascontiguousarray(qd0)


def report(args, impl, backend, method, count, walls, system_steps, q_final, **extra):
    import numpy as np

    if args.out:
        np.save(args.out, np.ascontiguousarray(np.asarray(q_final, dtype=np.float64)))
    wall = statistics.median(walls)
    line = {
        "impl": impl,
        "backend": backend,
        "model": args.model,
        "n_systems": count,
        "method": method,
        "precision": "fp64",
        "system_steps": system_steps,
        "steps_per_system": system_steps / count,
        "wall_s": wall,
        "wall_s_all": walls,
        "systems_per_s": count / wall,
        "system_steps_per_s": system_steps / wall,
        "final_q": args.out,
    }
    line.update(extra)
    print(json.dumps(line))
    sys.stdout.flush()
