"""User-defined models (docs/MODEL_FORMAT.md) from SymPy: expressions in the coordinates (SymPy
mechanics' dynamicsymbols, functions of t), their time derivatives and parameters become a model
definition the server compiles, as if written by hand.

    from sympy.physics.mechanics import dynamicsymbols
    x, y = dynamicsymbols("x y")
    m, g, l = sympy.symbols("m g l")
    model = definition("pendulum_xy", [x, y], mass=sympy.diag(m, m), force=[0, -m * g],
                       position_constraints=[x**2 + y**2 - l**2],
                       parameters={m: 1.0, g: 9.81, l: 1.0},
                       initial_state={"q": [l, 0], "qd": [0, 0]})
    client.run({"model": model, "sweep": {"count": 100}})

A coordinate `x` is `x` in the definition and its rate `Derivative(x, t)` is `x_dot`; `t` is time.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Sequence

import sympy
from sympy.printing.str import StrPrinter

T = sympy.Symbol("t")

# SymPy functions whose names differ from the expression language's (Max and Min: below).
RENAMED = {"Abs": "abs"}
SAME = {"sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "log",
        "sign", "atan2"}


class DefinitionError(ValueError):
    """A SymPy expression that the expression language cannot say (an unknown symbol or
    function, a Piecewise, a complex number)."""


class _Printer(StrPrinter):
    """SymPy's str printer, speaking docs/MODEL_FORMAT.md's expression language."""

    def __init__(self, names: Mapping[sympy.Basic, str]):
        super().__init__()
        self.names = names

    def _print_Symbol(self, e):
        if e in self.names:
            return self.names[e]
        raise DefinitionError(f"symbol {e} is neither a coordinate, its rate, a parameter nor t")

    def _print_Derivative(self, e):
        if e in self.names:
            return self.names[e]
        raise DefinitionError(f"{e}: only first time derivatives of coordinates are rates")

    def _print_Function(self, e):
        if e in self.names:
            return self.names[e]
        name = type(e).__name__
        if name in SAME or name in RENAMED:
            return f"{RENAMED.get(name, name)}({', '.join(self._print(a) for a in e.args)})"
        raise DefinitionError(f"function {name} has no counterpart in the expression language")

    def _print_extremum(self, e, name):
        args = [self._print(a) for a in e.args]
        out = args[0]
        for a in args[1:]:
            out = f"{name}({out}, {a})"  # the language's max is binary: max(max(a, b), c)
        return out

    def _print_Max(self, e):
        return self._print_extremum(e, "max")

    def _print_Min(self, e):
        return self._print_extremum(e, "min")

    def _print_Pow(self, e, rational=False):
        base, exponent = e.args
        if exponent == sympy.S.Half:
            return f"sqrt({self._print(base)})"
        if exponent == -sympy.S.Half:
            return f"1 / sqrt({self._print(base)})"
        b = self.parenthesize(base, 60, strict=True)  # 60: SymPy's precedence of Pow
        return f"{b}^({self._print(exponent)})" if exponent.is_negative or not (
            exponent.is_Integer or exponent.is_Symbol) else f"{b}^{self._print(exponent)}"

    def _print_Rational(self, e):
        return f"({e.p}/{e.q})"

    def _print_Float(self, e):
        return repr(float(e))

    def _print_Pi(self, e):
        return "pi"

    def _print_Exp1(self, e):
        return "e"

    def _print_Piecewise(self, e):
        raise DefinitionError("Piecewise: write it with if(c, a, b) in a definition by hand")

    def _print_ImaginaryUnit(self, e):
        raise DefinitionError("complex numbers have no counterpart")


def _name(q: sympy.Basic) -> str:
    """A coordinate's name: the function's for a dynamicsymbol x(t), the symbol's otherwise."""
    return str(q.func) if isinstance(q, sympy.core.function.AppliedUndef) else str(q)


def _printer(coordinates: Sequence[sympy.Basic], parameters: Iterable[sympy.Symbol]) -> _Printer:
    names: dict[sympy.Basic, str] = {T: "t"}
    for q in coordinates:
        names[q] = _name(q)
        names[sympy.Derivative(q, T)] = _name(q) + "_dot"
    for p in parameters:
        names[p] = str(p)
    return _Printer(names)


def definition(name: str, coordinates: Sequence[sympy.Basic], mass: Any, force: Sequence[Any], *,
               position_constraints: Sequence[Any] = (), velocity_constraints: Sequence[Any] = (),
               parameters: Optional[Mapping[sympy.Symbol, float]] = None,
               initial_state: Optional[Mapping[str, Sequence[Any]]] = None,
               t_end: Optional[float] = None, baumgarte: Optional[Mapping[str, float]] = None,
               description: Optional[str] = None) -> dict[str, Any]:
    """A model definition (a dict, docs/MODEL_FORMAT.md) from SymPy: `mass` an n x n matrix,
    `force` n expressions, constraint rows phi(q, t) = 0 and psi(q, qd, t) = 0, `parameters` a
    mapping from symbols to default values, `initial_state` {"q": [...], "qd": [...]} of
    expressions in the parameters. Raises DefinitionError for what the language cannot say;
    the server checks the rest (shapes, symmetry, levels) when the definition is used."""
    parameters = dict(parameters or {})
    printer = _printer(coordinates, parameters)

    def text(e: Any) -> str:
        return printer.doprint(sympy.sympify(e))

    mass = sympy.Matrix(mass)
    out: dict[str, Any] = {
        "format": "ukes-model/1",
        "name": name,
        "coordinates": [_name(q) for q in coordinates],
        "parameters": [{"name": str(p), "value": float(v)} for p, v in parameters.items()],
        "mass": [[text(mass[i, j]) for j in range(mass.cols)] for i in range(mass.rows)],
        "force": [text(f) for f in force],
    }
    if position_constraints:
        out["position_constraints"] = [text(r) for r in position_constraints]
    if velocity_constraints:
        out["velocity_constraints"] = [text(r) for r in velocity_constraints]
    if initial_state:
        out["initial_state"] = {k: [text(v) for v in initial_state[k]] for k in ("q", "qd")}
    if description:
        out["description"] = description
    if t_end is not None:
        out["t_end"] = float(t_end)
    if baumgarte:
        out["baumgarte"] = {k: float(v) for k, v in baumgarte.items()}
    return out


def from_lagranges_method(method: Any, name: str, **options: Any) -> dict[str, Any]:
    """A model definition from a sympy.physics.mechanics.LagrangesMethod: its coordinates, its
    mass matrix and forcing (M qdd = F without the multipliers, which the Udwadia-Kalaba equation
    replaces), its holonomic constraints as position rows and nonholonomic ones as velocity rows.
    `options` are definition()'s: parameters, initial_state, t_end, baumgarte, description."""
    if not method.eom:
        method.form_lagranges_equations()
    coordinates = list(method.q)
    n = len(coordinates)
    holonomic = list(getattr(method, "_hol_coneqs", []))
    # coneqs holds the holonomic rows differentiated once, then the nonholonomic rows.
    nonholonomic = list(method.coneqs)[len(holonomic):]
    return definition(name, coordinates, method.mass_matrix[:, :n], list(method.forcing),
                      position_constraints=holonomic, velocity_constraints=nonholonomic,
                      **options)
