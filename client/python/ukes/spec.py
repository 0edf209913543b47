"""Run specs (docs/RUNSPEC.md) from Python: a small builder whose result is the plain dict the
server reads, and spec files in JSON or YAML.

    spec = (ukes.spec("scara")
            .sweep(1000, seed=7, sampler="lhs")
            .vary("params.m4", uniform=(0.3, 0.8))
            .integrator(method="dopri5", rtol=1e-9, atol=1e-9)
            .output(samples=101, trajectories="first:10"))
    client.run(spec)
"""
from __future__ import annotations

import json
import os
from typing import Any, Mapping, Optional, Sequence, Union

DISTRIBUTIONS = ("uniform", "normal", "lognormal", "values")


class SpecBuilder(dict):
    """A run spec as a dict (it is one: pass it wherever a spec goes, edit it as a dict), with
    chainable methods for its sections. Each method sets the keys it names and returns the
    builder; the server validates the whole spec when it is run."""

    def __init__(self, model: Union[str, Mapping[str, Any]]):
        super().__init__(model=model if isinstance(model, str) else dict(model))

    def params(self, **values: float) -> "SpecBuilder":
        """Parameter values for every system (`params`)."""
        self.setdefault("params", {}).update(values)
        return self

    def systems(self, *systems: Mapping[str, Any]) -> "SpecBuilder":
        """An explicit batch: each system a dict of `params`, `q0`, `qd0` (all optional)."""
        self["systems"] = [dict(s) for s in systems]
        return self

    def sweep(self, count: int, seed: int = 0, sampler: Optional[str] = None) -> "SpecBuilder":
        """Generated systems: `count` of them, sampled by `sampler` ("random", the default,
        "lhs" or "sobol")."""
        self["sweep"] = {**self.get("sweep", {}), "count": count, "seed": seed}
        if sampler is not None:
            self["sweep"]["sampler"] = sampler
        return self

    def vary(self, target: str, **distribution: Any) -> "SpecBuilder":
        """Sweeps `target` ("params.NAME", "q0[i]", "qd0[i]", "control.params.NAME") with one
        distribution given by keyword: uniform=(lo, hi), normal=(mean, sd), lognormal=(mu, sigma)
        or values=[...]."""
        if len(distribution) != 1 or next(iter(distribution)) not in DISTRIBUTIONS:
            raise ValueError(f"vary({target!r}): give exactly one of {', '.join(DISTRIBUTIONS)}")
        kind, value = next(iter(distribution.items()))
        self.setdefault("sweep", {}).setdefault("vary", {})[target] = {kind: list(value)}
        return self

    def assemble(self, on: bool = True) -> "SpecBuilder":
        """Projects every initial condition onto the constraint set before integrating."""
        self["assemble"] = on
        return self

    def integrator(self, **settings: Any) -> "SpecBuilder":
        """`integrator` settings: method ("rk4", "dopri5" or "rosenbrock"), t0, t_end, dt, rtol, atol,
        max_steps."""
        self.setdefault("integrator", {}).update(settings)
        return self

    def stabilization(self, **settings: Any) -> "SpecBuilder":
        """Baumgarte gains and projection: alpha, beta, projection, inconsistency_tol."""
        self.setdefault("stabilization", {}).update(settings)
        return self

    def output(self, **settings: Any) -> "SpecBuilder":
        """`output` settings: samples, trajectories ("none", "all", "first:N", [ids]), fields."""
        self.setdefault("output", {}).update(settings)
        return self

    def control(self, rows: Union[str, Sequence[int]] = "all",
                params: Optional[Mapping[str, float]] = None,
                actuation: Union[str, Sequence[str], Sequence[Sequence[Union[str, float]]]]
                = "full", gain: float = 0.0, epsilon: float = 1e-3,
                relative_degree: Union[None, int, Sequence[int]] = None) -> "SpecBuilder":
        """Constraint-following control (docs/CONTROL.md): the servo rows ("all" or indices),
        the controller's model (`params`: the model's defaults overridden), the actuation ("full",
        coordinate names, or for a user model an n x k matrix of expressions, one row per
        coordinate), the robust term's gain and epsilon (gain 0: none) and the servo rows'
        relative degrees (one for all, or one per servo row; None: each row's own order)."""
        if not isinstance(actuation, str):
            actuation = [entry if isinstance(entry, str) else list(entry) for entry in actuation]
        section: dict[str, Any] = {"rows": rows if isinstance(rows, str) else list(rows),
                                   "actuation": actuation}
        if params:
            section["params"] = dict(params)
        if gain:
            section["robust"] = {"gain": gain, "epsilon": epsilon}
        if relative_degree is not None:
            section["relative_degree"] = (relative_degree if isinstance(relative_degree, int)
                                          else list(relative_degree))
        self["control"] = section
        return self

    def event(self, name: str, condition: Union[str, float], direction: str = "both",
              action: str = "record", reset_q: Optional[Sequence[Union[str, float]]] = None,
              reset_qd: Optional[Sequence[Union[str, float]]] = None,
              max: Optional[int] = None) -> "SpecBuilder":
        """Adds an event (docs/EVENTS.md): the zero crossings of `condition` (an expression over
        the coordinates, `<coordinate>_dot`, parameters and t) in `direction` ("rising",
        "falling", "both"), with `action` "record", "terminate" or "reset" (then reset_q and/or
        reset_qd: one expression per coordinate); `max` records kept per system (default 16)."""
        event: dict[str, Any] = {"name": name, "condition": condition, "direction": direction,
                                 "action": action}
        reset = {key: list(values) for key, values in (("q", reset_q), ("qd", reset_qd))
                 if values is not None}
        if reset:
            event["reset"] = reset
        if max is not None:
            event["max"] = int(max)
        self.setdefault("events", []).append(event)
        return self

    def device(self, device: str, precision: str = "fp64",
               device_ids: Optional[Sequence[int]] = None) -> "SpecBuilder":
        """Where and how precisely to run: device "auto", "cpu" or "gpu"; "fp64" or "fp32";
        device_ids: the GPUs to spread the run over (default every usable one)."""
        self["device"], self["precision"] = device, precision
        if device_ids is not None:
            self["device_ids"] = [int(d) for d in device_ids]
        return self


def spec(model: Union[str, Mapping[str, Any]]) -> SpecBuilder:
    """A spec builder for `model`: a catalogue name, a registered model's id ("sha256:..."), or
    a model definition (docs/MODEL_FORMAT.md, e.g. from ukes.sympy_models)."""
    return SpecBuilder(model)


def spec_text(source: Union[Mapping[str, Any], str, os.PathLike]) -> str:
    """A run spec as the JSON text the server reads: from a dict (or builder), or the path of a
    JSON file, or of a YAML file (.yaml, .yml; read with PyYAML, Debian's python3-yaml)."""
    if isinstance(source, Mapping):
        return json.dumps(source)
    with open(source, encoding="utf-8") as f:
        text = f.read()
    if os.fspath(source).lower().endswith((".yaml", ".yml")):
        import yaml

        return json.dumps(yaml.safe_load(text))
    return text
