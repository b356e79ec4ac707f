"""Hypothesis strategies for schemas, values and evolutions (being written)."""
