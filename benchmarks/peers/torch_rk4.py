"""GPU peer: PyTorch, the whole ensemble as one batch on the GPU in float64: classical RK4 at a
fixed step with batched torch.linalg.cholesky, inv and torch.linalg.pinv. Without CUDA it is
unavailable (--allow-cpu runs it on the CPU, to test this code where there is no GPU)."""

import time

import peer_cli
import uk_models


def main():
    p = peer_cli.parser(__doc__)
    p.add_argument("--allow-cpu", action="store_true")
    args = p.parse_args()
    try:
        import torch
    except ImportError as e:
        peer_cli.unavailable("torch_batched_rk4", "gpu", args.model, f"torch not importable: {e}")
    if torch.cuda.is_available():
        device = torch.device("cuda")
    elif args.allow_cpu:
        device = torch.device("cpu")
    else:
        peer_cli.unavailable("torch_batched_rk4", "gpu", args.model,
                             f"torch {torch.__version__} sees no CUDA device")
    model = uk_models.MODELS[args.model]
    q0, qd0 = peer_cli.load_initial_conditions(args, model.n)
    ops = uk_models.Ops("torch", torch, torch.float64, device)
    f = uk_models.first_order_rhs(ops, model)
    x0 = torch.cat([torch.from_numpy(q0), torch.from_numpy(qd0)], dim=1).to(device)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    with torch.no_grad():
        start = time.perf_counter()
        uk_models.fixed_rk4(f, x0, args.dt, 1)  # warm-up: kernels, cuSOLVER / MAGMA handles
        sync()
        warmup_s = time.perf_counter() - start
        walls = []
        for _ in range(max(1, args.repetitions)):
            sync()
            start = time.perf_counter()
            x = uk_models.fixed_rk4(f, x0, args.dt, args.steps)
            sync()
            walls.append(time.perf_counter() - start)
    count = q0.shape[0]
    backend = "gpu" if device.type == "cuda" else "cpu"
    extra = {"dt": args.dt, "warmup_s": warmup_s, "torch": torch.__version__}
    if device.type == "cuda":
        extra["device_name"] = torch.cuda.get_device_name(0)
    peer_cli.report(args, "torch_batched_rk4", backend, "rk4", count, walls, count * args.steps,
                    x[:, : model.n].cpu().numpy(), **extra)


if __name__ == "__main__":
    main()
