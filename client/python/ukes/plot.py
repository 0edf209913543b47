"""Plots of a Result with matplotlib, in the manner of the seed papers' figures: constraint
residuals over time on a log scale, trajectories, percentile bands of an ensemble, histograms of
final states and of constraint-force maxima, phase planes.

Every function takes a Result and an optional matplotlib Axes (a new figure when None) and
returns the Axes it drew on. matplotlib is imported only when a plot is drawn (it is an optional
dependency, `pip install ukes[plot]`), and nothing here picks a backend: scripts without a display
call matplotlib.use("Agg") first. A field, coordinate, row or system that the result lacks raises
ValueError naming it.
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Sequence, Union

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ukes.result import Result

MAX_LEGEND = 10  # beyond this many lines a legend hides more than it tells
COORDINATE_FIELDS = ("q", "qd", "force", "control")  # one component per coordinate

Names = Union[str, Sequence[str], None]
Systems = Union[int, Sequence[int], None]


def _axes(ax: Axes | None) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(7, 4))[1]


def _field(result: Result, field: str, per_coordinate: bool = True) -> np.ndarray:
    """The recorded [system, sample, component] array of `field`, or a ValueError saying why
    there is none."""
    if per_coordinate and field not in COORDINATE_FIELDS:
        hint = "; plot.residuals draws the residual rows" if field == "residual" else ""
        raise ValueError(f"field '{field}' has no coordinates (use one of {COORDINATE_FIELDS}"
                         f"{hint})")
    if field not in result.trajectory_fields:
        raise ValueError(f"the result recorded no '{field}' trajectories (recorded: "
                         f"{sorted(result.trajectory_fields) or 'none'}; see the spec's "
                         f"output.trajectories and output.fields)")
    values = result.trajectory_fields[field]
    if values.shape[0] == 0:
        raise ValueError(f"the result recorded '{field}' for no system (output.trajectories)")
    return values


def _columns(names: Sequence[str], chosen: Names, what: str) -> list[int]:
    """Indices in `names` of the `chosen` names (one name, several, or None for all)."""
    names = list(names)
    chosen = names if chosen is None else [chosen] if isinstance(chosen, str) else list(chosen)
    missing = [c for c in chosen if c not in names]
    if missing:
        listed = ", ".join(f"'{m}'" for m in missing)
        raise ValueError(f"no {what} {listed} in this model (it has {names})")
    return [names.index(c) for c in chosen]


def _slots(result: Result, systems: Systems, default: int) -> list[int]:
    """Trajectory slots of the recorded system ids `systems` (default: the first `default`)."""
    ids = [int(i) for i in result.trajectory_ids]
    if systems is None:
        return list(range(min(default, len(ids))))
    systems = [int(s) for s in np.atleast_1d(systems)]
    missing = [s for s in systems if s not in ids]
    if missing:
        raise ValueError(f"systems {missing} were not recorded (recorded: {ids[:20]}"
                         f"{' ...' if len(ids) > 20 else ''}; see the spec's output.trajectories)")
    return [ids.index(s) for s in systems]


def _label(name: str, result: Result, slot: int, slots: list[int]) -> str:
    # The system id only tells lines apart when there is more than one system.
    return name if len(slots) == 1 else f"{name}, system {result.trajectory_ids[slot]}"


def _finish(ax: Axes, result: Result, xlabel: str, ylabel: str, lines: int) -> Axes:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(result.model.name)
    if 0 < lines <= MAX_LEGEND:
        ax.legend(fontsize=8)
    return ax


def residuals(result: Result, rows: Names = None, systems: Systems = None,
              ax: Axes | None = None) -> Axes:
    """Constraint residuals |phi|, |phid|, |psi| over time on a log scale.

    Parameters
    ----------
    result : Result
        Needs the "residual" field recorded (the spec's output.fields).
    rows : str or sequence of str, optional
        Row names from ``result.residual_names`` ("phi[0]", "phid[0]", "psi[0]"); default all.
    systems : int or sequence of int, optional
        Recorded system ids; default the first five recorded.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    The Axes, one line per (system, row). Exact zeros (a row met to the last bit) have no place
    on a log axis: they are drawn a decade below the smallest nonzero value drawn.
    """
    values = _field(result, "residual", per_coordinate=False)
    names = result.residual_names
    columns = _columns(names, rows, "residual row")
    slots = _slots(result, systems, 5)
    magnitudes = np.abs(values[slots][:, :, columns])
    positive = magnitudes[magnitudes > 0]
    floor = positive.min() / 10 if positive.size else 1e-300
    ax = _axes(ax)
    for k, slot in enumerate(slots):
        for i, c in enumerate(columns):
            ax.semilogy(result.sample_times, np.maximum(magnitudes[k, :, i], floor),
                        label=_label(f"|{names[c]}|", result, slot, slots))
    ylabel = f"|{names[columns[0]]}|" if len(columns) == 1 else "|residual|"
    return _finish(ax, result, "t", ylabel, len(slots) * len(columns))


def trajectories(result: Result, field: str = "q", coordinates: Names = None,
                 systems: Systems = None, ax: Axes | None = None) -> Axes:
    """A recorded field over time, one line per (system, coordinate).

    Parameters
    ----------
    result : Result
    field : {"q", "qd", "force"}
        The recorded field to draw (plot.residuals draws "residual").
    coordinates : str or sequence of str, optional
        Coordinate names from ``result.coordinates``; default all.
    systems : int or sequence of int, optional
        Recorded system ids; default the first five recorded.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    The Axes.
    """
    values = _field(result, field)
    names = result.coordinates
    columns = _columns(names, coordinates, "coordinate")
    slots = _slots(result, systems, 5)
    ax = _axes(ax)
    for slot in slots:
        for c in columns:
            ax.plot(result.sample_times, values[slot, :, c],
                    label=_label(f"{field} {names[c]}", result, slot, slots))
    return _finish(ax, result, "t", field, len(slots) * len(columns))


def percentile_bands(result: Result, field: str = "q", coordinate: str | None = None,
                     percentiles: Sequence[float] = (5, 25, 50, 75, 95),
                     ax: Axes | None = None) -> Axes:
    """The ensemble of recorded systems over time: the median of one coordinate as a line and
    shaded bands between symmetric pairs of percentiles, at each sample time.

    Parameters
    ----------
    result : Result
    field : {"q", "qd", "force"}
        The recorded field.
    coordinate : str, optional
        A name from ``result.coordinates``; default the first.
    percentiles : sequence of float
        Sorted and paired from the outside in (5-95, 25-75 by default); a middle one is left
        to the median line.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    The Axes; its line labelled "median" is ``np.nanpercentile(values, 50, axis=0)``. Samples of
    failed systems (NaN) are left out; a time at which every system is NaN is a gap.
    """
    values = _field(result, field)
    name = coordinate or result.coordinates[0]
    column = values[:, :, _columns(result.coordinates, name, "coordinate")[0]]
    levels = sorted(percentiles)
    with warnings.catch_warnings():  # all-NaN samples (every system failed) are gaps, not news
        warnings.simplefilter("ignore", RuntimeWarning)
        curves = np.nanpercentile(column, levels, axis=0)
        median = np.nanpercentile(column, 50, axis=0)
    ax = _axes(ax)
    t = result.sample_times
    for i in range(len(levels) // 2):  # bands overlap, so the inner ones come out darker
        lo, hi = levels[i], levels[-1 - i]
        ax.fill_between(t, curves[i], curves[-1 - i], alpha=0.25, color="C0", lw=0,
                        label=f"p{lo:g}-p{hi:g}")
    ax.plot(t, median, color="C0", label="median")
    _finish(ax, result, "t", f"{field} {name}", MAX_LEGEND)
    ax.set_title(f"{result.model.name}: {len(column)} systems")
    return ax


def final_histogram(result: Result, coordinate: str | None = None, bins: int = 50,
                    only_ok: bool = True, ax: Axes | None = None) -> Axes:
    """Histogram over systems of one coordinate of the final state ``result.q``.

    Parameters
    ----------
    result : Result
    coordinate : str, optional
        A name from ``result.coordinates``; default the first.
    bins : int
    only_ok : bool
        Count only the systems that ended "ok" (the others' final states are where they
        stopped, not at t_end).
    ax : matplotlib Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    The Axes.
    """
    name = coordinate or result.coordinates[0]
    values = result.q[:, _columns(result.coordinates, name, "coordinate")[0]]
    return _histogram(result, values, bins, only_ok, False, f"final {name}", ax)


def force_histogram(result: Result, bins: int = 50, only_ok: bool = True, log: bool = True,
                    ax: Axes | None = None) -> Axes:
    """Histogram over systems of ``result.force_max``, each run's largest constraint force.

    Parameters
    ----------
    result : Result
    bins : int
    only_ok : bool
        Count only the systems that ended "ok".
    log : bool
        Logarithmic bins and x axis; linear ones when False or when some value is <= 0 (an
        unconstrained run has force_max 0, which a log axis cannot show).
    ax : matplotlib Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    The Axes.
    """
    return _histogram(result, result.force_max, bins, only_ok, log, "max |Qc| over the run", ax)


def _histogram(result: Result, values: np.ndarray, bins: int, only_ok: bool, log: bool,
               xlabel: str, ax: Axes | None) -> Axes:
    chosen = values[result.ok] if only_ok else values
    chosen = chosen[np.isfinite(chosen)]
    if chosen.size == 0:
        raise ValueError(f"no finite values of {xlabel} to draw"
                         f"{' among the systems that ended ok' if only_ok else ''}")
    ax = _axes(ax)
    edges: int | np.ndarray = bins
    if log and chosen.min() > 0:
        # Widened a hair so that the largest value falls inside the last bin.
        edges = np.geomspace(chosen.min(), chosen.max() * (1 + 1e-12), bins + 1)
        ax.set_xscale("log")
    ax.hist(chosen, bins=edges)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("systems")
    ax.set_title(f"{result.model.name}: {chosen.size} systems")
    return ax


def phase_plane(result: Result, coordinate: str, systems: Systems = None,
                ax: Axes | None = None) -> Axes:
    """q against qd of one coordinate, one curve per recorded system, a dot at each initial
    state.

    Parameters
    ----------
    result : Result
        Needs the "q" and "qd" fields recorded.
    coordinate : str
        A name from ``result.coordinates``.
    systems : int or sequence of int, optional
        Recorded system ids; default the first ten recorded.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    The Axes.
    """
    q, qd = _field(result, "q"), _field(result, "qd")
    c = _columns(result.coordinates, coordinate, "coordinate")[0]
    slots = _slots(result, systems, 10)
    ax = _axes(ax)
    for slot in slots:
        line, = ax.plot(q[slot, :, c], qd[slot, :, c], lw=1,
                        label=f"system {result.trajectory_ids[slot]}")
        ax.plot(q[slot, 0, c], qd[slot, 0, c], ".", color=line.get_color())
    _finish(ax, result, coordinate, f"d{coordinate}/dt", len(slots))
    return ax
