"""ukes: a Python client of ukes-server, ensembles of constrained mechanical systems
(Udwadia-Kalaba equation) integrated on the server, results as numpy arrays.

    import ukes
    with ukes.Client("127.0.0.1:50051") as client:
        result = client.run({"model": "duffing", "sweep": {"count": 100}})
"""
from ukes.client import Client, Job, ShardedJob
from ukes.errors import JobFailed, LimitError, SpecError, UkesError
from ukes.files import load
from ukes.local import connect, local_server
from ukes.result import Result
from ukes.spec import SpecBuilder, spec
from ukes import plot  # matplotlib is imported when a plot is drawn
from ukes import record
from ukes import shards

__all__ = [
    "Client", "Job", "ShardedJob", "Result", "load", "connect", "local_server", "plot", "record",
    "shards", "spec", "SpecBuilder",
    "UkesError", "SpecError", "LimitError", "JobFailed",
]
__version__ = "0.1.0"
