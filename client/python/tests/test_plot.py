"""ukes.plot renders headless (Agg) to non-empty PNGs, draws what it says (the median band is the
data's median), and refuses what a result did not record with a ValueError naming it."""
import os
import pathlib
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from ukes import plot  # noqa: E402
from ukes.result import Result  # noqa: E402
from ukes.v1 import ukes_pb2 as pb  # noqa: E402


def toy(fields=("q", "qd", "residual", "force"), systems=8, samples=21) -> Result:
    """Damped oscillators x, y with a residual that decays to an exact zero; system 3 failed."""
    rng = np.random.default_rng(1)
    t = np.linspace(0.0, 2.0, samples)
    amplitude = rng.uniform(0.5, 1.5, systems)[:, None]
    x = amplitude * np.exp(-t) * np.cos(3 * t)
    q = np.stack([x, 2 * x], axis=-1)
    residual = np.stack([1e-3 * np.exp(-10 * t) * np.ones((systems, 1))] * 2, axis=-1)
    residual[:, -1, :] = 0.0
    data = {"q": q, "qd": np.gradient(q, t, axis=1), "residual": residual, "force": 0.1 * q}
    status = np.array(["ok"] * systems, dtype=object)
    status[3] = "nonfinite"
    model = pb.Model(name="toy", n=2, coordinates=["x", "y"], position_rows=1, velocity_rows=0)
    return Result(
        job_id="j", model=model, spec={}, backend="cpu", precision="fp64", method="rk4", t0=0.0,
        t_end=2.0, coordinates=["x", "y"], residual_names=["phi[0]", "phid[0]"],
        param_names=["k"],
        systems={"q": q[:, -1], "qd": data["qd"][:, -1], "t": np.full(systems, 2.0),
                 "status": status, "residual_max": np.full((systems, 2), 1e-3),
                 "force_max": rng.uniform(1, 100, systems),
                 "inconsistency_max": np.zeros(systems), "steps": np.full(systems, 20),
                 "rejected": np.zeros(systems, dtype=np.int64), "params": np.ones((systems, 1)),
                 "q0": q[:, 0], "qd0": data["qd"][:, 0]},
        statistics={},
        sample_times=t, trajectory_ids=np.arange(systems),
        trajectory_fields={f: data[f] for f in fields})


def rendered(ax, path) -> int:
    ax.figure.savefig(path)
    plt.close(ax.figure)
    return path.stat().st_size


@pytest.mark.parametrize("draw", [
    lambda r: plot.residuals(r),
    lambda r: plot.residuals(r, rows=["phi[0]"], systems=[2]),
    lambda r: plot.residuals(r, rows="phid[0]", systems=2),
    lambda r: plot.trajectories(r),
    lambda r: plot.trajectories(r, field="force", coordinates=["y"], systems=[0, 5]),
    lambda r: plot.percentile_bands(r, coordinate="y"),
    lambda r: plot.percentile_bands(r, field="qd", percentiles=(10, 90)),
    lambda r: plot.final_histogram(r, bins=5),
    lambda r: plot.force_histogram(r, bins=5),
    lambda r: plot.force_histogram(r, bins=5, only_ok=False, log=False),
    lambda r: plot.phase_plane(r, "x"),
    lambda r: plot.phase_plane(r, "y", systems=[1]),
])
def test_each_plot_renders_to_a_png(draw, tmp_path):
    assert rendered(draw(toy()), tmp_path / "plot.png") > 1000


def test_plots_draw_on_a_given_axes():
    fig, ax = plt.subplots()
    assert plot.residuals(toy(), ax=ax) is ax
    plt.close(fig)


def test_residual_zeros_stay_on_the_log_axis():
    ax = plot.residuals(toy(), rows=["phi[0]"], systems=[0])
    (line,) = ax.get_lines()
    assert ax.get_yscale() == "log"
    drawn = line.get_ydata()
    smallest = np.min(drawn[:-1])  # the last sample is an exact zero
    assert drawn[-1] == smallest / 10 and smallest > 0
    plt.close(ax.figure)


def test_all_zero_residuals_still_render(tmp_path):
    result = toy()
    result.trajectory_fields["residual"][:] = 0.0  # every row met exactly
    ax = plot.residuals(result)
    assert all(np.all(line.get_ydata() > 0) for line in ax.get_lines())
    assert rendered(ax, tmp_path / "zeros.png") > 1000


def test_labels_name_rows_coordinates_and_model():
    ax = plot.residuals(toy(), rows=["phi[0]"], systems=[0])
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("t", "|phi[0]|", "toy")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["|phi[0]|"]
    plt.close(ax.figure)
    ax = plot.trajectories(toy(), coordinates=["y"], systems=[0, 4])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "q y, system 0", "q y, system 4"]
    plt.close(ax.figure)
    ax = plot.trajectories(toy(systems=12), systems=range(12))  # 24 lines: no legend
    assert ax.get_legend() is None
    plt.close(ax.figure)


def test_the_median_line_is_the_data_median():
    result = toy()
    result.trajectory_fields["q"][3] = np.nan  # a failed system's samples are left out
    ax = plot.percentile_bands(result, coordinate="y")
    median = [line for line in ax.get_lines() if line.get_label() == "median"][0]
    expected = np.nanpercentile(result.trajectory_fields["q"][:, :, 1], 50, axis=0)
    np.testing.assert_array_equal(median.get_ydata(), expected)
    assert len(ax.collections) == 2  # the 5-95 and 25-75 bands
    plt.close(ax.figure)


def test_histograms_count_the_ok_systems_only_by_default():
    result = toy()
    ax = plot.final_histogram(result, bins=4)
    assert sum(p.get_height() for p in ax.patches) == result.ok.sum() == 7
    plt.close(ax.figure)
    ax = plot.final_histogram(result, bins=4, only_ok=False)
    assert sum(p.get_height() for p in ax.patches) == 8
    plt.close(ax.figure)


def test_force_histogram_bins_are_logarithmic_unless_a_force_is_zero():
    result = toy()
    ax = plot.force_histogram(result, bins=5)
    assert ax.get_xscale() == "log"
    plt.close(ax.figure)
    result.force_max[0] = 0.0  # an unconstrained run: no place on a log axis
    ax = plot.force_histogram(result, bins=5)
    assert ax.get_xscale() == "linear"
    assert sum(p.get_height() for p in ax.patches) == 7
    plt.close(ax.figure)


def test_importing_plot_imports_no_matplotlib():
    package = pathlib.Path(plot.__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(package))
    env.pop("DISPLAY", None)
    code = "import sys, ukes.plot; assert 'matplotlib' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


def failed_everywhere() -> Result:
    result = toy()
    result.status[:] = "nonfinite"
    return result


def recorded_nothing() -> Result:
    result = toy()
    result.trajectory_ids = np.zeros(0, dtype=np.int64)
    result.trajectory_fields = {f: v[:0] for f, v in result.trajectory_fields.items()}
    return result


@pytest.mark.parametrize("draw, named", [
    (lambda: plot.residuals(toy(fields=("q",))), "'residual'"),
    (lambda: plot.trajectories(toy(), field="qd", coordinates=["z"]), "'z'"),
    (lambda: plot.residuals(toy(), rows=["psi[0]"]), "'psi[0]'"),
    (lambda: plot.trajectories(toy(), systems=[99]), "[99]"),
    (lambda: plot.phase_plane(toy(fields=("q",)), "x"), "'qd'"),
    (lambda: plot.percentile_bands(toy(fields=()), field="force"), "'force'"),
    (lambda: plot.percentile_bands(toy(), coordinate="z"), "'z'"),
    (lambda: plot.percentile_bands(recorded_nothing()), "no system"),
    (lambda: plot.trajectories(toy(), field="residual"), "plot.residuals"),
    (lambda: plot.trajectories(toy(), field="qdd"), "'qdd'"),
    (lambda: plot.final_histogram(toy(), coordinate="theta"), "'theta'"),
    (lambda: plot.final_histogram(failed_everywhere()), "ended ok"),
    (lambda: plot.force_histogram(failed_everywhere()), "ended ok"),
    (lambda: plot.phase_plane(toy(), "z"), "'z'"),
    (lambda: plot.phase_plane(toy(), "x", systems=[8]), "[8]"),
])
def test_missing_things_are_named(draw, named):
    with pytest.raises(ValueError) as caught:
        draw()
    assert named in str(caught.value)
    plt.close("all")
