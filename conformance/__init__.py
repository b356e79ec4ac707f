"""The conformance harness (being written)."""
