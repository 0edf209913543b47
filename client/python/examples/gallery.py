#!/usr/bin/python3
"""The seed papers' figures, reproduced from ukes runs: writes the PNGs of docs/figures/.

    /usr/bin/python3 client/python/examples/gallery.py              # starts build/ukes-server
    /usr/bin/python3 client/python/examples/gallery.py --server HOST:PORT --out DIR

Each figure is one run on the server (the model's defaults from docs/MODELS.md unless said), drawn
with ukes.plot where a generic plot fits and with matplotlib directly where the paper's figure is
specific (the sleigh's phase plane, the pendulum's out-of-plane path).
"""
from __future__ import annotations

import argparse
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")  # files only: runs without a display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from _path import ROOT, SERVER  # noqa: E402  (makes `import ukes` work from a checkout)
import ukes  # noqa: E402
from ukes import plot  # noqa: E402
ALL_FIELDS = ["q", "qd", "residual", "force"]


def scara(client: ukes.Client) -> plt.Figure:
    """SCARA paper: joint (constraint) errors decaying under the critically damped Baumgarte
    gains, and the constraint torques that hold the tool on the helix."""
    r = client.run({"model": "scara", "integrator": {"method": "dopri5", "rtol": 1e-10,
                                                      "atol": 1e-10},
                    "output": {"samples": 1001, "trajectories": "all", "fields": ALL_FIELDS}})
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7), sharex=True)
    plot.residuals(r, rows=[f"phi[{i}]" for i in range(4)], ax=top)
    top.set_title("scara: |phi_i|, alpha = 30, beta = 225 (critical damping)")
    plot.trajectories(r, field="force", ax=bottom)
    bottom.set_title("scara: constraint forces and torques Qc")
    fig.tight_layout()
    return fig


def swarm(client: ukes.Client) -> plt.Figure:
    """UK review sec. 8.2 (seed fig. 8): the velocity rows |psi_i| of five robots decay as
    e^{-5t} from an initial state off the constraints."""
    r = client.run({"model": "swarm", "integrator": {"rtol": 1e-10, "atol": 1e-10},
                    "output": {"samples": 401, "trajectories": "all",
                               "fields": ["q", "residual"]}})
    ax = plot.residuals(r)
    t = r.sample_times
    ax.plot(t, 34.04 * np.exp(-5 * t), "k--", lw=1, label="|psi(0)| e^{-5t}")
    ax.set_ylim(1e-14, 1e2)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("swarm: velocity constraint residuals |psi_i|")
    return ax.figure


def duffing(client: ukes.Client) -> plt.Figure:
    """Thesis figs. 4-6: coupled Duffing oscillators under a rheonomic constraint, the
    constraint error at tight tolerance and the constraint force on each mass."""
    r = client.run({"model": "duffing", "integrator": {"rtol": 1e-12, "atol": 1e-12},
                    "output": {"samples": 1001, "trajectories": "all", "fields": ALL_FIELDS}})
    fig, axes = plt.subplots(3, 1, figsize=(7, 8), sharex=True)
    plot.trajectories(r, ax=axes[0])
    axes[0].set_title("duffing: displacements")
    plot.residuals(r, rows=["phi[0]"], ax=axes[1])
    axes[1].set_title("duffing: constraint error |phi| (rtol = atol = 1e-12)")
    plot.trajectories(r, field="force", ax=axes[2])
    axes[2].set_title("duffing: constraint forces")
    fig.tight_layout()
    return fig


def two_rod_pendulum(client: ukes.Client) -> plt.Figure:
    """Thesis figs. 8-10: a bob held by two rods leaves the plane z = 0 it starts in."""
    r = client.run({"model": "two_rod_pendulum", "integrator": {"rtol": 1e-10, "atol": 1e-10},
                    "output": {"samples": 601, "trajectories": "all", "fields": ["q"]}})
    q = r.trajectory_fields["q"][0]
    fig = plt.figure(figsize=(10, 4))
    left = fig.add_subplot(1, 2, 1)
    plot.trajectories(r, ax=left)
    left.set_title("two_rod_pendulum: x, y, z")
    path = fig.add_subplot(1, 2, 2, projection="3d")
    path.plot(q[:, 0], q[:, 1], q[:, 2])
    path.set_xlabel("x")
    path.set_ylabel("y")
    path.set_zlabel("z")
    path.set_title("the bob's path (out of the plane z = 0)")
    fig.tight_layout()
    return fig


def chaplygin_sleigh(client: ukes.Client) -> plt.Figure:
    """Constrained Lagrangian notes: the sleigh's forward speed u and turning rate w for a fan
    of initial rates; every orbit ends on the line w = 0 moving forward (u > 0)."""
    a = 0.5
    rates = np.linspace(-3, 3, 13)
    systems = [{"qd0": [1.0, a * w, w]} for w in rates]  # yd = a w: on the velocity row
    r = client.run({"model": "chaplygin_sleigh", "systems": systems,
                    "integrator": {"t_end": 30.0, "rtol": 1e-10, "atol": 1e-10},
                    "output": {"samples": 1501, "trajectories": "all", "fields": ["q", "qd"]}})
    q, qd = r.trajectory_fields["q"], r.trajectory_fields["qd"]
    th = q[..., 2]
    u = np.cos(th) * qd[..., 0] + np.sin(th) * qd[..., 1]
    fig, ax = plt.subplots(figsize=(6, 5))
    for k in range(len(rates)):
        ax.plot(u[k], qd[k, :, 2], lw=1)
        ax.plot(u[k, 0], qd[k, 0, 2], "k.", ms=4)
    ax.set_xlabel("forward speed u")
    ax.set_ylabel("turning rate w = thd")
    ax.set_title("chaplygin_sleigh: phase plane (dots: initial states)")
    ax.axhline(0, color="0.6", lw=0.5)
    return fig


FIGURES = {"scara_baumgarte": scara, "swarm_psi": swarm, "duffing": duffing,
           "two_rod_pendulum": two_rod_pendulum, "chaplygin_sleigh_phase": chaplygin_sleigh}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", help="a running ukes-server (default: start build/ukes-server)")
    parser.add_argument("--binary", help="the ukes-server to start (see ukes.local.find_server)")
    parser.add_argument("--out", default=str(ROOT / "docs/figures"), help="folder of the PNGs")
    parser.add_argument("--only", nargs="*", choices=sorted(FIGURES), help="some figures only")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    with ukes.connect(args.server, args.binary or SERVER) as client:
        for name in args.only or FIGURES:
            fig = FIGURES[name](client)
            fig.savefig(out / f"{name}.png", dpi=110)
            plt.close(fig)
            print(f"gallery: wrote {out / name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
