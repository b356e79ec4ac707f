"""Avro schemas, their values and their evolutions, for tests of the reference's Avro serializer.

``raw_avro_schemas()`` draws Avro schemas (JSON objects) of every shape the reference reads;
``avro_type_of(schema)`` is their ``reference.types.AvroType``; ``schema_values(schema)`` and
``avro_values(...)`` draw values; ``change_labels`` / ``apply_change`` evolve a schema by one of
the labelled ``COMPATIBLE_CHANGES`` or ``INCOMPATIBLE_CHANGES``. ``strategies.schemas()`` draws
the same Avro types inside nested schemas.
"""

from ._avro import (
    COMPATIBLE_CHANGES,
    INCOMPATIBLE_CHANGES,
    apply_change,
    avro_schemas,
    avro_type_of,
    avro_values,
    change_labels,
    raw_avro_schemas,
    schema_values,
)

__all__ = [
    "COMPATIBLE_CHANGES",
    "INCOMPATIBLE_CHANGES",
    "apply_change",
    "avro_schemas",
    "avro_type_of",
    "avro_values",
    "change_labels",
    "raw_avro_schemas",
    "schema_values",
]
