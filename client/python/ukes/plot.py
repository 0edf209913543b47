"""Plots of a Result with matplotlib, in the manner of the seed papers' figures: constraint
residuals over time on a log scale, trajectories, percentile bands of an ensemble, histograms of
final states and of constraint-force maxima, phase planes.

Every function takes a Result and an optional matplotlib Axes (a new figure when None) and
returns the Axes it drew on. Nothing here picks a matplotlib backend: scripts without a display
call matplotlib.use("Agg") first. A missing field, coordinate or row raises ValueError naming it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ukes.result import Result

MAX_LEGEND = 10


def _axes(ax: Optional["Axes"]) -> "Axes":
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(7, 4))[1]


def _field(result: "Result", field: str) -> np.ndarray:
    if field not in result.trajectory_fields:
        raise ValueError(f"the result recorded no '{field}' trajectories (recorded: "
                         f"{sorted(result.trajectory_fields) or 'none'}; see the spec's "
                         f"output.trajectories and output.fields)")
    return result.trajectory_fields[field]


def _index(names: Sequence[str], name: str, what: str) -> int:
    if name not in names:
        raise ValueError(f"no {what} '{name}' in this model (it has {list(names)})")
    return list(names).index(name)


def _slots(result: "Result", systems: Optional[Sequence[int]], default: int) -> list[int]:
    """Trajectory slots of the recorded system ids `systems` (default: the first `default`)."""
    ids = list(result.trajectory_ids)
    if systems is None:
        return list(range(min(default, len(ids))))
    missing = [s for s in systems if s not in ids]
    if missing:
        raise ValueError(f"systems {missing} were not recorded (recorded: {ids[:20]}"
                         f"{' ...' if len(ids) > 20 else ''})")
    return [ids.index(s) for s in systems]


def _finish(ax: "Axes", result: "Result", ylabel: str, lines: int) -> "Axes":
    ax.set_xlabel("t")
    ax.set_ylabel(ylabel)
    ax.set_title(result.model.name)
    if 0 < lines <= MAX_LEGEND:
        ax.legend(fontsize=8)
    return ax


def residuals(result: "Result", rows: Optional[Sequence[str]] = None,
              systems: Optional[Sequence[int]] = None, ax: Optional["Axes"] = None) -> "Axes":
    """|residual| over time, log scale, one line per recorded system and row. `rows` are names
    from result.residual_names ("phi[0]", "phid[0]", "psi[0]"; default all), `systems` recorded
    system ids (default the first five recorded). Exact zeros (a row met to the last bit) have no
    place on a log axis: they are drawn a decade below the smallest nonzero value drawn."""
    values = _field(result, "residual")
    names = result.residual_names
    columns = [_index(names, r, "residual row") for r in (rows or names)]
    slots = _slots(result, systems, 5)
    magnitudes = np.abs(values[np.ix_(slots, range(values.shape[1]), columns)])
    positive = magnitudes[magnitudes > 0]
    floor = positive.min() / 10 if positive.size else 1.0
    ax = _axes(ax)
    for k, slot in enumerate(slots):
        for i, c in enumerate(columns):
            label = names[c]
            if len(slots) > 1:
                label += f", system {result.trajectory_ids[slot]}"
            ax.semilogy(result.sample_times, np.maximum(magnitudes[k, :, i], floor), label=label)
    return _finish(ax, result, "|residual|", len(slots) * len(columns))


def trajectories(result: "Result", field: str = "q", coordinates: Optional[Sequence[str]] = None,
                 systems: Optional[Sequence[int]] = None, ax: Optional["Axes"] = None) -> "Axes":
    """A recorded field ("q", "qd" or "force") over time per system and coordinate
    (`coordinates` by name, default all; `systems` recorded ids, default the first five)."""
    values = _field(result, field)
    names = result.coordinates
    columns = [_index(names, c, "coordinate") for c in (coordinates or names)]
    slots = _slots(result, systems, 5)
    ax = _axes(ax)
    for slot in slots:
        for c in columns:
            label = f"{field} {names[c]}"
            if len(slots) > 1:
                label += f", system {result.trajectory_ids[slot]}"
            ax.plot(result.sample_times, values[slot, :, c], label=label)
    return _finish(ax, result, field, len(slots) * len(columns))


def percentile_bands(result: "Result", field: str = "q", coordinate: Optional[str] = None,
                     percentiles: Sequence[float] = (5, 25, 50, 75, 95),
                     ax: Optional["Axes"] = None) -> "Axes":
    """The ensemble of recorded systems over time: the median of one coordinate of `field`
    (default the first coordinate) as a line, shaded bands between the symmetric pairs of
    `percentiles` (5-95, 25-75 by default). Failed systems' NaN samples are left out."""
    values = _field(result, field)
    name = coordinate or result.coordinates[0]
    column = values[:, :, _index(result.coordinates, name, "coordinate")]
    levels = sorted(percentiles)
    curves = dict(zip(levels, np.nanpercentile(column, levels, axis=0)))
    ax = _axes(ax)
    t = result.sample_times
    for lo, hi in zip(levels[:len(levels) // 2], reversed(levels[(len(levels) + 1) // 2:])):
        ax.fill_between(t, curves[lo], curves[hi], alpha=0.25, color="C0", lw=0,
                        label=f"p{lo:g}-p{hi:g}")
    median = np.nanpercentile(column, 50, axis=0)
    ax.plot(t, median, color="C0", label="median")
    ax = _finish(ax, result, f"{field} {name}", MAX_LEGEND)
    ax.set_title(f"{result.model.name}: {len(column)} systems")
    return ax


def final_histogram(result: "Result", coordinate: Optional[str] = None, bins: int = 50,
                    only_ok: bool = True, ax: Optional["Axes"] = None) -> "Axes":
    """Histogram over systems of one final coordinate (default the first), of the systems that
    ended ok unless `only_ok` is False."""
    name = coordinate or result.coordinates[0]
    values = result.q[:, _index(result.coordinates, name, "coordinate")]
    return _histogram(result, values, bins, only_ok, False, f"final {name}", ax)


def force_histogram(result: "Result", bins: int = 50, only_ok: bool = True, log: bool = True,
                    ax: Optional["Axes"] = None) -> "Axes":
    """Histogram over systems of the largest constraint force of each run (force_max), with
    logarithmic bins unless `log` is False."""
    return _histogram(result, result.force_max, bins, only_ok, log, "max |Qc| over the run", ax)


def _histogram(result: "Result", values: np.ndarray, bins: int, only_ok: bool, log: bool,
               xlabel: str, ax: Optional["Axes"]) -> "Axes":
    chosen = values[result.ok] if only_ok else values
    chosen = chosen[np.isfinite(chosen)]
    if chosen.size == 0:
        raise ValueError(f"no finite values of {xlabel} to draw"
                         f"{' among the systems that ended ok' if only_ok else ''}")
    ax = _axes(ax)
    edges: object = bins
    if log and chosen.min() > 0:
        edges = np.geomspace(chosen.min(), chosen.max() * (1 + 1e-12), bins + 1)
        ax.set_xscale("log")
    ax.hist(chosen, bins=edges)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("systems")
    ax.set_title(f"{result.model.name}: {chosen.size} systems")
    return ax


def phase_plane(result: "Result", coordinate: str, systems: Optional[Sequence[int]] = None,
                ax: Optional["Axes"] = None) -> "Axes":
    """q against qd of one coordinate for recorded systems (default the first ten); needs both
    fields recorded. A dot marks each initial state."""
    q, qd = _field(result, "q"), _field(result, "qd")
    c = _index(result.coordinates, coordinate, "coordinate")
    slots = _slots(result, systems, 10)
    ax = _axes(ax)
    for slot in slots:
        line, = ax.plot(q[slot, :, c], qd[slot, :, c], lw=1,
                        label=f"system {result.trajectory_ids[slot]}")
        ax.plot(q[slot, 0, c], qd[slot, 0, c], ".", color=line.get_color())
    ax.set_xlabel(coordinate)
    ax.set_ylabel(f"d{coordinate}/dt")
    ax.set_title(result.model.name)
    if len(slots) <= MAX_LEGEND:
        ax.legend(fontsize=8)
    return ax
