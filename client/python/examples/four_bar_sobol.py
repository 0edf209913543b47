#!/usr/bin/python3
"""Four-bar sensitivity: a Sobol-sequence sweep over the bar masses and the crank torque of the
grounded four-bar (docs/MODELS.md sec. 9), then first-order sensitivity indices of two outputs
(the crank angle at t_end, the largest constraint force) estimated from the one sample by
binning: S_i = Var(E[Y | X_i]) / Var(Y), each input cut into equally filled bins.

    /usr/bin/python3 client/python/examples/four_bar_sobol.py [--server HOST:PORT] [--count N]
"""
import argparse

import numpy as np

from _path import SERVER  # makes `import ukes` work from a checkout
import ukes

VARY = {"m1": [0.8, 1.2], "m2": [2.4, 3.6], "m3": [1.6, 2.4], "tau": [-1.0, 1.0]}


def first_order_indices(x: np.ndarray, y: np.ndarray, bins: int) -> float:
    """Var(E[y | x]) / Var(y), E[y | x] estimated as the mean of y in `bins` quantile bins of x."""
    edges = np.quantile(x, np.linspace(0, 1, bins + 1))
    which = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, bins - 1)
    means = np.array([y[which == b].mean() for b in range(bins)])
    weights = np.bincount(which, minlength=bins) / len(y)
    return float(np.sum(weights * (means - y.mean()) ** 2) / y.var())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", help="a running ukes-server (default: start build/ukes-server)")
    parser.add_argument("--count", type=int, default=4096, help="systems in the sweep")
    args = parser.parse_args()
    spec = {
        "model": "four_bar",
        "sweep": {"count": args.count, "seed": 11, "sampler": "sobol",
                  "vary": {f"params.{k}": {"uniform": v} for k, v in VARY.items()}},
        "integrator": {"method": "dopri5", "t_end": 3.0, "rtol": 1e-8, "atol": 1e-8},
        "stabilization": {"alpha": 10.0, "beta": 25.0},
    }
    with ukes.connect(args.server, SERVER) as client:
        result = client.run(spec, progress=True)
    ok = result.ok
    outputs = {"crank angle th1(t_end)": result.q[ok, result.coordinates.index("th1")],
               "max |Qc|": result.force_max[ok]}
    bins = max(4, int(np.sqrt(ok.sum()) / 2))
    print(f"{ok.sum()} of {result.count} systems ok; first-order indices ({bins} bins):")
    print(f"{'input':>8} " + " ".join(f"{name:>24}" for name in outputs))
    for name in VARY:
        x = result.params[ok, result.param_names.index(name)]
        row = [first_order_indices(x, y, bins) for y in outputs.values()]
        print(f"{name:>8} " + " ".join(f"{s:24.3f}" for s in row))


if __name__ == "__main__":
    main()
