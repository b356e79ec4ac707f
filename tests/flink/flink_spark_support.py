"""What the Spark tests of Flink savepoints ship to the executors (``SparkContext.addPyFile``):
the new job's Python stand-in of SavepointPojo with a field added, and its descriptors. Nothing
is registered on import (a registration for the whole session would change how other tests
read SavepointPojo): the tests register it for their own duration (``pojo_with_note``)."""

from __future__ import annotations

import dataclasses

from reference import serializers as s
from reference.backends import ValueStateDescriptor


@dataclasses.dataclass
class PojoWithNote:
    """Python stand-in of SavepointPojo with the field ``note`` added (POJO_WITH_A_NOTE)."""

    name: str | None = dataclasses.field(default=None, metadata={"serializer": s.StringSerializer()})
    total: int = dataclasses.field(default=0, metadata={"serializer": s.LongSerializer()})
    ratio: float = dataclasses.field(default=0.0, metadata={"serializer": s.DoubleSerializer()})
    tag: int | None = dataclasses.field(default=None, metadata={"serializer": s.IntSerializer()})
    note: str | None = dataclasses.field(default=None, metadata={"serializer": s.StringSerializer()})


#: The Java source of SavepointPojo with the field ``note`` added.
POJO_WITH_A_NOTE = """
public class SavepointPojo {
    public String name;
    public long total;
    public double ratio;
    public Integer tag;
    public String note;

    public SavepointPojo() {}
}
"""
ROW_WITH_F3 = s.RowSerializer([("f0", s.StringSerializer(), True), ("f1", s.LongSerializer(), True),
                               ("f2", s.DoubleSerializer(), True), ("f3", s.StringSerializer(), True)])


def new_states() -> dict[str, dict[str, ValueStateDescriptor]]:
    """The new job's descriptors: the POJO with a field added, the Row with a field added."""
    return {"keyed-states": {"pojo": ValueStateDescriptor("pojo", s.PojoSerializer(PojoWithNote)),
                             "row": ValueStateDescriptor("row", ROW_WITH_F3)}}


#: The new job's descriptors module, as a user writes it for ``--serializers new_job:STATES``
#: (this directory on PYTHONPATH): ``STATES`` are ``new_states()``, ``POJO_STATES`` the POJO's
#: alone.
NEW_JOB_MODULE = """
import reference
from flink_spark_support import PojoWithNote, new_states

reference.register_type(PojoWithNote, "SavepointPojo")
STATES = new_states()
POJO_STATES = {"keyed-states": {"pojo": STATES["keyed-states"]["pojo"]}}
"""
