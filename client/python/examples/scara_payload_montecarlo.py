#!/usr/bin/python3
"""SCARA payload Monte Carlo: 1000 robots following the helix with a random payload mass and
perturbed initial joint angles (client/examples/scara_montecarlo.json), run on a ukes-server;
writes percentile bands of the constraint forces and a histogram of their maxima.

    /usr/bin/python3 client/python/examples/scara_payload_montecarlo.py [--server HOST:PORT]
        [--count N] [--out DIR]
"""
import argparse
import json
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from _path import ROOT, SERVER  # noqa: E402
import ukes  # noqa: E402
from ukes import plot  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", help="a running ukes-server (default: start build/ukes-server)")
    parser.add_argument("--count", type=int, default=1000, help="robots in the ensemble")
    parser.add_argument("--out", default="scara-montecarlo", help="folder of the PNGs")
    args = parser.parse_args()
    spec = json.loads((ROOT / "client/examples/scara_montecarlo.json").read_text())
    spec["sweep"]["count"] = args.count
    spec["output"]["trajectories"] = "all"
    spec["output"]["fields"] = ["q", "force"]
    with ukes.connect(args.server, SERVER) as client:
        result = client.run(spec, progress=True)

    ok = result.ok
    m4 = result.params[:, result.param_names.index("m4")]
    print(f"{ok.sum()} of {result.count} robots ok; payload m4 in [{m4.min():.3f}, "
          f"{m4.max():.3f}]; force max p50 {np.median(result.force_max[ok]):.3f}, "
          f"p99 {np.percentile(result.force_max[ok], 99):.3f}")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    # The joints follow the helix whatever the payload (assembly and Baumgarte see to it): what
    # the payload changes is the constraint force that holds them there.
    for ax, name in zip(axes.flat[:3], ("q1", "q2", "q4")):
        plot.percentile_bands(result, field="force", coordinate=name, ax=ax)
    plot.force_histogram(result, ax=axes.flat[3])
    fig.tight_layout()
    fig.savefig(out / "scara_montecarlo.png", dpi=110)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.scatter(m4[ok], result.force_max[ok], s=4)
    ax.set_xlabel("payload m4")
    ax.set_ylabel("max |Qc| over the run")
    fig.savefig(out / "scara_force_vs_payload.png", dpi=110)
    print(f"wrote {out}/scara_montecarlo.png and {out}/scara_force_vs_payload.png")


if __name__ == "__main__":
    main()
