#!/usr/bin/python3
"""Stiff reference for the friction ring through sticking (tests/stiff/, scripts/stiff_benchmark.py).

The catalogue's friction ring (docs/MODELS.md, sec. 11) in its reduced coordinate, the angle
th = atan2(y, x) of the bead on the ring:
    m R thdd = -m g cos th - mu |m R thd^2 - m g sin th| R thd / sqrt(R^2 thd^2 + eps^2),
integrated by SciPy's Radau (an implicit Runge-Kutta method of order 5, independent of ukes' own
Cartesian UK formulation and of its Rosenbrock method) at tolerances far below the tests'.
With eps = 1e-6 the bead sticks near the bottom at about t = 3.5 s, after which the regularized
friction law has an eigenvalue near -mu g / eps = -2e6 per second.

    /usr/bin/python3 scripts/friction_ring_reference.py > tests/stiff/data/friction_ring_stick.json
"""
import json
import sys

import numpy as np
from scipy.integrate import solve_ivp

M, R, G = 1.0, 1.0, 9.81
TH0, THD0 = 0.0, 3.0 / R  # the model's default state: (R, 0) moving at (0, 3)


def reduced_solution(eps, mu, times, rtol=1e-12, atol=1e-14):
    """(th, thd) at `times`, and SciPy's result."""

    def rhs(_t, state):
        th, thd = state
        normal = abs(M * R * thd * thd - M * G * np.sin(th))
        friction = mu * normal * R * thd / np.sqrt(R * R * thd * thd + eps * eps)
        return [thd, (-M * G * np.cos(th) - friction) / (M * R)]

    def jacobian(_t, state):
        th, thd = state
        n_signed = M * R * thd * thd - M * G * np.sin(th)
        s = np.sign(n_signed)
        speed = np.sqrt(R * R * thd * thd + eps * eps)
        direction = R * thd / speed  # the friction's direction factor and its derivative
        d_direction = R * eps * eps / speed**3
        d_th = (M * G * np.sin(th) - mu * s * (-M * G * np.cos(th)) * direction) / (M * R)
        d_thd = -mu * (s * 2 * M * R * thd * direction + abs(n_signed) * d_direction) / (M * R)
        return [[0.0, 1.0], [d_th, d_thd]]

    sol = solve_ivp(rhs, (times[0], times[-1]), [TH0, THD0], method="Radau", jac=jacobian,
                    t_eval=times, rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(sol.message)
    return sol.y[0], sol.y[1], sol


def main():
    eps, mu = 1e-6, 0.2
    times = np.linspace(0.0, 10.0, 11)
    th, thd, sol = reduced_solution(eps, mu, times)
    json.dump({"generator": "scripts/friction_ring_reference.py (SciPy Radau, rtol 1e-12, "
                            "atol 1e-14, reduced coordinate th)",
               "params": {"m": M, "R": R, "g": G, "mu": mu, "eps": eps},
               "t": times.tolist(), "th": th.tolist(), "thd": thd.tolist(),
               "nfev": int(sol.nfev)},
              sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
