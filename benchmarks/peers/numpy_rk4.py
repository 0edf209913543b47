"""Peer: vectorized NumPy, the whole ensemble as one batch: classical RK4 at a fixed step with
batched Cholesky, inverse and numpy.linalg.pinv over the (N, m, n) stack. One CPU thread (NumPy's
batched linalg loops over the stack in its own LAPACK-lite code)."""

import time

import peer_cli
import uk_models


def main():
    args = peer_cli.parser(__doc__).parse_args()
    import numpy as np

    model = uk_models.MODELS[args.model]
    q0, qd0 = peer_cli.load_initial_conditions(args, model.n)
    f = uk_models.first_order_rhs(uk_models.numpy_ops(), model)
    x0 = np.concatenate([q0, qd0], axis=1)
    walls = []
    for _ in range(max(1, args.repetitions)):
        start = time.perf_counter()
        x = uk_models.fixed_rk4(f, x0, args.dt, args.steps)
        walls.append(time.perf_counter() - start)
    count = q0.shape[0]
    peer_cli.report(args, "numpy_batched_rk4", "cpu", "rk4", count, walls, count * args.steps,
                    x[:, : model.n], threads=1, dt=args.dt)


if __name__ == "__main__":
    main()
