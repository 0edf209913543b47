"""A server whose GPU module reports several devices (the host emulation, UKES_HOST_GPU_DEVICES;
kernels/backend/host_gpu/README.md) spreads a job over them (docs/SCALING.md, "Every GPU of a
node"): the Result is that of the same job on one of its GPUs, to the bit."""
import numpy as np
import pytest

import ukes
import ukes.record
from conftest import BUILD

HOST_GPU = BUILD / "libukes_host_gpu.so"

pytestmark = pytest.mark.skipif(not HOST_GPU.exists(),
                                reason="this build has no host emulation of the GPU module")


@pytest.fixture(scope="module")
def three_gpu_server(tmp_path_factory):
    with pytest.MonkeyPatch.context() as env:  # the server inherits these
        env.setenv("UKES_CUDA_MODULE", str(HOST_GPU))
        env.setenv("UKES_HOST_GPU_DEVICES", "3")
        env.setenv("UKES_HOST_GPU_MAX_CHUNK", "64")
        env.delenv("UKES_DISABLE_GPU", raising=False)
        with ukes.local_server(BUILD / "ukes-server", device="gpu", threads=1,
                               work_dir=tmp_path_factory.mktemp("gpus")) as address:
            yield address


def sweep(device_ids):
    return (ukes.spec("scara").sweep(count=211, seed=5).vary("params.m4", uniform=(0.5, 1.5))
            .integrator(method="rk4", t_end=0.1, dt=0.002)
            .output(samples=4, trajectories=[0, 100, 210])
            .device("gpu", device_ids=device_ids))


def test_the_builder_writes_device_ids():
    assert sweep([2, 0])["device_ids"] == [2, 0]
    assert "device_ids" not in ukes.spec("scara").device("gpu")


def test_a_job_on_three_gpus_is_the_job_on_one(three_gpu_server):
    with ukes.Client(three_gpu_server) as client:
        assert client.server_info()["gpu"]["devices"] == 3
        # The server ends a job past timeout_s: a stuck run fails the test instead of hanging it.
        one = client.run(sweep([1]), timeout_s=120)
        three = client.run(sweep(None), timeout_s=120)
        reordered = client.run(sweep([2, 0]), timeout_s=120)
    for result in (three, reordered):
        assert result.count == one.count == 211
        for field in ukes.record.FIELDS:
            np.testing.assert_array_equal(getattr(result, field.name), getattr(one, field.name),
                                          err_msg=field.name)
        assert result.statistics == one.statistics
        for name, values in one.trajectory_fields.items():
            np.testing.assert_array_equal(result.trajectory_fields[name], values, err_msg=name)


def test_a_gpu_the_server_lacks_is_refused_naming_the_field(three_gpu_server):
    with ukes.Client(three_gpu_server) as client:
        with pytest.raises(ukes.SpecError, match=r"device_ids\[0\]: no GPU 3 here \(3 found\)"):
            client.run(sweep([3]), timeout_s=120)
