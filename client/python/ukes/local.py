"""A ukes-server of one's own on this machine, for scripts, notebooks and tests: started on
127.0.0.1 with a port the system picks, stopped when the `with` block ends.

    with ukes.local_server("build/ukes-server") as address:
        result = ukes.Client(address).run({"model": "duffing"})
"""
from __future__ import annotations

import contextlib
import os
import pathlib
import shutil
import subprocess
import tempfile
import time
from typing import TYPE_CHECKING, Iterator, Optional, Sequence, Union

if TYPE_CHECKING:
    from ukes.client import Client


def find_program(name: str, binary: Union[str, os.PathLike, None], env: str) -> pathlib.Path:
    """The program `name` of this build: `binary`, else $`env`, else ./build/`name`, else `name`
    on PATH. Raises FileNotFoundError naming where it looked."""
    for c in (binary, os.environ.get(env), f"build/{name}", shutil.which(name)):
        if c and pathlib.Path(c).is_file():
            return pathlib.Path(c).resolve()
    raise FileNotFoundError(f"no {name}: pass its path, set {env}, build it in ./build "
                            "(README.md) or put it on PATH")


def find_server(binary: Union[str, os.PathLike, None] = None) -> pathlib.Path:
    """The ukes-server to start: `binary`, else $UKES_SERVER, else ./build/ukes-server, else
    `ukes-server` on PATH. Raises FileNotFoundError naming where it looked."""
    return find_program("ukes-server", binary, "UKES_SERVER")


@contextlib.contextmanager
def local_server(binary: Union[str, os.PathLike, None] = None, *, device: str = "cpu",
                 threads: int = 0, extra_args: Sequence[str] = (),
                 start_timeout_s: float = 30.0,
                 work_dir: Optional[Union[str, os.PathLike]] = None) -> Iterator[str]:
    """Starts a ukes-server (see `find_server`) on 127.0.0.1 and yields its address
    ("127.0.0.1:PORT"); stops it on exit. `device` is passed as --device ("cpu", "gpu",
    "auto"), `threads` as --threads (0: the server's default). Its job data and log live in
    `work_dir` (a temporary directory when None; the log is server.log there). Raises
    RuntimeError with the server's log when it does not start within `start_timeout_s`."""
    with contextlib.ExitStack() as stack:
        work = pathlib.Path(work_dir) if work_dir else pathlib.Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="ukes-server-")))
        port_file = work / "port"
        port_file.unlink(missing_ok=True)
        log = stack.enter_context(open(work / "server.log", "wb"))
        args = [find_server(binary), "--port", "0", "--port-file", port_file, "--data-dir",
                work / "data", "--device", device]
        if threads > 0:
            args += ["--threads", str(threads)]
        process = subprocess.Popen([*args, *extra_args], stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=log)
        try:
            yield f"127.0.0.1:{_wait_for_port(process, port_file, start_timeout_s, work)}"
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_for_port(process: subprocess.Popen, port_file: pathlib.Path, timeout_s: float,
                   work: pathlib.Path) -> int:
    deadline = time.monotonic() + timeout_s
    while not (port_file.exists() and port_file.read_text().strip()):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            log = (work / "server.log").read_text(errors="replace")[-4000:]
            raise RuntimeError("ukes-server did not start:\n" + log)
        time.sleep(0.02)
    return int(port_file.read_text())


@contextlib.contextmanager
def connect(address: Optional[str] = None, binary: Union[str, os.PathLike, None] = None,
            timeout: float = 600.0, **server_options) -> Iterator["Client"]:
    """A Client of the server at `address`, or, when None, of a local_server(binary,
    **server_options) started for the `with` block: the examples' way to run anywhere."""
    from ukes.client import Client

    with contextlib.ExitStack() as stack:
        if address is None:
            address = stack.enter_context(local_server(binary, **server_options))
        yield stack.enter_context(Client(address, timeout=timeout))
