"""One run split into shards and put back together (docs/SCALING.md): the spec of each shard
(the spec with "shard": {"first", "count"}, run by any server, `ukes` process or Dask worker) and
the whole run's Result from the shards' Results.

System i's inputs depend only on the spec and i, so every shard's systems are the whole run's to
the bit. The statistics of the merged Result are recomputed over all systems in the server's
order of operations (kernels/ensemble/statistics.cpp: sorted values summed in order, numpy's
linear percentiles), so they equal one server's to the bit too.
"""
from __future__ import annotations

import copy
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from ukes.record import STATUS_NAMES
from ukes.result import SUMMARIZED_SCALARS, Result, residual_names


def shard_ranges(count: int, shards: int) -> list[tuple[int, int]]:
    """`count` systems in min(shards, count) consecutive (first, count) ranges whose sizes differ
    by at most one, the larger first: the split `ukes run --server A,B` makes."""
    if count < 1 or shards < 1:
        raise ValueError("count and shards must be at least 1")
    k = min(shards, count)
    ranges, first = [], 0
    for s in range(k):
        size = count // k + (1 if s < count % k else 0)
        ranges.append((first, size))
        first += size
    return ranges


def each_address(servers: Sequence[str]) -> list[str]:
    """Every address each "host:port" (or gRPC's "dns:///host:port") resolves to, as gRPC targets
    ("ipv4:10.0.0.7:50051", "ipv6:[fd00::7]:50051"), duplicates dropped: the pods of a
    Kubernetes headless Service, as `ukes run --each-address` takes them. Raises ValueError
    naming the server when a name does not resolve."""
    import socket

    targets: list[str] = []
    for server in servers:
        name = server.removeprefix("dns:///")
        host, sep, port = name.rpartition(":")
        if not sep or not port:
            raise ValueError(f"{server!r} is not host:port")
        host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as e:
            raise ValueError(f"cannot resolve {server!r}: {e.strerror}") from None
        for family, _, _, _, address in found:
            target = (f"ipv6:[{address[0]}]:{port}" if family == socket.AF_INET6
                      else f"ipv4:{address[0]}:{port}")
            if target not in targets:
                targets.append(target)
    return targets


def system_count(spec: Mapping[str, Any]) -> int:
    """How many systems a spec describes: sweep.count, the explicit systems, or 1."""
    if "sweep" in spec:
        return int(spec["sweep"]["count"])
    if "systems" in spec:
        return len(spec["systems"])
    return 1


def shard_specs(spec: Mapping[str, Any], shards: int) -> list[dict[str, Any]]:
    """The specs of the run's shards, in order."""
    if "shard" in spec:
        raise ValueError("the spec is a shard already; give the whole run to shard it")
    out = []
    for first, count in shard_ranges(system_count(spec), shards):
        part = copy.deepcopy(dict(spec))
        part["shard"] = {"first": first, "count": count}
        out.append(part)
    return out


def merge(parts: Sequence[Result], spec: Optional[Mapping[str, Any]] = None) -> Result:
    """The whole run's Result from its shards' (any order): per-system arrays and recorded
    trajectories in the whole run's order, statistics recomputed over every system. `spec` is
    the whole run's (default: the shards' own, which a server's stream carries; results files
    describe the run without the recorded systems' order, so give it for them). Raises
    ValueError unless the shards cover one run without gaps."""
    parts = sorted(parts, key=lambda r: r.first_id)
    if not parts:
        raise ValueError("no shards to merge")
    head = parts[0]
    spec = dict(spec) if spec is not None else {
        k: v for k, v in head.spec.items() if k != "shard"}
    _check_cover(parts, spec)
    systems = {name: np.concatenate([p.systems[name] for p in parts])
               for name in head.systems}
    ids, fields = _trajectories(parts, spec)
    return Result(
        job_id=",".join(p.job_id for p in parts if p.job_id), model=head.model, spec=spec,
        backend=head.backend if all(p.backend == head.backend for p in parts) else "cpu+gpu",
        precision=head.precision, method=head.method, t0=head.t0, t_end=head.t_end,
        coordinates=head.coordinates, residual_names=head.residual_names,
        param_names=head.param_names, systems=systems,
        statistics=ensemble_statistics(systems, head.coordinates, head.model),
        sample_times=head.sample_times, trajectory_ids=ids, trajectory_fields=fields,
        elapsed_s=max(p.elapsed_s for p in parts),
        steps_total=sum(p.steps_total for p in parts),
        message="; ".join(p.message for p in parts if p.message), event_names=head.event_names)


def _check_cover(parts: Sequence[Result], spec: Mapping[str, Any]) -> None:
    """Raises ValueError unless the shards, in order, cover the run's systems once each."""
    shard = parts[0].spec.get("shard", {})
    next_id = 0
    for p in parts:
        if p.first_id != next_id:
            raise ValueError(f"the shards leave systems {next_id}..{p.first_id - 1} out"
                             if p.first_id > next_id else
                             f"two shards hold system {p.first_id}")
        if p.model.name != parts[0].model.name:
            raise ValueError("the shards belong to different runs")
        next_id += p.count
    # A results file's description says how many ("of"); a spec says it as the user wrote it.
    expected = shard["of"] if "of" in shard else system_count(spec)
    if next_id != expected:
        raise ValueError(f"the shards cover {next_id} of {expected} systems")


def _trajectories(parts: Sequence[Result],
                  spec: Mapping[str, Any]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The recorded systems in the spec's order, and their trajectories gathered from the shards."""
    where = {int(i): (k, slot) for k, p in enumerate(parts)
             for slot, i in enumerate(p.trajectory_ids)}
    listed = spec.get("output", {}).get("trajectories")
    order = [i for i in listed if i in where] if isinstance(listed, list) else sorted(where)
    ids = np.asarray(order, dtype=np.int64)
    fields = {}
    for name, array in parts[0].trajectory_fields.items():
        fields[name] = np.empty((len(order),) + array.shape[1:])
        for row, i in enumerate(order):
            k, slot = where[i]
            fields[name][row] = parts[k].trajectory_fields[name][slot]
    return ids, fields


def summarize(values: np.ndarray) -> dict[str, float]:
    """The finite values' count, min, max, mean, population std and 50/95/99th percentiles, with
    the server's operations in the server's order (kernels/ensemble/statistics.cpp)."""
    v = np.sort(np.asarray(values, dtype=np.float64)[np.isfinite(values)])
    n = v.size
    if n == 0:
        nan = float("nan")
        return dict(count=0, min=nan, max=nan, mean=nan, std=nan, p50=nan, p95=nan, p99=nan)
    mean = np.cumsum(v)[-1] / n  # cumsum adds in order, as the server's loop does
    d = v - mean
    std = np.sqrt(np.cumsum(d * d)[-1] / n)
    return dict(count=n, min=float(v[0]), max=float(v[-1]), mean=float(mean), std=float(std),
                p50=_percentile(v, 0.50), p95=_percentile(v, 0.95), p99=_percentile(v, 0.99))


def _percentile(v: np.ndarray, p: float) -> float:
    """kernels/ensemble/percentile.hpp's linear interpolation (numpy's default), to the bit."""
    h = (v.size - 1) * p
    lo = int(h)
    hi = min(lo + 1, v.size - 1)
    t = h - lo
    a, b = v[lo], v[hi]
    diff = b - a
    return float(b - diff * (1.0 - t) if t >= 0.5 else a + diff * t)


def ensemble_statistics(systems: Mapping[str, np.ndarray], coordinates: Sequence[str],
                        model: Any) -> dict[str, Any]:
    """The ensemble statistics of docs/RUNSPEC.md over the systems that ended as asked (ok or
    terminated, docs/EVENTS.md), laid out as Result.statistics."""
    status = systems["status"]
    ok = np.isin(status, ("ok", "terminated"))

    def named(columns: np.ndarray, names: Sequence[str]) -> list[dict[str, Any]]:
        return [dict(summarize(columns[ok, j]), name=name) for j, name in enumerate(names)]

    slots = named(systems["residual_max"], residual_names(model))
    rows = model.position_rows
    count = int(status.size)
    return {
        "count": count, "ok": int(ok.sum()), "failed": count - int(ok.sum()),
        "by_status": {name: int((status == name).sum()) for name in STATUS_NAMES},
        "q": named(systems["q"], coordinates), "qd": named(systems["qd"], coordinates),
        "residual_max": {"position": slots[:rows], "position_rate": slots[rows:2 * rows],
                         "velocity": slots[2 * rows:]},
        **{name: summarize(np.asarray(systems[name], dtype=np.float64)[ok])
           for name in SUMMARIZED_SCALARS},
    }

