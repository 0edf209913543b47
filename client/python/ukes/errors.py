"""Exceptions of the ukes client: every gRPC failure becomes a UkesError carrying its status code;
a refused spec is a SpecError naming the field, a limit a LimitError."""
from __future__ import annotations

import grpc

# Trailing metadata the server attaches (service/protocol/metadata.hpp).
FIELD_KEY = "ukes-field"
RETRY_AFTER_KEY = "ukes-retry-after-s"


class UkesError(Exception):
    """A call to the server failed. `code` is the grpc.StatusCode, `details` the server's text."""

    def __init__(self, code: grpc.StatusCode, details: str):
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details


class SpecError(UkesError):
    """The server refused a spec or model definition (INVALID_ARGUMENT). `field` names the part
    it refused (for example "integrator.rtol" or "model.force[1]"), `reason` says why."""

    def __init__(self, code: grpc.StatusCode, details: str, field: str):
        super().__init__(code, details)
        self.field = field
        prefix = field + ": "
        self.reason = details[len(prefix):] if details.startswith(prefix) else details


class LimitError(UkesError):
    """A limit of the server was exceeded (RESOURCE_EXHAUSTED): `field` names what to shrink where
    the server said; `retry_after_s` is set when waiting will help (a full queue)."""

    def __init__(self, code: grpc.StatusCode, details: str, field: str,
                 retry_after_s: float | None):
        super().__init__(code, details)
        self.field = field
        self.retry_after_s = retry_after_s


class JobFailed(UkesError):
    """A job ended without succeeding (failed, cancelled, deadline exceeded). `state` is its final
    state's name, `job_id` the job."""

    def __init__(self, job_id: str, state: str, message: str):
        super().__init__(grpc.StatusCode.ABORTED, f"job {job_id} {state}: {message}")
        self.job_id = job_id
        self.state = state


def from_rpc_error(error: grpc.RpcError) -> UkesError:
    """The exception that says what `error` (raised by a stub call) means."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    details = (error.details() if hasattr(error, "details") else str(error)) or ""
    metadata = {}
    if hasattr(error, "trailing_metadata") and error.trailing_metadata():
        metadata = {m.key: m.value for m in error.trailing_metadata()}
    field = metadata.get(FIELD_KEY, "")
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return SpecError(code, details, field)
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        retry = metadata.get(RETRY_AFTER_KEY)
        return LimitError(code, details, field, float(retry) if retry else None)
    return UkesError(code, details)
