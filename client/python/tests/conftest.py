"""A real ukes-server for the client's tests: started on 127.0.0.1 with a free port (it writes the
port it bound to a file), on the CPU, stopped at the end of the session. UKES_BINARY_DIR names the
build tree (ctest sets it, and PYTHONPATH to the build's copy of the package)."""
import os
import pathlib
import subprocess

import pytest

BUILD = pathlib.Path(os.environ.get("UKES_BINARY_DIR", "build"))
SOURCE = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """The address ("127.0.0.1:PORT") of a running ukes-server."""
    from ukes import local_server

    with local_server(BUILD / "ukes-server", threads=1,
                      work_dir=tmp_path_factory.mktemp("server")) as address:
        yield address


@pytest.fixture
def client(server):
    import ukes
    with ukes.Client(server) as c:
        yield c


def run_cli(args, cwd):
    """Runs the built `ukes` program on the CPU; returns the completed process."""
    env = dict(os.environ, UKES_DISABLE_GPU="1")
    return subprocess.run([BUILD / "ukes", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
