"""The connection to a ukes-server: discovery, model registration, jobs and their result streams.

    import ukes
    client = ukes.Client("127.0.0.1:50051")
    result = client.run({"model": "scara", "sweep": {"count": 1000}})
    result.q            # final coordinates, [system, coordinate]

    # One run sharded over several servers, merged into one Result (docs/SCALING.md).
    result = ukes.Client(["h1:50051", "h2:50051"]).run(spec)
"""
from __future__ import annotations

import json
import os
import pathlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterator, Mapping, Optional, Sequence, Union

import grpc
from google.protobuf import json_format

from ukes.errors import JobFailed, LimitError, from_rpc_error
from ukes.result import Result, ResultBuilder
from ukes.shards import each_address as resolve_each_address, merge, shard_specs
from ukes.spec import spec_text
from ukes.v1 import ukes_pb2 as pb
from ukes.v1 import ukes_pb2_grpc as pb_grpc

Spec = Union[Mapping[str, Any], str, os.PathLike]

# Stream failures worth resuming after (the server or the network went away for a moment).
TRANSIENT = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
             grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}
# gRPC's default 4 MiB receive limit is below the server's largest chunks.
CHANNEL_OPTIONS = [("grpc.max_receive_message_length", 64 << 20),
                   ("grpc.max_send_message_length", 64 << 20)]


class Job:
    """A job on the server. `stream()` yields its chunks as they come; `result()` waits for the
    end and returns the Result; `status()` and `cancel()` ask the server."""

    def __init__(self, client: "Client", job_id: str, queue_position: int = 0, server: int = 0):
        self.client = client
        self.id = job_id
        self.queue_position = queue_position
        self.server = server  # index into client.addresses
        self._builder = ResultBuilder()

    def status(self) -> dict[str, Any]:
        """The job's state ("running", ...), progress, chunks so far and message."""
        r = self.client._call("GetJob", pb.GetJobRequest(job_id=self.id), self.server)
        out = json_format.MessageToDict(r, preserving_proto_field_name=True)
        out["state"] = pb.JobState.Name(r.state).removeprefix("JOB_STATE_").lower()
        return out

    def cancel(self) -> str:
        """Stops the job; chunks already computed stay available. Returns the state it ended in."""
        r = self.client._call("CancelJob", pb.CancelJobRequest(job_id=self.id), self.server)
        return pb.JobState.Name(r.state).removeprefix("JOB_STATE_").lower()

    def stream(self, resume_after: int = 0,
               max_retries: int = 10) -> Iterator[pb.StreamJobResultsResponse]:
        """The job's chunks after `resume_after`, each exactly once, in order, until the end. A
        stream that breaks is resumed after the last chunk received (up to `max_retries` times in
        a row, waiting longer each time)."""
        last, failures = resume_after, 0
        while True:
            request = pb.StreamJobResultsRequest(job_id=self.id, resume_after=last)
            try:
                for chunk in self.client._stubs[self.server].StreamJobResults(request):
                    if chunk.sequence <= last:
                        continue
                    last, failures = chunk.sequence, 0
                    yield chunk
                    if chunk.WhichOneof("payload") == "end":
                        return
                return  # the server ended the stream without an end chunk: nothing more comes
            except grpc.RpcError as e:
                error = from_rpc_error(e)
                retry = isinstance(error, LimitError) and error.retry_after_s is not None
                if (error.code not in TRANSIENT and not retry) or failures >= max_retries:
                    raise error from None
                failures += 1
                time.sleep(min(5.0, 0.1 * 2 ** failures))

    def result(self, progress: bool = False) -> Result:
        """Waits for the job to end and returns its Result; raises JobFailed when it did not
        succeed. With `progress`, shows a progress bar (tqdm) while it runs."""
        bar = _progress_bar() if progress else None
        try:
            return self._follow(None if bar is None else bar.show)
        finally:
            if bar is not None:
                bar.close()

    def _follow(self, on_progress) -> Result:
        """result(), calling on_progress(systems_done, systems_total) at each progress report."""
        for chunk in self.stream(resume_after=self._builder.last_sequence):
            self._builder.add(chunk)
            if on_progress is not None and chunk.WhichOneof("payload") == "progress":
                on_progress(chunk.progress.systems_done, chunk.progress.systems_total)
        end = self._builder.end
        if end is None:
            raise JobFailed(self.id, "unknown", "the stream ended before the job did")
        if end.state != pb.JOB_STATE_SUCCEEDED:
            state = pb.JobState.Name(end.state).removeprefix("JOB_STATE_").lower()
            raise JobFailed(self.id, state, end.message)
        return self._builder.result()


class ShardedJob:
    """One run's shards, each a Job on one of the client's servers. `result()` follows them side
    by side and merges their Results into the whole run's (ukes.shards.merge)."""

    def __init__(self, jobs: Sequence[Job]):
        self.jobs = list(jobs)
        self.id = ",".join(j.id for j in self.jobs)

    def status(self) -> list[dict[str, Any]]:
        """Each shard's status, in system order."""
        return [j.status() for j in self.jobs]

    def cancel(self) -> list[str]:
        """Stops every shard; returns the states they ended in."""
        return [j.cancel() for j in self.jobs]

    def result(self, progress: bool = False) -> Result:
        """Waits for every shard and returns the merged Result. The first shard to fail cancels
        the others (their results could not make the whole run's) and its error is raised
        (JobFailed, or the stream's UkesError). With `progress`, one bar shows the shards'
        systems added up."""
        bar = _progress_bar() if progress else None
        done = [0] * len(self.jobs)
        total = [0] * len(self.jobs)
        lock = threading.Lock()
        failures: list[Exception] = []

        def follow(k: int) -> Result:
            def on_progress(systems_done: int, systems_total: int) -> None:
                with lock:
                    done[k], total[k] = systems_done, systems_total
                    bar.show(sum(done), sum(total))
            try:
                return self.jobs[k]._follow(None if bar is None else on_progress)
            except Exception as e:
                with lock:
                    failures.append(e)
                    if len(failures) > 1:
                        raise  # a shard cancelled because of the first failure
                for other in self.jobs:
                    if other is not self.jobs[k]:
                        try:
                            other.cancel()
                        except Exception:  # noqa: BLE001 - the first failure is the one to report
                            pass
                raise

        try:
            with ThreadPoolExecutor(max_workers=len(self.jobs)) as pool:
                futures = [pool.submit(follow, k) for k in range(len(self.jobs))]
            if failures:  # every shard has ended: the pool waited for them
                raise failures[0]
            return merge([f.result() for f in futures])
        finally:
            if bar is not None:
                bar.close()


class _ProgressBar:
    """A tqdm bar over systems, shown as (done, total) reports come."""

    def __init__(self, tqdm):
        self._bar = tqdm(total=0, unit="systems")

    def show(self, systems_done: int, systems_total: int) -> None:
        self._bar.total = systems_total
        self._bar.n = systems_done
        self._bar.refresh()

    def close(self) -> None:
        self._bar.close()


def _progress_bar() -> Optional[_ProgressBar]:
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return _ProgressBar(tqdm)


def _read_pem(path: Optional[Union[str, os.PathLike]]) -> Optional[bytes]:
    return None if path is None else pathlib.Path(path).read_bytes()


def _channel(address: str, ca: Optional[Union[str, os.PathLike]], token: Optional[str],
             client_cert: Optional[Union[str, os.PathLike]],
             client_key: Optional[Union[str, os.PathLike]]) -> grpc.Channel:
    if ca is None and token is None and client_cert is None:
        return grpc.insecure_channel(address, options=CHANNEL_OPTIONS)
    credentials = grpc.ssl_channel_credentials(
        root_certificates=_read_pem(ca), private_key=_read_pem(client_key),
        certificate_chain=_read_pem(client_cert))
    if token is not None:  # sent as `authorization: Bearer TOKEN`, over TLS only
        credentials = grpc.composite_channel_credentials(
            credentials, grpc.access_token_call_credentials(token))
    return grpc.secure_channel(address, credentials, options=CHANNEL_OPTIONS)


class Client:
    """A connection to ukes-server at `address` ("host:port"). Every failed call raises a
    ukes.UkesError (SpecError for a refused spec, naming its field; LimitError for a limit).

    A list of addresses shards every run over those servers (docs/SCALING.md): `submit` and
    `run` split the spec's systems into one shard per server (or `shards`, dealt to the servers
    in turn) and the Result is the whole run's, equal to one server's to the bit. Other calls
    go to the first server. With `each_address`, every address a name resolves to is a server
    of its own (a Kubernetes headless Service's pods).

    A server that serves TLS (README.md, "Running it for a lab"): `ca` names the PEM file of
    the CA that signed its certificate (None: the system's roots), `token` is a bearer token
    it accepts, `client_cert` and `client_key` a certificate for mutual TLS. Each defaults to
    the environment variable the `ukes` command reads: UKES_CA, UKES_TOKEN, UKES_CLIENT_CERT,
    UKES_CLIENT_KEY. Without any of them the connection is plain text (loopback servers)."""

    def __init__(self, address: Union[str, Sequence[str]] = "127.0.0.1:50051",
                 timeout: float = 30.0, *,
                 ca: Optional[Union[str, os.PathLike]] = None, token: Optional[str] = None,
                 client_cert: Optional[Union[str, os.PathLike]] = None,
                 client_key: Optional[Union[str, os.PathLike]] = None,
                 each_address: bool = False):
        self.addresses = [address] if isinstance(address, str) else list(address)
        if not self.addresses:
            raise ValueError("Client needs at least one server address")
        if each_address:
            self.addresses = resolve_each_address(self.addresses)
        self.address = self.addresses[0]
        self.timeout = timeout
        env = os.environ.get
        self._channels = [_channel(a, ca or env("UKES_CA"), token or env("UKES_TOKEN"),
                                   client_cert or env("UKES_CLIENT_CERT"),
                                   client_key or env("UKES_CLIENT_KEY")) for a in self.addresses]
        self._stubs = [pb_grpc.UkesServiceStub(c) for c in self._channels]
        self._stub = self._stubs[0]

    def close(self) -> None:
        """Closes the connections (a `with` block does it on exit)."""
        for channel in self._channels:
            channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, request: Any, server: int = 0) -> Any:
        try:
            return getattr(self._stubs[server], method)(request, timeout=self.timeout)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    def server_info(self) -> dict[str, Any]:
        """The server's version, backends (and GPU, or why none), threads and limits."""
        r = self._call("GetServerInfo", pb.GetServerInfoRequest())
        return json_format.MessageToDict(r, preserving_proto_field_name=True)

    def models(self) -> list[pb.Model]:
        """The catalogue models, then the user models this client's principal registered (every
        page of ListModels; without their definitions, which describe() gives)."""
        models, token = [], ""
        while True:
            page = self._call("ListModels", pb.ListModelsRequest(page_token=token))
            models.extend(page.models)
            token = page.next_page_token
            if not token:
                return models

    def describe(self, name: str) -> pb.Model:
        """One model by catalogue name or registered id: coordinates, rows, parameters, defaults."""
        return self._call("DescribeModel", pb.DescribeModelRequest(name=name)).model

    def register_model(self, definition: Union[Mapping[str, Any], str]) -> str:
        """Registers a model definition (docs/MODEL_FORMAT.md; a dict or JSON text) and returns
        its content id, which specs may then give as their "model"."""
        text = definition if isinstance(definition, str) else json.dumps(definition)
        return self._call("RegisterModel", pb.RegisterModelRequest(definition_json=text)).model_id

    def delete_model(self, model_id: str) -> None:
        """Removes a model this client's principal registered; raises UkesError with code
        NOT_FOUND when it has none with that id."""
        self._call("DeleteModel", pb.DeleteModelRequest(model_id=model_id))

    def submit(self, spec: Spec, timeout_s: float = 0.0, system_summaries: bool = True,
               shards: Optional[int] = None) -> Union[Job, ShardedJob]:
        """Queues a job for `spec` (a dict, a ukes.spec builder, or the path of a JSON or YAML
        spec file) and returns it at once. The server stops it after `timeout_s` seconds (0: no
        limit). With several servers, or `shards` > 1, the run is split into shards (one per
        server by default, dealt to the servers in turn) and a ShardedJob comes back."""
        text = spec_text(spec)
        shards = shards or len(self.addresses)
        if shards == 1:
            return self._submit(text, timeout_s, system_summaries, 0)
        parts = shard_specs(json.loads(text), shards)
        return ShardedJob([self._submit(json.dumps(p), timeout_s, system_summaries,
                                        k % len(self.addresses)) for k, p in enumerate(parts)])

    def _submit(self, text: str, timeout_s: float, system_summaries: bool, server: int) -> Job:
        request = pb.SubmitJobRequest(spec_json=text, timeout_s=timeout_s,
                                      system_summaries=system_summaries)
        r = self._call("SubmitJob", request, server)
        return Job(self, r.job_id, r.queue_position, server)

    def run(self, spec: Spec, progress: bool = False, timeout_s: float = 0.0,
            shards: Optional[int] = None) -> Result:
        """Runs `spec` (a dict, a ukes.spec builder, or the path of a JSON or YAML spec file) on
        the server and returns its Result: per-system final states, statuses, residual and force
        maxima, the ensemble statistics, each system's inputs and any recorded trajectories, as
        numpy arrays. With `progress`, shows a
        progress bar. Raises SpecError (with .field) when the server refuses the spec and
        JobFailed when the job does not succeed. Several servers, or `shards`, shard the run
        as `submit` does."""
        return self.submit(spec, timeout_s=timeout_s, shards=shards).result(progress=progress)
