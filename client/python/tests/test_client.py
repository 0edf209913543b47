"""The Python client against a real ukes-server (conftest.py): discovery, runs whose numbers equal
the command-line client's result file, errors as exceptions with the field, cancellation, and
result streams resumed after a cut with every chunk exactly once."""
import json

import numpy as np
import pytest
import xarray

import ukes
import ukes.record
from conftest import SOURCE, run_cli

SWEEP = {
    "model": "duffing",
    "sweep": {"count": 40, "seed": 7, "vary": {"params.k1": {"uniform": [9.0, 11.0]},
                                               "q0[0]": {"normal": [1.0, 0.05]}}},
    "integrator": {"method": "dopri5", "t_end": 2.0},
    "output": {"samples": 11, "trajectories": "first:3"},
}


def test_server_info_models_and_describe(client):
    info = client.server_info()
    assert "cpu" in info["backends"]
    assert info["version"]
    cli = run_cli(["models", "--json"], SOURCE)
    assert cli.returncode == 0, cli.stderr
    catalogue = [m["name"] for m in json.loads(cli.stdout)]
    assert len(catalogue) == 15
    assert [m.name for m in client.models()][:15] == catalogue
    scara = client.describe("scara")
    assert scara.n == 4 and scara.position_rows == 4
    assert len(scara.coordinates) == 4


def test_run_equals_the_command_line_result_file(client, tmp_path):
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(SWEEP))
    cli = run_cli(["run", str(spec_file), "--out", str(tmp_path / "r.json")], tmp_path)
    assert cli.returncode == 0, cli.stderr
    expected = json.loads((tmp_path / "r.json").read_text())
    result = client.run(spec_file)  # a path works as a spec, like a dict

    assert result.count == 40 and result.coordinates == expected["coordinates"]
    systems = expected["systems"]
    np.testing.assert_array_equal(result.q, [s["q"] for s in systems])
    np.testing.assert_array_equal(result.qd, [s["qd"] for s in systems])
    np.testing.assert_array_equal(result.t, [s["t"] for s in systems])
    np.testing.assert_array_equal(result.steps, [s["steps"] for s in systems])
    np.testing.assert_array_equal(result.force_max, [s["force_max"] for s in systems])
    residual = [s["residual_max"]["position"] + s["residual_max"]["position_rate"] +
                s["residual_max"]["velocity"] for s in systems]
    np.testing.assert_array_equal(result.residual_max, residual)
    assert list(result.status) == [s["status"] for s in systems]
    ensemble = expected["ensemble"]
    assert result.statistics["ok"] == ensemble["ok"] == 40
    assert result.statistics == ensemble  # the same figures to the bit, the same layout
    assert result.residual_names == ["phi[0]", "phid[0]"]

    # The CLI's file read back: the same arrays and statistics.
    loaded = ukes.load(tmp_path / "r.json")
    for name in ("q", "qd", "t", "status", "residual_max", "force_max", "inconsistency_max",
                 "steps", "rejected"):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(result, name), err_msg=name)
    assert loaded.statistics == result.statistics and loaded.coordinates == result.coordinates

    # The binary results file: every field of the record, the inputs included, to the bit.
    cli = run_cli(["run", str(spec_file), "--out", str(tmp_path / "r.h5")], tmp_path)
    assert cli.returncode == 0, cli.stderr
    binary = ukes.load(tmp_path / "r.h5")
    for field in ukes.record.FIELDS:
        np.testing.assert_array_equal(getattr(binary, field.name), getattr(result, field.name),
                                      err_msg=field.name)
    assert binary.statistics == result.statistics and binary.param_names == result.param_names
    assert binary.spec["sweep"] == expected["sweep"] and binary.method == result.method
    # xarray reads it as a dataset over `system`, named by the model's coordinates.
    data = xarray.open_dataset(tmp_path / "r.h5", engine="h5netcdf")
    assert data.q.dims == ("system", "coordinate") and data.force_max.dims == ("system",)
    assert list(data.coordinate.values) == expected["coordinates"]
    np.testing.assert_array_equal(data.q.values, result.q)
    ensemble = xarray.open_dataset(tmp_path / "r.h5", engine="h5netcdf", group="ensemble")
    assert ensemble.q.dims == ("coordinate", "statistic")
    data.close()
    ensemble.close()

    # Trajectories of systems 0..2: 11 samples, the last of which is the final state.
    assert list(result.trajectory_ids) == [0, 1, 2]
    q = result.trajectory_fields["q"]
    assert q.shape == (3, 11, 2)
    np.testing.assert_array_equal(q[:, -1, :], result.q[:3])
    assert result.sample_times[0] == 0.0 and result.sample_times[-1] == 2.0
    data = result.trajectories
    assert data.q.dims == ("system", "time", "coordinate")
    assert list(data.coordinate.values) == expected["coordinates"]
    np.testing.assert_array_equal(data.q.sel(system=2, time=2.0).values, result.q[2])
    assert data.residual.dims == ("system", "time", "row") and data.attrs["model"] == "duffing"


@pytest.mark.parametrize("spec, field", [
    ({"model": "duffing", "integrator": {"rtol": -1}}, "integrator.rtol"),
    ({"model": "nosuch"}, "model"),
    ({"model": "duffing", "output": {"trajectories": [5]}}, "output.trajectories[0]"),
])
def test_refused_specs_raise_spec_error_naming_the_field(client, spec, field):
    with pytest.raises(ukes.SpecError) as caught:
        client.run(spec)
    assert caught.value.field == field
    assert caught.value.reason
    assert caught.value.code.name == "INVALID_ARGUMENT"


def test_limits_raise_limit_error(client):
    with pytest.raises(ukes.LimitError) as caught:
        client.submit({"model": "duffing", "sweep": {"count": 10**12}})
    assert caught.value.code.name in ("RESOURCE_EXHAUSTED", "INVALID_ARGUMENT")


def test_unknown_job_is_not_found(client):
    job = ukes.Job(client, "j-" + "0" * 32)
    with pytest.raises(ukes.UkesError) as caught:
        job.status()
    assert caught.value.code.name == "NOT_FOUND"


def test_cancel_ends_the_job_as_cancelled(client):
    job = client.submit({"model": "scara", "sweep": {"count": 2000000},
                         "integrator": {"t_end": 100.0}})
    job.cancel()
    with pytest.raises(ukes.JobFailed) as caught:
        job.result()
    assert caught.value.state == "cancelled"
    assert job.status()["state"] == "cancelled"


def test_a_cut_stream_resumes_with_every_chunk_exactly_once(client):
    job = client.submit(SWEEP)
    whole = [c.sequence for c in job.stream()]
    assert whole == list(range(1, len(whole) + 1)) and len(whole) > 4
    first = job.stream()
    head = [next(first).sequence for _ in range(3)]
    first.close()  # the stream is cut after three chunks
    rest = [c.sequence for c in job.stream(resume_after=head[-1])]
    assert head + rest == whole


def test_an_actuation_matrix_with_a_misjudged_gain_tracks_with_its_closed_form_error(client):
    # A unit mass follows x = sin t through an actuator of gain k, B = [k], which the controller
    # believes to be 1: its force is k (b - alpha e' - beta e), so the error obeys
    # e'' + k alpha e' + k beta e = (1 - k) sin t (docs/CONTROL.md).
    definition = {"format": "ukes-model/1", "name": "geared_mass", "coordinates": ["x"],
                  "parameters": [{"name": "k", "value": 1.0}],
                  "mass": {"diagonal": ["1"]}, "force": ["0"],
                  "position_constraints": ["x - sin(t)"],
                  "initial_state": {"q": ["0.2"], "qd": ["0.5"]},
                  "t_end": 6.0, "baumgarte": {"alpha": 4.0, "beta": 4.0}}
    k, alpha, beta, samples = 1.5, 4.0, 4.0, 31
    spec = (ukes.spec(definition).params(k=k).control(actuation=[["k"]])
            .integrator(method="dopri5", rtol=1e-12, atol=1e-12)
            .output(samples=samples, trajectories="all"))
    result = client.run(spec)
    assert result.ok.all() and result.control_effort_max[0] > 0

    c1, c0, f = k * alpha, k * beta, 1.0 - k
    # Particular solution a sin t + b cos t, then the homogeneous part from e(0), e'(0).
    a, b = np.linalg.solve([[c0 - 1.0, -c1], [c1, c0 - 1.0]], [f, 0.0])
    r1, r2 = np.roots([1.0, c1, c0])
    e0, v0 = 0.2 - b, (0.5 - 1.0) - a
    a2 = (v0 - r1 * e0) / (r2 - r1)
    a1 = e0 - a2
    t = np.linspace(0.0, 6.0, samples)
    closed = a * np.sin(t) + b * np.cos(t) + a1 * np.exp(r1 * t) + a2 * np.exp(r2 * t)
    np.testing.assert_allclose(result.trajectory_fields["residual"][0, :, 0], closed, atol=1e-8)


def test_a_registered_definition_runs_by_its_id(client):
    definition = json.loads(
        (SOURCE / "client/examples/models/double_pendulum_cartesian.json").read_text())
    model_id = client.register_model(definition)
    assert model_id.startswith("sha256:")
    assert client.register_model(definition) == model_id
    result = client.run({"model": model_id, "sweep": {"count": 5},
                         "integrator": {"method": "rk4", "t_end": 0.5}})
    assert result.count == 5 and result.ok.all()
    assert result.coordinates == list(client.describe(model_id).coordinates)


def test_registered_models_are_listed_across_pages_and_deleted(client):
    base = json.loads(
        (SOURCE / "client/examples/models/double_pendulum_cartesian.json").read_text())
    ids = [client.register_model(dict(base, name=f"paged_{k}")) for k in range(3)]
    listed = [m.id for m in client.models()]
    assert listed[:15] == [""] * 15  # the catalogue, then the registered ones in order
    assert [i for i in listed if i in ids] == ids
    assert all(not m.definition_json for m in client.models())
    client.delete_model(ids[1])
    assert ids[1] not in [m.id for m in client.models()]
    with pytest.raises(ukes.UkesError) as e:
        client.delete_model(ids[1])
    assert e.value.code.name == "NOT_FOUND"
    with pytest.raises(ukes.SpecError):
        client.run({"model": ids[1], "sweep": {"count": 2}})


def test_inputs_and_trajectory_files_equal_the_command_line_h5(client, tmp_path):
    h5py = pytest.importorskip("h5py")
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(SWEEP))
    cli = run_cli(["run", str(spec_file), "--out", str(tmp_path / "r.json"), "--h5",
                   str(tmp_path / "cli.h5")], tmp_path)
    assert cli.returncode == 0, cli.stderr
    result = client.run(SWEEP)
    # The stream carries each system's inputs: the sampled k1 and q0[0] of every system.
    k1 = result.params[:, result.param_names.index("k1")]
    assert np.all((9.0 <= k1) & (k1 <= 11.0)) and len(np.unique(k1)) == 40
    assert not np.isnan(result.q0).any() and not np.isnan(result.qd0).any()

    result.to_hdf5(tmp_path / "py.h5")
    with h5py.File(tmp_path / "cli.h5") as cli_file, h5py.File(tmp_path / "py.h5") as py_file:
        assert set(py_file.keys()) == set(cli_file.keys())
        for name in cli_file.keys():
            np.testing.assert_array_equal(py_file[name][()], cli_file[name][()], err_msg=name)
        for name, value in cli_file.attrs.items():
            if name != "ukes_version":
                assert py_file.attrs[name] == value, name
        assert py_file["q"].dims[1][0].name == cli_file["q"].dims[1][0].name == "/t"

    loaded = ukes.load(tmp_path / "r.json", h5=tmp_path / "cli.h5")
    ids = loaded.trajectory_ids
    np.testing.assert_array_equal(loaded.params[ids], result.params[ids])
    np.testing.assert_array_equal(loaded.q0[ids], result.q0[ids])
    for name, values in result.trajectory_fields.items():
        np.testing.assert_array_equal(loaded.trajectory_fields[name], values, err_msg=name)
    assert loaded.t0 == result.t0 == 0.0 and loaded.t_end == result.t_end == 2.0
    with pytest.raises(ValueError, match="does not belong"):
        ukes.load(tmp_path / "r.json", h5=_other_model_h5(client, tmp_path))


def _other_model_h5(client, tmp_path):
    path = tmp_path / "other.h5"
    client.run({"model": "pendulum_polar", "output": {"trajectories": "all"}}).to_hdf5(path)
    return path


def test_a_built_spec_and_a_yaml_file_run_as_their_json(client, tmp_path):
    built = (ukes.spec("duffing")
             .sweep(40, seed=7)
             .vary("params.k1", uniform=(9.0, 11.0))
             .vary("q0[0]", normal=(1.0, 0.05))
             .integrator(method="dopri5", t_end=2.0)
             .output(samples=11, trajectories="first:3"))
    assert built == SWEEP  # the builder's product is the plain spec
    yaml = pytest.importorskip("yaml")
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(SWEEP))
    from_yaml = client.run(tmp_path / "spec.yaml")
    from_builder = client.run(built)
    np.testing.assert_array_equal(from_yaml.q, from_builder.q)
    np.testing.assert_array_equal(from_yaml.params, from_builder.params)
    with pytest.raises(ValueError, match="exactly one of"):
        ukes.spec("duffing").vary("params.k1", uniform=(1, 2), normal=(1, 2))


def test_motor_torques_follow_the_flexible_joints_link_row_through_its_third_derivative(client):
    # Torques on the motors reach the link-velocity row only through the springs (relative
    # degree 3, docs/CONTROL.md): the controller makes psi obey (d/dt + alpha)^3 psi = 0, whose
    # solutions are e^(-alpha t) (c0 + c1 t + c2 t^2). Three samples fix c0, c1, c2; every other
    # sample must lie on that curve. A server with a GPU runs it on the CPU all the same.
    alpha, samples = 2.0, 31
    spec = (ukes.spec("flexible_joint").control(actuation=["m1ang", "m2ang"], relative_degree=3)
            .integrator(method="dopri5", t_end=6.0, rtol=1e-12, atol=1e-12)
            .output(samples=samples, trajectories="all"))
    result = client.run(spec)
    assert result.ok.all()
    t = np.linspace(0.0, 6.0, samples)
    psi = result.trajectory_fields["residual"][0, :, 0]
    basis = np.exp(-alpha * t)[:, None] * np.stack([np.ones_like(t), t, t * t], axis=1)
    coef = np.linalg.solve(basis[[0, 5, 10]], psi[[0, 5, 10]])
    np.testing.assert_allclose(psi, basis @ coef, atol=1e-8)
    assert abs(psi[-1]) < 1e-3 < abs(psi[0])
    control = result.trajectory_fields["control"][0]
    assert (control[:, :2] == 0).all() and np.abs(control[:, 2:]).max() > 1.0  # motors only


def test_controlled_run_carries_effort_controller_parameters_and_the_control_force(client,
                                                                                   tmp_path):
    spec = (ukes.spec("scara").control(params={"m4": 0.5}).assemble()
            .sweep(6, seed=1).vary("params.m4", uniform=[0.3, 0.8])
            .integrator(method="rk4", t_end=0.2, dt=1e-3)
            .output(samples=5, trajectories="first:2"))
    result = client.run(spec)
    m4 = result.param_names.index("m4")
    assert result.control_params.shape == (6, len(result.param_names))
    np.testing.assert_array_equal(result.control_params[:, m4], 0.5)
    assert np.ptp(result.params[:, m4]) > 0  # the plants differ, the controller does not
    assert (result.control_effort_max > 0).all()
    assert result.trajectory_fields["control"].shape == (2, 5, 4)
    # The payload mismatch shows as tracking error on the servo rows.
    assert (result.residual_max[:, 0] > 1e-9).all()
    # The ensemble statistics summarize the effort and the tracking error over the ok systems.
    effort = result.statistics["control_effort_max"]
    assert effort["count"] == 6
    for p in (50, 95, 99):
        np.testing.assert_allclose(effort[f"p{p}"],
                                   np.percentile(result.control_effort_max, p), rtol=1e-14)
    tracking = result.statistics["residual_max"]["position"][0]
    np.testing.assert_allclose(tracking["p95"], np.percentile(result.residual_max[:, 0], 95),
                               rtol=1e-14)

    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec))
    cli = run_cli(["run", str(spec_file), "--out", str(tmp_path / "r.h5")], tmp_path)
    assert cli.returncode == 0, cli.stderr
    assert "control_effort_max" in cli.stdout
    binary = ukes.load(tmp_path / "r.h5")
    for name in ("control_params", "control_effort_max", "residual_max", "q"):
        np.testing.assert_array_equal(getattr(binary, name), getattr(result, name), err_msg=name)
    assert binary.statistics["control_effort_max"] == effort


def test_a_stiff_friction_ring_sticks_where_the_radau_reference_does(client):
    # The friction ring with a regularization speed of 1e-6 (about -2e6 per second once the bead
    # sticks, docs/INTEGRATORS.md) by the stiff method through the server, against SciPy's Radau
    # on the reduced equation (tests/stiff/data/friction_ring_stick.json).
    reference = json.loads((SOURCE / "tests/stiff/data/friction_ring_stick.json").read_text())
    spec = (ukes.spec("friction_ring").params(eps=1e-6)
            .integrator(method="rosenbrock", rtol=1e-10, atol=1e-10, t_end=10.0)
            .output(samples=11, trajectories="all"))
    result = client.run(spec)
    assert result.ok.all()
    q = result.trajectory_fields["q"][0]
    np.testing.assert_allclose(np.arctan2(q[:, 1], q[:, 0]), reference["th"], atol=1e-7)
    assert result.steps[0] < 5000


def test_events_come_back_by_name_with_the_closed_form_times(client, tmp_path):
    # pendulum_polar released from pi/3 crosses the vertical at T/4 + k T/2, T = 4 sqrt(L/g)
    # K(sin(pi/6)) (the complete elliptic integral, by SciPy); SCARA's tool passes x = 0.04 of
    # its helix x = R sin(Omega t) at asin(0.8) / Omega, where a terminating event stops it
    # (docs/EVENTS.md). Through the server, and back from results.json and results.h5.
    from scipy.special import ellipk

    period = 4 * np.sqrt(1 / 9.81) * ellipk(np.sin(np.pi / 6) ** 2)
    spec = (ukes.spec("pendulum_polar").sweep(3).vary("params.m", uniform=(0.5, 2.0))
            .integrator(rtol=1e-12, atol=1e-12, t_end=5.0)
            .event("crossing", "th", max=16).event("leftward", "th", direction="falling"))
    result = client.run(spec)
    assert result.event_names == ["crossing", "leftward"]
    crossings = int((5.0 - period / 4) // (period / 2)) + 1
    assert (result.event_count == [crossings, (crossings + 1) // 2]).all()
    expected = period / 4 + np.arange(crossings) * period / 2
    np.testing.assert_allclose(result.event_t[:, 0, :crossings], np.tile(expected, (3, 1)),
                               atol=1e-8)
    assert np.isnan(result.event_t[:, 0, crossings:]).all()
    assert result.event_q.shape == (3, 2, 16, 2)
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec))
    for name in ("r.json", "r.h5"):
        cli = run_cli(["run", str(spec_file), "--out", str(tmp_path / name)], tmp_path)
        assert cli.returncode == 0, cli.stderr
        loaded = ukes.load(tmp_path / name)
        assert loaded.event_names == result.event_names
        for field in ("event_count", "event_t", "event_q", "event_qd"):
            np.testing.assert_array_equal(getattr(loaded, field), getattr(result, field),
                                          err_msg=f"{name} {field}")
    stop = (ukes.spec("scara").assemble().integrator(rtol=1e-12, atol=1e-12, t_end=2.0)
            .event("leaves_workspace", "-l1 * sin(q1) - l2 * sin(q1 + q2) - 0.04",
                   direction="rising", action="terminate"))
    stopped = client.run(stop)
    assert list(stopped.status) == ["terminated"]
    assert stopped.ok.all() and stopped.statistics["ok"] == 1
    np.testing.assert_allclose(stopped.t, np.arcsin(0.8) / (0.4 * np.pi), atol=1e-8)
