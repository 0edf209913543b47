"""One run sharded (docs/SCALING.md) over several servers with ukes.Client([...]), and over a Dask
LocalCluster with ukes.dask, gives one server's Result to the bit: every per-system array, the
recorded trajectories in the spec's order and the ensemble statistics (recomputed by
ukes.shards in the server's order of operations)."""
import copy

import distributed
import numpy as np
import pytest

import ukes
import ukes.client
import ukes.dask
import ukes.record
import ukes.shards
from conftest import BUILD

SPEC = {  # on the CPU wherever it runs: the Dask workers' `ukes` would take a GPU (or CI's
    # emulated one), whose last bits differ from the CPU server's
    "model": "scara", "device": "cpu",
    "sweep": {"count": 37, "seed": 3, "sampler": "lhs",
              "vary": {"q0[0]": {"normal": [0.0, 0.02]}, "params.m1": {"uniform": [0.9, 1.1]}}},
    "integrator": {"method": "dopri5", "t_end": 0.05},
    "output": {"samples": 5, "trajectories": [36, 2, 20, 0]},
}


@pytest.fixture(scope="module")
def second_server(tmp_path_factory):
    with ukes.local_server(BUILD / "ukes-server", threads=1,
                           work_dir=tmp_path_factory.mktemp("second")) as address:
        yield address


@pytest.fixture(scope="module")
def one_run(server):
    with ukes.Client(server) as client:
        return client.run(SPEC)


def assert_same_run(result, expected):
    assert result.count == expected.count == 37
    for field in ukes.record.FIELDS:
        np.testing.assert_array_equal(getattr(result, field.name), getattr(expected, field.name),
                                      err_msg=field.name)
    assert result.statistics == expected.statistics  # to the bit, not to a tolerance
    assert list(result.trajectory_ids) == [36, 2, 20, 0]
    np.testing.assert_array_equal(result.trajectory_ids, expected.trajectory_ids)
    assert result.trajectory_fields.keys() == expected.trajectory_fields.keys()
    for name, values in expected.trajectory_fields.items():
        np.testing.assert_array_equal(result.trajectory_fields[name], values, err_msg=name)


def test_ranges_are_the_command_line_clients():
    assert ukes.shards.shard_ranges(10, 3) == [(0, 4), (4, 3), (7, 3)]
    assert ukes.shards.shard_ranges(2, 7) == [(0, 1), (1, 1)]
    with pytest.raises(ValueError):
        ukes.shards.shard_specs(dict(SPEC, shard={"first": 0, "count": 1}), 2)


@pytest.mark.parametrize("shards", [None, 3, 7])
def test_a_client_of_several_servers_gives_one_servers_result(server, second_server, one_run,
                                                             shards):
    with ukes.Client([server, second_server]) as client:
        job = client.submit(SPEC, shards=shards)
        assert len(job.jobs) == (shards or 2)
        assert {j.server for j in job.jobs} == {0, 1}
        result = job.result()
    assert_same_run(result, one_run)
    assert "shard" not in result.spec and result.first_id == 0


def test_each_address_of_a_name_is_a_server(server, one_run):
    port = server.rpartition(":")[2]
    assert ukes.shards.each_address([f"localhost:{port}"]) == [f"ipv4:127.0.0.1:{port}"]
    with pytest.raises(ValueError, match="cannot resolve 'no-such-host.invalid:1'"):
        ukes.shards.each_address(["no-such-host.invalid:1"])
    with ukes.Client(f"localhost:{port}", each_address=True) as client:
        assert client.addresses == [f"ipv4:127.0.0.1:{port}"]
        assert_same_run(client.run(SPEC, shards=2), one_run)


def test_a_shard_holds_its_systems_of_the_whole_run(server, one_run):
    part = copy.deepcopy(SPEC)
    part["shard"] = {"first": 20, "count": 10}
    with ukes.Client(server) as client:
        shard = client.run(part)
    assert shard.first_id == 20 and shard.count == 10
    np.testing.assert_array_equal(shard.q, one_run.q[20:30])
    assert list(shard.trajectory_ids) == [20]  # whole-run ids
    np.testing.assert_array_equal(shard.trajectory_fields["q"][0],
                                  one_run.trajectory_fields["q"][2])
    with pytest.raises(ValueError, match="leave systems 0..19 out"):
        ukes.shards.merge([shard])


def test_shards_on_a_dask_cluster_give_one_servers_result(server, one_run):
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as dask:
        # On the workers, with the `ukes` command: results files merged.
        local = ukes.dask.run(SPEC, dask, shards=3, binary=BUILD / "ukes", threads=1)
        # As jobs on a server.
        remote = ukes.dask.run(SPEC, dask, server=server)
    assert_same_run(local, one_run)
    assert_same_run(remote, one_run)


def test_one_bar_adds_the_shards_progress_up(server, second_server, one_run, monkeypatch):
    shown = []

    class Recorder:
        def show(self, systems_done, systems_total):
            shown.append((systems_done, systems_total))

        def close(self):
            pass

    monkeypatch.setattr(ukes.client, "_progress_bar", Recorder)
    with ukes.Client([server, second_server]) as client:
        result = client.submit(SPEC, shards=3).result(progress=True)
    assert_same_run(result, one_run)
    assert shown[-1] == (37, 37)  # every shard's last report: all its systems
    assert all(done <= total <= 37 for done, total in shown)


def test_the_first_shard_to_fail_cancels_the_others(server, second_server):
    long = dict(SPEC, sweep=dict(SPEC["sweep"], count=4000), output={"samples": 2},
                integrator={"method": "rk4", "t_end": 20.0, "dt": 1e-4})  # minutes of work
    with ukes.Client([server, second_server]) as client:
        job = client.submit(long, shards=2)
        try:
            job.jobs[1].cancel()
            with pytest.raises(ukes.JobFailed) as failed:
                job.result()
            assert failed.value.job_id == job.jobs[1].id and failed.value.state == "cancelled"
            assert [s["state"] for s in job.status()] == ["cancelled", "cancelled"]
        finally:
            job.cancel()
