#!/usr/bin/python3
"""The demo's figure: the tracking-error bands of a controlled SCARA Monte Carlo
(client/examples/scara_montecarlo.json, docs/CONTROL.md). Reads the trajectories file of
`ukes run ... --h5` and draws, over time and across the recorded robots (each one's payload off
the controller's nominal value), the median, the 5-95% band and the largest of the end effector's
horizontal error |(phi0, phi1)| and of its vertical error |phi3| (the payload's weight acts along
the vertical axis, where a wrong payload shows most).

Usage: scripts/plot_tracking.py TRAJECTORIES.h5 OUT.png"""
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main(path: str, out: str) -> None:
    with h5py.File(path, "r") as f:
        t = f["t"][()]
        residual = f["residual"][()]  # [system, time, slot]: phi rows first
        m4 = f["params"][()][:, list(f["param"].asstr()[()]).index("m4")]
    errors = {"horizontal |(phi0, phi1)|": np.hypot(residual[:, :, 0], residual[:, :, 1]),
              "vertical |phi3|": np.abs(residual[:, :, 3])}
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, (name, error) in zip(axes, errors.items()):
        error = error * 1e3  # mm
        p5, p50, p95 = np.percentile(error, [5, 50, 95], axis=0)
        ax.fill_between(t, p5, p95, alpha=0.3, label="5-95% of robots")
        ax.plot(t, p50, label="median")
        ax.plot(t, error.max(axis=0), "--", lw=1, label="largest")
        ax.set_xlabel("t [s]")
        ax.set_ylabel(f"{name} [mm]")
    axes[0].legend()
    fig.suptitle(f"{residual.shape[0]} SCARA robots, payload {m4.min():.2f}-{m4.max():.2f} kg, "
                 "controller at 0.5 kg", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
