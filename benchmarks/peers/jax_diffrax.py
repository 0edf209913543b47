"""GPU peer: JAX + Diffrax in float64, jax.vmap of one system's diffeqsolve over the ensemble:
Dopri5 with a PID step-size controller at our rtol / atol (dt0 chosen by Diffrax), the right-hand
side calling jnp.linalg.pinv. Compile time is measured apart and not counted. Compared with our
DOPRI5 at the same tolerances and end time. Without a GPU JAX backend it is unavailable
(--allow-cpu runs it on JAX's CPU backend, to test this code where there is no GPU)."""

import time

import peer_cli
import uk_models


def main():
    p = peer_cli.parser(__doc__)
    p.add_argument("--allow-cpu", action="store_true")
    args = p.parse_args()
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        import diffrax
    except ImportError as e:
        peer_cli.unavailable("jax_diffrax_dopri5", "gpu", args.model,
                             f"jax / diffrax not importable: {e}")
    platform = jax.default_backend()
    if platform != "gpu" and not args.allow_cpu:
        peer_cli.unavailable("jax_diffrax_dopri5", "gpu", args.model,
                             f"jax {jax.__version__} has no GPU backend (default: {platform})")
    import numpy as np

    model = uk_models.MODELS[args.model]
    q0, qd0 = peer_cli.load_initial_conditions(args, model.n)
    f = uk_models.first_order_rhs(uk_models.Ops("jax", jnp), model)
    t_end = args.t_end if args.t_end > 0 else args.steps * args.dt
    term = diffrax.ODETerm(lambda t, y, _args: f(t, y))
    solver = diffrax.Dopri5()
    controller = diffrax.PIDController(rtol=args.rtol, atol=args.atol)

    def solve_one(y0):
        sol = diffrax.diffeqsolve(term, solver, t0=0.0, t1=t_end, dt0=None, y0=y0,
                                  stepsize_controller=controller, saveat=diffrax.SaveAt(t1=True),
                                  max_steps=1_000_000)
        return sol.ys[-1], sol.stats["num_accepted_steps"]

    solve_all = jax.jit(jax.vmap(solve_one))
    x0 = jnp.asarray(np.concatenate([q0, qd0], axis=1))
    start = time.perf_counter()
    compiled = solve_all.lower(x0).compile()
    compile_s = time.perf_counter() - start
    walls = []
    for _ in range(max(1, args.repetitions)):
        start = time.perf_counter()
        y, accepted = compiled(x0)
        y.block_until_ready()
        walls.append(time.perf_counter() - start)
    count = q0.shape[0]
    peer_cli.report(args, "jax_diffrax_dopri5", "gpu" if platform == "gpu" else "cpu", "dopri5",
                    count, walls, int(np.asarray(accepted).sum()), np.asarray(y)[:, : model.n],
                    t_end=t_end, rtol=args.rtol, atol=args.atol, compile_s=compile_s,
                    jax=jax.__version__, diffrax=getattr(diffrax, "__version__", "?"))


if __name__ == "__main__":
    main()
