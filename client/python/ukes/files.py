"""Result files of the command-line client read back into a Result: `ukes run --out results.json`
(docs/RUNSPEC.md's results contract) or `--out results.h5` gives the per-system values and the
ensemble statistics, `--h5 traj.h5` the recorded trajectories and the recorded systems' inputs."""
from __future__ import annotations

import json
import os
from typing import Any, Optional, Union

import numpy as np

from ukes.hdf5 import read_results, read_trajectories
from ukes.record import FIELDS, RESIDUAL_LEVELS, RecordField, RecordShape
from ukes.result import Result, residual_names
from ukes.v1 import ukes_pb2 as pb

Path = Union[str, os.PathLike]


def load(path: Path, h5: Optional[Path] = None) -> Result:
    """Reads a results file written by `ukes run --out` (in-process or --server) into a Result
    whose per-system arrays equal, to the bit, those `Client.run` returns for the same spec:
    results.json (docs/RUNSPEC.md's results contract) or results.h5 (binary, chosen by the
    extension .h5 or .hdf5; it also holds every system's inputs `params`, `q0`, `qd0`).

    `h5`, the same run's `--h5` file (or a `Result.to_hdf5` file), adds the trajectories
    (`trajectory_fields`, `sample_times`, `trajectory_ids`) and the inputs of the recorded
    systems; from results.json alone the inputs are NaN (it records the run's parameters, not
    each system's). `spec` holds the file's description of the run (model, params, settings,
    sweep)."""
    if str(path).endswith((".h5", ".hdf5")):
        result = _load_hdf5(path)
    else:
        result = _load_json(path)
    if h5 is not None:
        _add_trajectories(result, h5)
    return result


def _model(doc: dict[str, Any]) -> pb.Model:
    model = pb.Model(name=doc["model"], n=doc["n"], coordinates=doc["coordinates"],
                     position_rows=doc["position_rows"], velocity_rows=doc["velocity_rows"],
                     id=doc.get("model_id", ""))
    if "model_definition" in doc:
        definition = doc["model_definition"]
        model.definition_json = definition if isinstance(definition, str) else json.dumps(
            definition)
    return model


def _result(description: dict[str, Any], model: pb.Model, param_names: list[str],
            systems: dict[str, np.ndarray], statistics: dict[str, Any]) -> Result:
    settings = description["settings"]
    return Result(
        job_id="", model=model, spec=description, backend=description["backend"],
        precision=description["precision"], method=settings["method"], t0=settings["t0"],
        t_end=settings["t_end"], coordinates=list(model.coordinates),
        residual_names=residual_names(model), param_names=param_names, systems=systems,
        statistics=statistics, sample_times=np.zeros(0),
        trajectory_ids=np.zeros(0, dtype=np.int64), elapsed_s=description.get("elapsed_s", 0.0),
        steps_total=description.get("steps_total", 0),
        first_id=description.get("shard", {}).get("first", 0),
        event_names=list(description.get("events", [])))


def _load_json(path: Path) -> Result:
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    model = _model(doc)
    records = doc.get("systems", [])
    count, param_names = len(records), list(doc.get("params", {}))
    events = doc.get("events", [])
    shape = _shape(model, len(param_names), doc)
    systems = {}
    for field in FIELDS:
        if records and field.name in records[0]:
            values = [_json_value(field, r[field.name], events, shape) for r in records]
            systems[field.name] = np.asarray(values, dtype=field.dtype).reshape(
                (count,) + field.dims(shape))
        else:  # not in results.json: each system's inputs
            systems[field.name] = field.empty(count, shape)
    description = {k: v for k, v in doc.items() if k not in ("systems", "ensemble")}
    return _result(description, model, param_names, systems, doc.get("ensemble", {}))


def _shape(model: pb.Model, params: int, description: dict[str, Any]) -> RecordShape:
    """The record's sizes as a result file's description gives them."""
    return RecordShape(model.n, len(residual_names(model)), params, "control" in description,
                       len(description.get("events", [])), description.get("event_records", 0))


def _json_value(field: RecordField, value: Any, events: list[str], shape: RecordShape) -> Any:
    """One system's value of a field as results.json writes it, as an array of dims(shape):
    event fields come by event name with the records kept alone, and are padded with NaN."""
    if field.width == pb.RECORD_WIDTH_EVENTS:
        return [value[name] for name in events]
    if field.width in (pb.RECORD_WIDTH_EVENT_RECORDS, pb.RECORD_WIDTH_EVENT_COORDINATES):
        out = np.full(field.dims(shape), np.nan)
        for e, name in enumerate(events):
            kept = np.asarray(value[name], dtype=np.float64)
            out[e, :len(kept)] = kept.reshape((len(kept),) + out.shape[2:])
        return out
    return _flat(value)


def _flat(value: Any) -> Any:
    """A field's JSON value with residual maxima's rows (position, position_rate, velocity)
    joined into the slots' order and null as NaN."""
    if isinstance(value, dict):
        value = sum((value[level] for level in RESIDUAL_LEVELS), [])
    if isinstance(value, list):
        return [np.nan if v is None else v for v in value]
    return np.nan if value is None else value


def _load_hdf5(path: Path) -> Result:
    contents = read_results(path)
    description = contents["run"]
    model = _model(description)
    systems = contents["systems"]
    count = len(systems["status"])
    shape = _shape(model, len(contents["param_names"]), description)
    for field in FIELDS:  # a field the run has not (control_params outside a controlled run)
        if field.name not in systems:
            systems[field.name] = field.empty(count, shape)
        else:  # stored [count, width]: the event fields' components flattened
            systems[field.name] = systems[field.name].reshape((count,) + field.dims(shape))
    return _result(description, model, contents["param_names"], systems, contents["statistics"])


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
    for name in ("params", "q0", "qd0"):
        result.systems[name][ids - result.first_id] = contents[name]
