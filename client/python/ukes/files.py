"""Result files of the command-line client read back into a Result: `ukes run --out results.json`
(docs/RUNSPEC.md's results contract) gives the per-system values and the ensemble statistics,
`--h5 traj.h5` the recorded trajectories and the recorded systems' inputs."""
from __future__ import annotations

import json
import os
from typing import Optional, Union

import numpy as np

from ukes.hdf5 import read_trajectories
from ukes.result import Result, residual_names
from ukes.v1 import ukes_pb2 as pb

RESIDUAL_LEVELS = ("position", "position_rate", "velocity")
Path = Union[str, os.PathLike]


def load(path: Path, h5: Optional[Path] = None) -> Result:
    """Reads a results.json written by `ukes run --out` (in-process or --server) into a Result
    whose per-system arrays equal, to the bit, those `Client.run` returns for the same spec.

    `h5`, the same run's `--h5` file (or a `Result.to_hdf5` file), adds the trajectories
    (`trajectory_fields`, `sample_times`, `trajectory_ids`) and the inputs (`params`, `q0`,
    `qd0`) of the recorded systems; without it the inputs are NaN (results.json records the
    run's parameters, not each system's). `spec` holds the file's description of the run
    (model, params, settings, sweep)."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    model = pb.Model(name=doc["model"], n=doc["n"], coordinates=doc["coordinates"],
                     position_rows=doc["position_rows"], velocity_rows=doc["velocity_rows"],
                     id=doc.get("model_id", ""))
    if "model_definition" in doc:
        model.definition_json = json.dumps(doc["model_definition"])
    systems = doc.get("systems", [])

    def column(key, dtype=float):
        return np.asarray([s[key] for s in systems], dtype=dtype)

    residual = [sum((s["residual_max"][level] for level in RESIDUAL_LEVELS), []) for s in systems]
    description = {k: v for k, v in doc.items() if k not in ("systems", "ensemble")}
    slots = len(residual_names(model))
    settings = doc["settings"]
    param_names = list(doc.get("params", {}))
    count = len(systems)
    result = Result(
        job_id="", model=model, spec=description, backend=doc["backend"],
        precision=doc["precision"], method=settings["method"], t0=settings["t0"],
        t_end=settings["t_end"], coordinates=list(doc["coordinates"]),
        residual_names=residual_names(model), q=column("q").reshape(-1, model.n),
        qd=column("qd").reshape(-1, model.n), t=column("t"), status=column("status", object),
        residual_max=np.asarray(residual).reshape(-1, slots), force_max=column("force_max"),
        inconsistency_max=column("inconsistency_max"), steps=column("steps", np.int64),
        rejected=column("rejected", np.int64), param_names=param_names,
        params=np.full((count, len(param_names)), np.nan), q0=np.full((count, model.n), np.nan),
        qd0=np.full((count, model.n), np.nan), statistics=doc.get("ensemble", {}),
        sample_times=np.zeros(0), trajectory_ids=np.zeros(0, dtype=np.int64),
        elapsed_s=doc.get("elapsed_s", 0.0), steps_total=doc.get("steps_total", 0))
    if h5 is not None:
        _add_trajectories(result, h5)
    return result


def _add_trajectories(result: Result, h5: Path) -> None:
    contents = read_trajectories(h5)
    attrs = contents["attrs"]
    if attrs.get("model") != result.model.name or int(attrs.get("count", -1)) != result.count:
        raise ValueError(f"{h5}: model {attrs.get('model')!r} with {attrs.get('count')} systems "
                         f"does not belong to a result of {result.model.name!r} with "
                         f"{result.count} systems")
    ids = contents["trajectory_ids"]
    result.sample_times = contents["sample_times"]
    result.trajectory_ids = ids
    result.trajectory_fields = contents["fields"]
    result.param_names = contents["param_names"]
    result.params = np.full((result.count, len(result.param_names)), np.nan)
    result.params[ids] = contents["params"]
    result.q0[ids] = contents["q0"]
    result.qd0[ids] = contents["qd0"]
