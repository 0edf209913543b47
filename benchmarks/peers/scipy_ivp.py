"""Peer: the workflow of the seed papers' MATLAB scripts in SciPy: one system at a time,
scipy.integrate.solve_ivp(method="RK45") (Dormand-Prince 5(4), adaptive, the ode45 pair) with the
right-hand side calling numpy.linalg.pinv. One CPU thread. Compared with our DOPRI5 at the same
rtol, atol and end time: the same pair and step-size control (error norm, safety factor 0.9,
factors clamped to [0.2, 10]), so the time is the time to the same solution."""

import time

import peer_cli
import uk_models


def main():
    args = peer_cli.parser(__doc__).parse_args()
    try:
        from scipy.integrate import solve_ivp
    except ImportError as e:
        peer_cli.unavailable("scipy_solve_ivp", "cpu", args.model, f"scipy not importable: {e}")
    import numpy as np

    model = uk_models.MODELS[args.model]
    q0, qd0 = peer_cli.load_initial_conditions(args, model.n)
    f = uk_models.first_order_rhs(uk_models.numpy_ops(), model)
    t_end = args.t_end if args.t_end > 0 else args.steps * args.dt
    count = q0.shape[0]
    walls = []
    for _ in range(max(1, args.repetitions)):
        q_final = np.empty_like(q0)
        steps = 0
        start = time.perf_counter()
        for i in range(count):
            y0 = np.concatenate([q0[i], qd0[i]])
            sol = solve_ivp(f, (0.0, t_end), y0, method="RK45", rtol=args.rtol, atol=args.atol)
            if sol.status != 0:
                raise SystemExit(f"solve_ivp failed on system {i}: {sol.message}")
            q_final[i] = sol.y[: model.n, -1]
            steps += len(sol.t) - 1
        walls.append(time.perf_counter() - start)
    peer_cli.report(args, "scipy_solve_ivp", "cpu", "dopri5", count, walls, steps, q_final,
                    threads=1, t_end=t_end, rtol=args.rtol, atol=args.atol)


if __name__ == "__main__":
    main()
