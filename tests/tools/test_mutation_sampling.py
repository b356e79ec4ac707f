"""tools/mutation.py samples a fixed set of mutants (its --seed) and a fresh one each run (its
--fresh-seed), and states both seeds so that a run can be judged again."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _tool():
    spec = importlib.util.spec_from_file_location("mutation_tool", os.path.join(ROOT, "tools", "mutation.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_fixed_sample_stays_and_the_fresh_one_adds_other_sites():
    tool = _tool()
    fixed = tool.sample(ROOT, 16, 15)
    both = tool.fixed_and_fresh(ROOT, 16, 15, 8, 4242)
    assert [site for which, site in both if which == "fixed"] == fixed, "got another fixed sample, should be --seed's"
    fresh = [site for which, site in both if which == "fresh"]
    assert len(fresh) == 8, f"got {len(fresh)} fresh sites, should be 8"
    overlap = {tool._key(s) for s in fresh} & {tool._key(s) for s in fixed}
    assert not overlap, f"got fresh sites {sorted(overlap)} of the fixed sample, should be other sites"
    again = tool.fixed_and_fresh(ROOT, 16, 15, 8, 4242)
    assert again == both, "got another fresh sample for the same --fresh-seed, should be the same"
    other = [site for which, site in tool.fixed_and_fresh(ROOT, 16, 15, 8, 4243) if which == "fresh"]
    assert other != fresh, "got the same fresh sample for another --fresh-seed, should differ"


def test_the_report_states_both_seeds():
    tool = _tool()
    line = tool.seeds_line(argparse.Namespace(sample=64, seed=15, fresh_sample=16, fresh_seed=4242))
    assert "seed 15" in line and "--fresh-seed 4242" in line, f"got {line!r}, should state both seeds"
    none = tool.seeds_line(argparse.Namespace(sample=64, seed=15, fresh_sample=0, fresh_seed=4242))
    assert "no fresh sample" in none, f"got {none!r}, should say there is no fresh sample"


def test_a_bare_annotation_is_a_site_only_where_it_declares_a_field():
    """Deleting ``kind: RowKind`` in a plain class changes nothing but ``__annotations__`` (an
    equivalent mutant the tool's contract says it never makes); in a dataclass or a NamedTuple
    it removes a field."""
    import ast

    tool = _tool()
    source = (
        "import dataclasses\n"
        "from typing import NamedTuple\n"
        "class Plain(tuple):\n    kind: int\n    other: int = 1\n"
        "@dataclasses.dataclass\nclass Record:\n    kind: int\n"
        "class Pair(NamedTuple):\n    kind: int\n"
    )
    walker = tool._Walker("example.py")
    walker.visit(ast.parse(source))
    deleted = sorted((s.line, s.detail) for s in walker.sites if s.op == "del")
    assert deleted == [(5, "delete `other: int = 1`"), (8, "delete `kind: int`"), (10, "delete `kind: int`")], (
        f"got deletion sites {deleted}, should be the assignment and the two fields, not Plain's annotation")
