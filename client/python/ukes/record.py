"""The per-system record as the protocol defines it: the fields of SystemSummaries (one per row of
kernels/ensemble/system_record.hpp's tables, the same names), their element types and their
`record_width` option. Every per-system array of a Result is named and sized from here, so a field
added to the record reaches Python users without an edit to the client."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from google.protobuf.descriptor import FieldDescriptor

from ukes.v1 import ukes_pb2 as pb

_NOT_RECORD = ("first_id", "count")
RESIDUAL_LEVELS = ("position", "position_rate", "velocity")


@dataclass(frozen=True)
class RecordShape:
    """The sizes of one run's record: a model of n coordinates, residual_slots slots and params
    parameters; the controller's parameters only in a controlled run (docs/CONTROL.md); `events`
    events keeping `event_records` records each (docs/EVENTS.md)."""
    n: int
    residual_slots: int
    params: int
    controlled: bool = False
    events: int = 0
    event_records: int = 0


@dataclass(frozen=True)
class RecordField:
    """One per-system field: its name, the width kind (pb.RecordWidth) and how it is stored."""
    name: str
    width: int
    is_status: bool
    dtype: type

    def dims(self, shape: RecordShape) -> tuple[int, ...]:
        """One system's array shape: () for scalars, (n,), (slots,), (params,); (events,),
        (events, records) and (events, records, n) for the event fields."""
        return {pb.RECORD_WIDTH_ONE: (), pb.RECORD_WIDTH_COORDINATES: (shape.n,),
                pb.RECORD_WIDTH_RESIDUAL_SLOTS: (shape.residual_slots,),
                pb.RECORD_WIDTH_PARAMS: (shape.params,),
                pb.RECORD_WIDTH_CONTROL_PARAMS: (shape.params if shape.controlled else 0,),
                pb.RECORD_WIDTH_EVENTS: (shape.events,),
                pb.RECORD_WIDTH_EVENT_RECORDS: (shape.events, shape.event_records),
                pb.RECORD_WIDTH_EVENT_COORDINATES: (shape.events, shape.event_records, shape.n),
                }[self.width]

    def empty(self, count: int, shape: RecordShape) -> np.ndarray:
        """Room for `count` systems: NaN (reals), 0 (counts), "unspecified" (statuses); shape
        (count,) + dims(shape)."""
        size = (count,) + self.dims(shape)
        if self.is_status:
            return np.full(size, "unspecified", dtype=object)
        return np.full(size, np.nan) if self.dtype is np.float64 else np.zeros(size, self.dtype)


def _field(d: FieldDescriptor) -> RecordField:
    is_status = d.type == FieldDescriptor.TYPE_ENUM
    dtype = np.float64 if d.type == FieldDescriptor.TYPE_DOUBLE else np.int64
    return RecordField(d.name, d.GetOptions().Extensions[pb.record_width], is_status,
                       object if is_status else dtype)


FIELDS: tuple[RecordField, ...] = tuple(
    _field(d) for d in pb.SystemSummaries.DESCRIPTOR.fields if d.name not in _NOT_RECORD)


def status_name(value: int) -> str:
    """A SystemStatus as docs/RUNSPEC.md names it ("ok", "max_steps", ...)."""
    return pb.SystemStatus.Name(value).removeprefix("SYSTEM_STATUS_").lower()


# The status values as result files store them: docs/RUNSPEC.md's order (SystemStatus minus one).
STATUS_NAMES = [status_name(v) for v in sorted(pb.SystemStatus.values()) if v > 0]
