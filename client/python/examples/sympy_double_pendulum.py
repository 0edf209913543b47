#!/usr/bin/python3
"""A user-defined model from SymPy mechanics: a double pendulum in Cartesian coordinates with
two rod constraints, set up with sympy.physics.mechanics.LagrangesMethod, turned into a ukes
model definition (ukes.sympy_models), and run as a sweep over the lower rod's length. Prints
the definition's sizes and the constraint residual maxima, and writes the bobs' paths.

    /usr/bin/python3 client/python/examples/sympy_double_pendulum.py [--server HOST:PORT]
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import sympy  # noqa: E402
from sympy.physics import mechanics as me  # noqa: E402

from _path import SERVER  # noqa: E402  (makes `import ukes` work from a checkout)
import ukes  # noqa: E402
from ukes.sympy_models import from_lagranges_method  # noqa: E402


def lagranges_method() -> tuple[me.LagrangesMethod, dict]:
    """The pendulum's LagrangesMethod and its parameters' default values (by symbol)."""
    x1, y1, x2, y2 = me.dynamicsymbols("x1 y1 x2 y2")
    m1, m2, l1, l2, g = sympy.symbols("m1 m2 l1 l2 g", positive=True)
    frame = me.ReferenceFrame("N")
    origin = me.Point("O")
    origin.set_vel(frame, 0)
    bobs = []
    for x, y, m, name in ((x1, y1, m1, "P1"), (x2, y2, m2, "P2")):
        p = origin.locatenew(name, x * frame.x + y * frame.y)
        p.set_vel(frame, x.diff() * frame.x + y.diff() * frame.y)
        particle = me.Particle(name, p, m)
        particle.potential_energy = m * g * y
        bobs.append(particle)
    rods = [x1**2 + y1**2 - l1**2, (x2 - x1)**2 + (y2 - y1)**2 - l2**2]
    method = me.LagrangesMethod(me.Lagrangian(frame, *bobs), [x1, y1, x2, y2], hol_coneqs=rods)
    return method, {m1: 1.0, m2: 1.0, l1: 1.0, l2: 1.0, g: 9.81}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", help="a running ukes-server (default: start build/ukes-server)")
    parser.add_argument("--out", default="sympy_double_pendulum.png", help="the PNG written")
    args = parser.parse_args()
    method, parameters = lagranges_method()
    l1, l2 = (next(p for p in parameters if p.name == name) for name in ("l1", "l2"))
    # Both rods horizontal at rest (y up, gravity along -y through the potential m g y).
    definition = from_lagranges_method(
        method, "double_pendulum_sympy", parameters=parameters,
        initial_state={"q": [l1, 0, l1 + l2, 0], "qd": [0, 0, 0, 0]}, t_end=5.0)
    with ukes.connect(args.server, SERVER) as client:
        model_id = client.register_model(definition)
        model = client.describe(model_id)
        print(f"{model.name}: n = {model.n}, {model.position_rows} position rows, "
              f"id {model_id[:19]}...")
        # Lengths of the lower rod from 0.5 to 1.5; assembly moves each lower bob onto its rod.
        result = client.run({"model": model_id, "assemble": True,
                             "sweep": {"count": 9, "sampler": "lhs",
                                       "vary": {"params.l2": {"uniform": [0.5, 1.5]}}},
                             "integrator": {"rtol": 1e-10, "atol": 1e-10},
                             "output": {"samples": 501, "trajectories": "all",
                                        "fields": ["q"]}})
    print(f"{result.ok.sum()} of {result.count} ok; largest |phi| of any run "
          f"{np.nanmax(result.residual_max[:, :2]):.2e}")
    q = result.trajectory_fields["q"]
    fig, ax = plt.subplots(figsize=(6, 6))
    for k in range(len(q)):
        ax.plot(q[k, :, 2], q[k, :, 3], lw=0.8)
    ax.set_aspect("equal")
    ax.set_title("lower bob paths, l2 in [0.5, 1.5]")
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
