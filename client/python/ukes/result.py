"""Results of a job as numpy arrays: built chunk by chunk from the server's result stream
(ResultBuilder), with the model's coordinate and row names beside them."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ukes.record import FIELDS, RecordShape, status_name
from ukes.v1 import ukes_pb2 as pb

if TYPE_CHECKING:
    import xarray


# The per-system scalars the ensemble statistics summarize (force_max, control_effort_max, steps):
# EnsembleStatistics' single Summary fields, as the server's list (UKES_SUMMARIZED_SCALARS in
# kernels/ensemble/system_record.hpp) names them.
SUMMARIZED_SCALARS = tuple(
    f.name for f in pb.EnsembleStatistics.DESCRIPTOR.fields
    if f.message_type == pb.Summary.DESCRIPTOR and f.label != f.LABEL_REPEATED)


def summary_dict(s: pb.Summary) -> dict[str, float]:
    """One Summary (count, min, max, mean, std, p50, p95, p99) as a dict."""
    return {k: getattr(s, k) for k in ("count", "min", "max", "mean", "std", "p50", "p95", "p99")}


def residual_names(model: pb.Model) -> list[str]:
    """Residual slots in stream order: |phi| and |phid| per position row, |psi| per velocity row."""
    return ([f"phi[{i}]" for i in range(model.position_rows)] +
            [f"phid[{i}]" for i in range(model.position_rows)] +
            [f"psi[{i}]" for i in range(model.velocity_rows)])


@dataclass
class Result:
    """A finished job's results.

    Per system (first axis: system id), numpy arrays in `systems`, one per field of the
    per-system record (ukes.record.FIELDS: the protocol's SystemSummaries) and readable as
    attributes: `status` (names such as "ok"), `t` (final time), `q`, `qd` (final state, [system,
    coordinate]), `residual_max` ([system, residual slot], named by `residual_names`),
    `force_max`, `inconsistency_max`, `steps`, `rejected`; in a run with events (named by
    `event_names`, docs/EVENTS.md) `event_count` [system, event] and the records kept, `event_t`
    [system, event, record] and `event_q`, `event_qd` [system, event, record, coordinate] (NaN
    past each count); and the inputs each system was
    integrated from (after sweeps and defaults): `params` ([system, parameter], named by
    `param_names`), `q0`, `qd0`. `statistics` holds the ensemble statistics over the systems
    that ended ok or terminated (as docs/RUNSPEC.md's "ensemble"). Recorded trajectories: `sample_times`,
    `trajectory_ids` (the recorded systems) and, per field, [recorded system, sample, component]
    arrays in `trajectory_fields`; `trajectories` gives them as an xarray.Dataset. `spec` is the
    spec as the server ran it, `t0` and `t_end` its integration interval. A shard's Result
    (ukes.shards) holds systems first_id, first_id + 1, ... of the whole run in its rows, and
    its `trajectory_ids` are whole-run ids.
    """

    job_id: str
    model: pb.Model
    spec: dict[str, Any]
    backend: str
    precision: str
    method: str
    t0: float
    t_end: float
    coordinates: list[str]
    residual_names: list[str]
    param_names: list[str]
    systems: dict[str, np.ndarray]
    statistics: dict[str, Any]
    sample_times: np.ndarray
    trajectory_ids: np.ndarray
    trajectory_fields: dict[str, np.ndarray] = field(default_factory=dict)
    elapsed_s: float = 0.0
    steps_total: int = 0
    message: str = ""
    first_id: int = 0
    event_names: list[str] = field(default_factory=list)

    def __getattr__(self, name: str) -> np.ndarray:
        # Only called for names that are not attributes: the per-system fields.
        systems = self.__dict__.get("systems", {})
        if name in systems:
            return systems[name]
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    @property
    def trajectories(self) -> "xarray.Dataset":
        """The recorded trajectories as an xarray.Dataset: variables q, qd, force (dims system,
        time, coordinate) and residual (system, time, row) for the fields the spec recorded,
        coordinates named by the model, the job's model, id and spec as attributes."""
        import xarray as xr

        dims = {"residual": ("system", "time", "row")}
        data = {name: (dims.get(name, ("system", "time", "coordinate")), values)
                for name, values in self.trajectory_fields.items()}
        coords = {"system": self.trajectory_ids, "time": self.sample_times,
                  "coordinate": self.coordinates, "row": self.residual_names}
        recorded = self.trajectory_ids - self.first_id  # rows of the recorded systems
        data["params"] = (("system", "param"), self.params[recorded])
        data["q0"] = (("system", "coordinate"), self.q0[recorded])
        data["qd0"] = (("system", "coordinate"), self.qd0[recorded])
        coords["param"] = self.param_names
        attrs = {"model": self.model.name, "job_id": self.job_id, "spec": json.dumps(self.spec)}
        return xr.Dataset(data, coords=coords, attrs=attrs)

    def to_hdf5(self, path: "str | os.PathLike") -> None:
        """Writes the recorded trajectories in the layout of the CLI's `ukes run --h5` file
        (docs/RUNSPEC.md): datasets t, system_ids, coordinate, residual_row, param (dimension
        scales), q, qd, residual, force ([system, time, component], the recorded fields),
        params, q0, qd0, status, and the run's description as root attributes."""
        from ukes.hdf5 import write_trajectories

        write_trajectories(self, path)

    @property
    def count(self) -> int:
        """Systems in the job."""
        return len(self.status)

    @property
    def ok(self) -> np.ndarray:
        """Boolean mask of the systems that ended as asked: ok, or at a terminating event (the
        systems the statistics summarize)."""
        return np.isin(self.status, ("ok", "terminated"))


class ResultBuilder:
    """Collects a job's chunks (header, summaries, trajectories, statistics, end) into a Result.
    Chunks must come in sequence order, each once (the Job's stream guarantees it)."""

    def __init__(self) -> None:
        self.header: pb.JobHeader | None = None
        self.statistics: dict[str, Any] = {}
        self.end: pb.JobEnd | None = None
        self.last_sequence = 0

    def add(self, chunk: pb.StreamJobResultsResponse) -> None:
        """Takes the next chunk of the job's result stream."""
        self.last_sequence = chunk.sequence
        kind = chunk.WhichOneof("payload")
        if kind == "header":
            self._start(chunk.header)
        elif kind == "summaries":
            self._summaries(chunk.summaries)
        elif kind == "trajectory":
            self._trajectory(chunk.trajectory)
        elif kind == "statistics":
            self.statistics = statistics_dict(chunk.statistics, self.header.model)
        elif kind == "end":
            self.end = chunk.end

    def _start(self, h: pb.JobHeader) -> None:
        self.header = h
        n, count, slots = h.model.n, h.count, h.residual_slots
        controlled = "control" in json.loads(h.spec_json or "{}")
        self.shape = RecordShape(n, slots, len(h.model.params), controlled, len(h.events),
                                 h.event_records)
        self.systems = {f.name: f.empty(count, self.shape) for f in FIELDS}
        self.slot_of = {sid: k for k, sid in enumerate(h.trajectory_ids)}  # the shard's ids
        self.first_id = json.loads(h.spec_json or "{}").get("shard", {}).get("first", 0)
        samples, recorded = len(h.sample_times), len(h.trajectory_ids)
        widths = {"q": n, "qd": n, "force": n, "control": n, "residual": slots}
        self.traj = {f: np.full((recorded, samples, widths[f]), np.nan) for f in h.fields}

    def _summaries(self, s: pb.SystemSummaries) -> None:
        rows = slice(s.first_id, s.first_id + s.count)
        for f in FIELDS:
            values = getattr(s, f.name)
            if f.is_status:
                self.systems[f.name][rows] = [status_name(v) for v in values]
            elif self.systems[f.name].ndim == 1:
                self.systems[f.name][rows] = values
            else:
                self.systems[f.name][rows] = np.asarray(values).reshape((s.count,)
                                                                        + f.dims(self.shape))

    def _trajectory(self, c: pb.TrajectoryChunk) -> None:
        samples = slice(c.sample_begin, c.sample_begin + c.sample_count)
        slots = [self.slot_of[i] for i in c.system_ids]
        for name, array in self.traj.items():
            values = np.asarray(getattr(c, name))
            if values.size:
                array[slots, samples] = values.reshape(len(slots), c.sample_count, -1)

    def result(self) -> Result:
        """The Result, once the header and the end have arrived."""
        h = self.header
        if h is None or self.end is None:
            raise ValueError("the job's results are incomplete (no header or no end yet)")
        return Result(
            job_id=h.job_id, model=h.model, spec=json.loads(h.spec_json), backend=h.backend,
            precision=h.precision, method=h.method, t0=h.t0, t_end=h.t_end,
            coordinates=list(h.model.coordinates),
            residual_names=residual_names(h.model), param_names=[p.name for p in h.model.params],
            systems=self.systems, statistics=self.statistics,
            sample_times=np.asarray(h.sample_times),
            trajectory_ids=np.asarray(h.trajectory_ids, dtype=np.int64) + self.first_id,
            trajectory_fields=self.traj, elapsed_s=self.end.elapsed_s,
            steps_total=self.end.steps_total, message=self.end.message, first_id=self.first_id,
            event_names=list(h.events))


def statistics_dict(s: pb.EnsembleStatistics, model: pb.Model) -> dict[str, Any]:
    """The statistics chunk as docs/RUNSPEC.md's "ensemble" object (the layout of the CLI's
    results.json): summaries named by coordinate and residual row."""
    def named(summaries, names):
        return [dict(summary_dict(x), name=name) for x, name in zip(summaries, names)]

    slots = named(s.residual_max, residual_names(model))
    rows = model.position_rows
    return {
        "count": s.count, "ok": s.ok, "failed": s.failed, "by_status": dict(s.by_status),
        "q": named(s.q, model.coordinates), "qd": named(s.qd, model.coordinates),
        "residual_max": {"position": slots[:rows], "position_rate": slots[rows:2 * rows],
                         "velocity": slots[2 * rows:]},
        **{name: summary_dict(getattr(s, name)) for name in SUMMARIZED_SCALARS},
    }
