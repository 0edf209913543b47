"""Models from SymPy: the expression printer, and a double pendulum set up with SymPy mechanics
(Cartesian coordinates, two rod constraints, LagrangesMethod) run on the server against the
pendulum's reduced equations in its two angles, integrated here by RK4."""
import math

import numpy as np
import pytest
import sympy
from sympy.physics.mechanics import LagrangesMethod, dynamicsymbols

from ukes.sympy_models import DefinitionError, definition, from_lagranges_method

x, y = dynamicsymbols("x y")
a, b = sympy.symbols("a b")
t = sympy.Symbol("t")


def text(expr):
    return definition("m", [x, y], sympy.eye(2), [expr, 0], parameters={a: 1, b: 2})["force"][0]


@pytest.mark.parametrize("expr, want", [
    (x**2 + y.diff(t), "x^2 + y_dot"),
    (sympy.sqrt(a * x), "sqrt(a*x)"),
    (x**-2, "x^(-2)"),
    (x**sympy.Rational(3, 2), "x^((3/2))"),
    (-x**2, "-x^2"),
    (sympy.Abs(x) * sympy.sign(y), "abs(x)*sign(y)"),
    (sympy.atan2(y, x) + sympy.pi * t, "pi*t + atan2(y, x)"),
    (sympy.Max(a, x, y), "max(max(a, x), y)"),
    (sympy.Float(0.1) * x, "0.1*x"),
])
def test_expressions_print_in_the_definition_language(expr, want):
    assert text(expr) == want


@pytest.mark.parametrize("expr", [sympy.Symbol("c") * x, sympy.Function("f")(x),
                                  sympy.Piecewise((x, x > 0), (0, True)), x.diff(t, 2)])
def test_what_the_language_cannot_say_is_refused(expr):
    with pytest.raises(DefinitionError):
        text(expr)


def lagrangian_double_pendulum():
    """The Cartesian double pendulum as SymPy mechanics sets it up (y up, rods from the origin)."""
    x1, y1, x2, y2 = dynamicsymbols("x1 y1 x2 y2")
    m1, m2, l1, l2, g, th1, th2 = sympy.symbols("m1 m2 l1 l2 g theta1 theta2")
    kinetic = (m1 * (x1.diff(t)**2 + y1.diff(t)**2) + m2 * (x2.diff(t)**2 + y2.diff(t)**2)) / 2
    lagrangian = kinetic - (m1 * g * y1 + m2 * g * y2)
    rods = [x1**2 + y1**2 - l1**2, (x2 - x1)**2 + (y2 - y1)**2 - l2**2]
    method = LagrangesMethod(lagrangian, [x1, y1, x2, y2], hol_coneqs=rods)
    q0 = [l1 * sympy.sin(th1), -l1 * sympy.cos(th1),
          l1 * sympy.sin(th1) + l2 * sympy.sin(th2), -l1 * sympy.cos(th1) - l2 * sympy.cos(th2)]
    values = {m1: 1.0, m2: 0.7, l1: 1.0, l2: 0.8, g: 9.81, th1: 0.9, th2: 1.4}
    return from_lagranges_method(method, "sympy_double_pendulum", parameters=values,
                                 initial_state={"q": q0, "qd": [0, 0, 0, 0]}, t_end=1.0,
                                 baumgarte={"alpha": 20, "beta": 100}), values


def reduced_double_pendulum(m1, m2, l1, l2, g, th1, th2, t_end, steps=20000):
    """The angles' equations of motion (from the downward vertical), RK4: final (x1, y1, x2, y2)."""
    def rate(s):
        a1, a2, w1, w2 = s
        d = a1 - a2
        den = 2 * m1 + m2 - m2 * math.cos(2 * d)
        dw1 = (-g * (2 * m1 + m2) * math.sin(a1) - m2 * g * math.sin(a1 - 2 * a2)
               - 2 * math.sin(d) * m2 * (w2**2 * l2 + w1**2 * l1 * math.cos(d))) / (l1 * den)
        dw2 = (2 * math.sin(d) * (w1**2 * l1 * (m1 + m2) + g * (m1 + m2) * math.cos(a1)
                                  + w2**2 * l2 * m2 * math.cos(d))) / (l2 * den)
        return np.array([w1, w2, dw1, dw2])

    s, h = np.array([th1, th2, 0.0, 0.0]), t_end / steps
    for _ in range(steps):
        k1 = rate(s)
        k2 = rate(s + h / 2 * k1)
        k3 = rate(s + h / 2 * k2)
        k4 = rate(s + h * k3)
        s = s + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    a1, a2 = s[0], s[1]
    return np.array([l1 * math.sin(a1), -l1 * math.cos(a1),
                     l1 * math.sin(a1) + l2 * math.sin(a2), -l1 * math.cos(a1) - l2 * math.cos(a2)])


def test_a_lagranges_method_double_pendulum_matches_its_reduced_equations(client):
    model, values = lagrangian_double_pendulum()
    assert model["coordinates"] == ["x1", "y1", "x2", "y2"]
    assert len(model["position_constraints"]) == 2 and "velocity_constraints" not in model
    result = client.run({"model": model,
                         "integrator": {"method": "dopri5", "rtol": 1e-11, "atol": 1e-12}})
    assert list(result.status) == ["ok"]
    names = {str(k): v for k, v in values.items()}
    want = reduced_double_pendulum(names["m1"], names["m2"], names["l1"], names["l2"],
                                   names["g"], names["theta1"], names["theta2"], 1.0)
    np.testing.assert_allclose(result.q[0], want, rtol=0, atol=1e-7)
    assert result.residual_max.max() < 1e-8


def test_nonholonomic_rows_become_velocity_rows(client):
    # A free particle whose velocity must follow the parabola's slope (psi = y' - x x' = 0): an
    # ideal constraint does no work, so the speed stays what it was.
    px, py = dynamicsymbols("px py")
    m = sympy.Symbol("m")
    kinetic = m * (px.diff(t)**2 + py.diff(t)**2) / 2
    method = LagrangesMethod(kinetic, [px, py], nonhol_coneqs=[py.diff(t) - px * px.diff(t)])
    model = from_lagranges_method(method, "parabola_particle", parameters={m: 2.0},
                                  initial_state={"q": [0.5, 0.125], "qd": [1.0, 0.5]}, t_end=2.0)
    assert model["velocity_constraints"] == ["-px*px_dot + py_dot"]
    assert "position_constraints" not in model
    result = client.run({"model": model,
                         "integrator": {"method": "dopri5", "rtol": 1e-11, "atol": 1e-12}})
    assert list(result.status) == ["ok"]
    speed2 = (result.qd[0] ** 2).sum()
    assert speed2 == pytest.approx(1.0 + 0.25, rel=1e-8)
    x_end, y_end = result.q[0]
    assert y_end - 0.125 == pytest.approx((x_end**2 - 0.25) / 2, abs=1e-8)  # on the parabola
