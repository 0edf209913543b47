"""HDF5 files of the command-line client: trajectory files in the layout of `ukes run --h5`
(service/results/trajectories_h5.cpp, docs/RUNSPEC.md), written from a Result (`Result.to_hdf5`)
and read back, and per-system results files of `ukes run --out results.h5`
(service/results/results_h5.hpp), read back (`ukes.load`)."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from ukes.record import FIELDS as RECORD_FIELDS
from ukes.record import STATUS_NAMES

if TYPE_CHECKING:
    from ukes.result import Result

FIELDS = ("q", "qd", "residual", "force", "control")
DESCRIPTIONS = {
    "residual": "signed constraint residuals phi, phid (position rows), psi (velocity rows)",
    "force": "total constraint force Qc",
    "control": "control force B u (a controlled run)",
}


def _root_attributes(result: "Result") -> dict[str, Any]:
    from ukes import __version__

    times = result.sample_times
    attrs: dict[str, Any] = {"model": result.model.name}
    if result.model.id:  # a user model: its definition in full, as the CLI writes it
        attrs["model_id"] = result.model.id
        attrs["model_definition"] = result.model.definition_json
    attrs.update({
        "ukes_version": f"python-client {__version__}", "n": np.int64(len(result.coordinates)),
        "position_rows": np.int64(result.model.position_rows),
        "velocity_rows": np.int64(result.model.velocity_rows),
        "count": np.int64(result.count), "method": result.method, "precision": result.precision,
        "backend": result.backend, "t0": float(result.t0), "t_end": float(result.t_end),
        "samples": np.int64(len(times)),
    })
    return attrs


def write_trajectories(result: "Result", path: Union[str, os.PathLike]) -> None:
    """Writes `result`'s recorded trajectories and the recorded systems' inputs and status to
    `path` (HDF5), dimension scales attached as the CLI attaches them."""
    import h5py

    ids = np.asarray(result.trajectory_ids, dtype=np.int64)
    text = h5py.string_dtype("utf-8")
    with h5py.File(path, "w") as f:
        for name, value in _root_attributes(result).items():
            f.attrs[name] = value
        scales = {
            "t": f.create_dataset("t", data=np.asarray(result.sample_times, dtype=np.float64)),
            "system_ids": f.create_dataset("system_ids", data=ids),
            "coordinate": f.create_dataset("coordinate", data=result.coordinates, dtype=text),
            "residual_row": f.create_dataset("residual_row", data=result.residual_names,
                                             dtype=text),
            "param": f.create_dataset("param", data=result.param_names, dtype=text),
        }
        for name, d in scales.items():
            d.make_scale(name)

        def dataset(name: str, data: np.ndarray, dims: tuple[str, ...]) -> "h5py.Dataset":
            d = f.create_dataset(name, data=data)
            for axis, scale in enumerate(dims):
                d.dims[axis].attach_scale(scales[scale])
            if name in DESCRIPTIONS:
                d.attrs["description"] = DESCRIPTIONS[name]
            return d

        for name in FIELDS:
            if name in result.trajectory_fields:
                component = "residual_row" if name == "residual" else "coordinate"
                dataset(name, result.trajectory_fields[name], ("system_ids", "t", component))
        rows = ids - result.first_id  # a shard's rows start at its first system
        dataset("params", result.params[rows], ("system_ids", "param"))
        dataset("q0", result.q0[rows], ("system_ids", "coordinate"))
        dataset("qd0", result.qd0[rows], ("system_ids", "coordinate"))
        codes = np.asarray([STATUS_NAMES.index(s) for s in result.status[rows]], dtype=np.int32)
        status = dataset("status", codes, ("system_ids",))
        status.attrs["flag_values"] = np.arange(len(STATUS_NAMES), dtype=np.int32)
        status.attrs["flag_meanings"] = " ".join(STATUS_NAMES)


def read_trajectories(path: Union[str, os.PathLike]) -> dict[str, Any]:
    """The contents of a `--h5` file as plain arrays: attrs (root attributes), sample_times,
    trajectory_ids, coordinates, residual_names, param_names, fields ({name: [system, time,
    component]}), params, q0, qd0 and status (names) of the recorded systems."""
    import h5py

    strings = _strings
    with h5py.File(path, "r") as f:
        codes = f["status"][()]
        return {
            "attrs": {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()},
            "sample_times": f["t"][()], "trajectory_ids": f["system_ids"][()].astype(np.int64),
            "coordinates": strings(f["coordinate"]), "residual_names": strings(f["residual_row"]),
            "param_names": strings(f["param"]),
            "fields": {name: f[name][()] for name in FIELDS if name in f},
            "params": f["params"][()], "q0": f["q0"][()], "qd0": f["qd0"][()],
            "status": np.asarray([STATUS_NAMES[c] for c in codes], dtype=object),
        }



def _strings(d: "h5py.Dataset") -> list[str]:
    return [s.decode() if isinstance(s, bytes) else str(s) for s in d[()]]


def _ensemble(group: "h5py.Group", coordinates: list[str], residual_names: list[str],
              position_rows: int) -> dict[str, Any]:
    """The /ensemble group as docs/RUNSPEC.md's "ensemble" object (the layout of results.json)."""
    statistic = _strings(group["statistic"])

    def named(rows: np.ndarray, names: list[str]) -> list[dict[str, Any]]:
        return [dict(zip(statistic, map(float, row)), name=name) for row, name in zip(rows, names)]

    def single(row: np.ndarray) -> dict[str, Any]:
        return dict(zip(statistic, map(float, row)))

    slots = named(group["residual_max"][()], residual_names)
    out: dict[str, Any] = {k: int(group.attrs[k]) for k in ("count", "ok", "failed")}
    out["by_status"] = {k: int(v) for k, v in group["by_status"].attrs.items()}
    out.update({
        "q": named(group["q"][()], coordinates), "qd": named(group["qd"][()], coordinates),
        "residual_max": {"position": slots[:position_rows],
                         "position_rate": slots[position_rows:2 * position_rows],
                         "velocity": slots[2 * position_rows:]},
    })
    scalars = [name for name in group if name not in out and name != "statistic"]
    out.update({name: single(group[name][()]) for name in scalars})
    for summary in [*(out[name] for name in scalars), *out["q"], *out["qd"], *slots]:
        summary["count"] = int(summary["count"])
    return out


def read_results(path: Union[str, os.PathLike]) -> dict[str, Any]:
    """The contents of a results file written by `ukes run --out results.h5`
    (service/results/results_h5.hpp): attrs (root attributes), run (the run's description, as
    results.json has it outside "systems"), coordinates, residual_names, param_names, systems
    ({field: per-system array}, every field of ukes.record.FIELDS the file holds, statuses by
    name) and statistics (as results.json's "ensemble")."""
    import json

    import h5py

    with h5py.File(path, "r") as f:
        attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
        coordinates, residual_names = _strings(f["coordinate"]), _strings(f["residual_row"])
        systems = {}
        for field in RECORD_FIELDS:
            if field.name not in f:
                continue
            values = f[field.name][()]
            if field.is_status:
                values = np.asarray([STATUS_NAMES[c] for c in values], dtype=object)
            systems[field.name] = values
        return {
            "attrs": attrs, "run": json.loads(attrs["run"]), "coordinates": coordinates,
            "residual_names": residual_names, "param_names": _strings(f["param"]),
            "systems": systems,
            "statistics": _ensemble(f["ensemble"], coordinates, residual_names,
                                    int(attrs["position_rows"])),
        }
