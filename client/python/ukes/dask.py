"""One run's shards mapped over a Dask cluster (Debian's python3-distributed), for labs that run
Dask already (docs/SCALING.md). Each task runs one shard: with `server`, as a job on that
ukes-server; otherwise on the worker itself, with the `ukes` command-line client in-process.
The Results are merged into the whole run's, equal to one run's to the bit.

    from dask.distributed import Client, LocalCluster
    import ukes.dask
    with LocalCluster(n_workers=4, threads_per_worker=1) as cluster, Client(cluster) as dask:
        result = ukes.dask.run(spec, dask, shards=16)
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import tempfile
from typing import Any, Optional, Union

from ukes.files import load
from ukes.local import find_program
from ukes.result import Result
from ukes.shards import merge, shard_specs
from ukes.spec import spec_text

Path = Union[str, os.PathLike]


def find_cli(binary: Optional[Path] = None) -> pathlib.Path:
    """The `ukes` command to run shards with: `binary`, else $UKES_CLI, else ./build/ukes, else
    `ukes` on PATH. Raises FileNotFoundError naming where it looked."""
    return find_program("ukes", binary, "UKES_CLI")


def run(spec: Any, dask_client: Any, shards: Optional[int] = None, *,
        server: Optional[str] = None, binary: Optional[Path] = None,
        threads: int = 0) -> Result:
    """Runs `spec` (a dict, a ukes.spec builder or a spec file's path) as `shards` shards (default:
    one per Dask worker) on the cluster of `dask_client` and returns the merged Result. With
    `server` every shard is a job on that ukes-server; otherwise each runs where its task runs,
    through the `ukes` command (`binary`, see find_cli; on every worker) with `threads` CPU
    threads (0: all of the worker's machine). Raises the first failed shard's error."""
    doc = json.loads(spec_text(spec))
    if shards is None:
        shards = max(1, len(dask_client.scheduler_info().get("workers", {})))
    parts = shard_specs(doc, shards)
    cli = None if server else str(find_cli(binary))
    futures = dask_client.map(run_shard, parts, server=server, cli=cli, threads=threads,
                              pure=False)
    return merge(dask_client.gather(futures), spec=doc)


def run_shard(spec: dict[str, Any], server: Optional[str] = None, cli: Optional[str] = None,
              threads: int = 0) -> Result:
    """One shard's Result: a job on `server`, or a run of the `ukes` command `cli` here."""
    if server is not None:
        from ukes.client import Client

        with Client(server, timeout=600.0) as client:
            return client.run(spec)
    with tempfile.TemporaryDirectory(prefix="ukes-shard-") as tmp:
        work = pathlib.Path(tmp)
        (work / "spec.json").write_text(json.dumps(spec))
        command = [cli or str(find_cli()), "run", "spec.json", "--out", "results.h5", "--h5",
                   "trajectories.h5"]
        if threads > 0:
            command += ["--threads", str(threads)]
        done = subprocess.run(command, cwd=work, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"ukes run of shard {spec.get('shard')} failed "
                               f"({done.returncode}): {done.stderr.strip()[-2000:]}")
        return load(work / "results.h5", h5=work / "trajectories.h5")
