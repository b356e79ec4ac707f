"""Mutation testing of the reference serializers: how many realistic single-point bugs does
``conformance certify --builtins`` kill on its own, and how many do the unit tests kill?

A *mutation site* is one AST node of a target file that one operator can change:

``cmp``     a comparison operator flipped (``<`` <-> ``<=``, ``>`` <-> ``>=``, ``==`` <-> ``!=``,
            ``is`` <-> ``is not``, ``in`` <-> ``not in``)
``const``   an integer constant off by one (``n + 1`` and ``n - 1`` are two sites)
``del``     a statement (assignment, call, ``raise``, ``if``, loop) replaced by ``pass``
``ret``     ``return X`` replaced by ``return None``
``swap``    the first two positional arguments of a call swapped (when they differ)
``bool``    ``True`` <-> ``False``, ``not x`` -> ``x``, ``and`` <-> ``or``

Sites are enumerated in a fixed order (file, then source order); a fixed ``--seed`` samples
``--sample`` of them, equally many per operator, so two runs of the same tree judge the same mutants.
Each run also judges a fresh sample (``--fresh-sample`` sites, none of the fixed sample's, drawn
the same way with ``--fresh-seed``, a new random seed unless given): a score that holds only
on the sample the checks were written against shows there. The report states both seeds; a
fresh sample is judged again with ``--fresh-seed`` (its mutants are numbered after the fixed
sample's, so ``--only`` ids stay valid with the same seeds). Nothing in a
``__repr__``/``__str__`` body, an annotation, an import, a docstring or the arguments of a
``raise`` (error message text) is mutated: those are not behaviour the contract pins.

Each mutant runs in a private copy of the tree (``copytree`` into a temporary directory, no
bytecode caches), never in the working files: the mutated file is written there, every suite
runs with that copy first on ``PYTHONPATH`` and as its working directory, and the original text
is put back before the next mutant. A mutant is *killed* by a suite when the suite exits
non-zero or exceeds its time limit (``--timeout-factor`` times the unmutated run). The
unmutated tree must pass every suite first, or the run stops.

Suites: ``certify`` is ``python -m conformance certify --builtins --seed S --examples N -x``
(``--exitfirst``: a killed mutant costs the run up to its first failed check, and the suite is
ended as soon as a subject is reported NOT CERTIFIED); ``unit`` is pytest over
``--unit-paths`` (default tests/reference tests/backends tests/strategies, ``-x``, not slow).

The reference serializers carry their format twice: generated codecs (the default) and the
generic methods they are generated against, which run where a codec is not generated and
with ``REFERENCE_GENERATED_CODECS=0``. Each is a serializer a user may run, so ``certify`` judges
a mutant in both: as shipped, and, when that run passes, again with
``REFERENCE_GENERATED_CODECS=0`` (``--codecs on`` or ``off`` judges one only). A mutant is
killed by ``certify`` when either run fails; the verdict says which.

    python tools/mutation.py --sample 70 --seed 15 --examples 30 --json mutation.json
    python tools/mutation.py --list            # every site, no run
    python tools/mutation.py --only 12,40 --fresh-seed 987  # re-judge a few mutants of that run
    python tools/mutation.py --site '_row.py:293 [swap]'   # judge sites by their --list line

The result (a table, and ``--json``) gives each mutant's id, site, diff line and which suites
killed it; the score is killed / (sampled - equivalent), where ``--equivalent`` names ids a
person classified as equivalent (docs/mutation-report.md keeps that classification).
"""

from __future__ import annotations

import argparse
import ast
import collections
import copy
import json
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TARGETS = (
    "reference/serializers/_primitives.py",
    "reference/serializers/_composites.py",
    "reference/serializers/_row.py",
    "reference/serializers/_pojo.py",
    "reference/serializers/_enum.py",
    "reference/serializers/_codegen.py",
    "reference/_io.py",
    "reference/_snapshot.py",
    "reference/_compat.py",
)

_FLIP = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In,
}
_DELETABLE = (ast.Assign, ast.AugAssign, ast.Expr, ast.Raise, ast.If, ast.For, ast.While, ast.With,
              ast.AnnAssign)
_SKIP_FUNCTIONS = {"__repr__", "__str__"}


@dataclass
class Site:
    file: str
    index: int          # position among this file's sites (the transformer's counter)
    op: str
    line: int
    detail: str


@dataclass
class Mutant:
    id: int
    site: Site
    before: str
    after: str
    killed_by: dict[str, str] = field(default_factory=dict)   # suite -> "exit 1" / "timeout"
    seconds: dict[str, float] = field(default_factory=dict)
    sample: str = "fixed"   # "fixed" (--seed) or "fresh" (--fresh-seed)


class _Walker(ast.NodeTransformer):
    """Walks a module in source order; numbers every site; applies site ``target`` if given."""

    def __init__(self, file: str, target: int | None = None) -> None:
        self.file, self.target = file, target
        self.sites: list[Site] = []
        self.applied: Site | None = None

    # -- bookkeeping ---------------------------------------------------------------------
    def _site(self, node: ast.AST, op: str, detail: str) -> bool:
        """Register a site; True when it is the one to apply."""
        site = Site(self.file, len(self.sites), op, getattr(node, "lineno", 0), detail)
        self.sites.append(site)
        if self.target == site.index:
            self.applied = site
            return True
        return False

    # -- what is never mutated -----------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if node.name in _SKIP_FUNCTIONS:
            return node
        node.args.defaults = [self.visit(d) for d in node.args.defaults]
        node.args.kw_defaults = [d if d is None else self.visit(d) for d in node.args.kw_defaults]
        node.body = self._body(node.body)
        return node  # annotations are left alone

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.body = self._body(node.body, fields=_declares_fields(node))
        return node

    def visit_Module(self, node: ast.Module) -> ast.AST:
        node.body = self._body(node.body)
        return node

    def visit_Import(self, node: ast.AST) -> ast.AST:
        return node

    visit_ImportFrom = visit_Import

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    def visit_Raise(self, node: ast.Raise) -> ast.AST:
        return node  # the message text is not behaviour; deleting the raise is a 'del' site

    def visit_JoinedStr(self, node: ast.AST) -> ast.AST:
        return node

    # -- statements ------------------------------------------------------------------------
    def _body(self, body: list[ast.stmt], fields: bool = False) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for i, stmt in enumerate(body):
            docstring = i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                and isinstance(stmt.value.value, str)
            # A bare annotation (``kind: RowKind``) is an annotation, left alone, unless the class
            # makes its annotations fields (a dataclass, a NamedTuple).
            annotation = isinstance(stmt, ast.AnnAssign) and stmt.value is None and not fields
            if _deletable(stmt) and not docstring and not annotation:
                if self._site(stmt, "del", f"delete `{_first_line(stmt)}`"):
                    out.append(ast.copy_location(ast.Pass(), stmt))
                    continue
            out.append(self.visit(stmt) if not docstring else stmt)
        return out

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for name, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(node, name, self._body(value))
        # the remaining (expression) fields
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                if value and isinstance(value[0], ast.stmt):
                    continue
                setattr(node, name, [self.visit(v) if isinstance(v, ast.AST) else v for v in value])
            elif isinstance(value, ast.AST):
                setattr(node, name, self.visit(value))
        return node

    def visit_Return(self, node: ast.Return) -> ast.AST:
        if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            if self._site(node, "ret", f"`{_first_line(node)}` -> `return None`"):
                return ast.copy_location(ast.Return(value=ast.Constant(None)), node)
        return self.generic_visit(node)

    # -- expressions -----------------------------------------------------------------------
    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        for k, op in enumerate(node.ops):
            flipped = _FLIP.get(type(op))
            if flipped is not None and self._site(node, "cmp", f"`{_sym(op)}` -> `{_sym(flipped())}` in `{ast.unparse(node)}`"):
                node.ops = list(node.ops)
                node.ops[k] = flipped()
                return node
        return self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        if type(value) is bool:
            if self._site(node, "bool", f"`{value}` -> `{not value}`"):
                return ast.copy_location(ast.Constant(not value), node)
        elif type(value) is int:
            for delta in (1, -1):
                if self._site(node, "const", f"`{value}` -> `{value + delta}`"):
                    return ast.copy_location(ast.Constant(value + delta), node)
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        if isinstance(node.op, ast.Not) and self._site(node, "bool", f"`{ast.unparse(node)}` -> `{ast.unparse(node.operand)}`"):
            return node.operand
        return self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        other = ast.Or if isinstance(node.op, ast.And) else ast.And
        if self._site(node, "bool", f"`{_sym(node.op)}` -> `{_sym(other())}` in `{_short(ast.unparse(node))}`"):
            node.op = other()
            return node
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        args = node.args
        if len(args) >= 2 and not any(isinstance(a, ast.Starred) for a in args[:2]) \
                and ast.dump(args[0]) != ast.dump(args[1]):
            if self._site(node, "swap", f"swap `{_short(ast.unparse(args[0]))}`, `{_short(ast.unparse(args[1]))}` in `{_short(ast.unparse(node))}`"):
                node.args = [args[1], args[0], *args[2:]]
                return node
        return self.generic_visit(node)


def _declares_fields(node: ast.ClassDef) -> bool:
    """Whether the class makes its annotations fields: a dataclass, or a NamedTuple or
    TypedDict subclass (by name, as written)."""
    def name(expr: ast.expr) -> str:
        expr = expr.func if isinstance(expr, ast.Call) else expr
        return expr.attr if isinstance(expr, ast.Attribute) else getattr(expr, "id", "")

    return any(name(d) == "dataclass" for d in node.decorator_list) or any(
        name(b) in ("NamedTuple", "TypedDict") for b in node.bases)


def _deletable(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, _DELETABLE):
        return False
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        names = {t.id for t in targets if isinstance(t, ast.Name)}
        if names & {"__all__", "__slots__"}:
            return False
    if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Name) and stmt.test.id == "TYPE_CHECKING":
        return False
    return True


_SYMBOLS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
            ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in", ast.And: "and",
            ast.Or: "or"}


def _sym(op: ast.AST) -> str:
    return _SYMBOLS[type(op)]


def _short(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _first_line(stmt: ast.stmt) -> str:
    return _short(ast.unparse(stmt).splitlines()[0])


def sites(path: str, rel: str) -> list[Site]:
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    walker = _Walker(rel)
    walker.visit(tree)
    return walker.sites


def mutate(source: str, site: Site) -> str:
    """``source`` (the text the site was found in) with the site's mutation applied."""
    tree = ast.parse(source)
    walker = _Walker(site.file, site.index)
    mutated = walker.visit(copy.deepcopy(tree))
    if walker.applied is None or walker.applied.detail != site.detail:
        raise RuntimeError(f"site {site} did not reapply (got {walker.applied})")
    return ast.unparse(ast.fix_missing_locations(mutated)) + "\n"


def all_sites(root: str) -> list[Site]:
    found: list[Site] = []
    for rel in TARGETS:
        found.extend(sites(os.path.join(root, rel), rel))
    return found


def _key(site: Site) -> tuple[str, int, str]:
    return site.file, site.index, site.op


def sample(root: str, n: int, seed: int, exclude: frozenset[tuple[str, int, str]] = frozenset()) -> list[Site]:
    """``n`` sites, as many of each operator as the others (stratified: deleted statements
    outnumber every other kind of site, and most are trivially fatal), in file order; none of
    ``exclude`` (``_key`` of the fixed sample's sites, when drawing a fresh one)."""
    every = all_sites(root)
    rng = random.Random(seed)
    ops = sorted({s.op for s in every})
    chosen: list[int] = []
    for k, op in enumerate(ops):
        share = n // len(ops) + (1 if k < n % len(ops) else 0)
        of_op = [i for i, s in enumerate(every) if s.op == op and _key(s) not in exclude]
        chosen.extend(rng.sample(of_op, min(share, len(of_op))))
    return [every[i] for i in sorted(chosen)]


def fixed_and_fresh(root: str, n: int, seed: int, fresh_n: int, fresh_seed: int) -> list[tuple[str, Site]]:
    """The fixed sample (``seed``), then a fresh one of ``fresh_n`` other sites (``fresh_seed``)."""
    fixed = sample(root, n, seed)
    fresh = sample(root, fresh_n, fresh_seed, frozenset(map(_key, fixed))) if fresh_n > 0 else []
    return [("fixed", s) for s in fixed] + [("fresh", s) for s in fresh]


def seeds_line(args: argparse.Namespace) -> str:
    """Both samples and their seeds: what reproduces this run's mutants."""
    fresh = (f"; fresh sample {args.fresh_sample} (seed {args.fresh_seed}: judge it again with "
             f"--fresh-seed {args.fresh_seed})" if args.fresh_sample > 0 else "; no fresh sample")
    return f"fixed sample {args.sample} (seed {args.seed}){fresh}"


# -- running ---------------------------------------------------------------------------------

def _copy_tree(root: str) -> str:
    dest = tempfile.mkdtemp(prefix="mutation-")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".git", ".hypothesis", ".tox", "*.egg-info",
                                    ".venv*", ".pytest_cache", "mutation*.json")
    for name in ("reference", "strategies", "conformance", "tests", "pyproject.toml"):
        src = os.path.join(root, name)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(dest, name), ignore=ignore)
        elif os.path.exists(src):
            shutil.copy2(src, dest)
    return dest


def _env(tree: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra or {})
    env["PYTHONPATH"] = tree
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("HYPOTHESIS_PROFILE", None)
    return env


#: The last lines the most recent suite printed (shown when the unmutated tree fails).
_TAIL: collections.deque[str] = collections.deque(maxlen=40)


def _run(argv: list[str], tree: str, timeout: float, stop_on: str | None = None,
         extra: dict[str, str] | None = None) -> tuple[str, float]:
    """('' if passed, else 'exit N' / 'timeout'), seconds."""
    _TAIL.clear()
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=tree, env=_env(tree, extra), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    verdict = ""
    deadline = start + timeout
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:  # reads the output in its own thread: a silent run still times out
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        while True:
            try:
                line = lines.get(timeout=max(0.05, deadline - time.monotonic()))
            except queue.Empty:
                verdict = "timeout"
                break
            if line is None:
                break
            _TAIL.append(line)
            if stop_on and stop_on in line:
                verdict = "failed: " + line.strip()[:120]
                break
            if time.monotonic() > deadline:
                verdict = "timeout"
                break
        if not verdict:
            try:
                code = proc.wait(timeout=max(0.1, deadline - time.monotonic()))
                verdict = "" if code == 0 else f"exit {code}"
            except subprocess.TimeoutExpired:
                verdict = "timeout"
    finally:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
    return verdict, time.monotonic() - start


#: The generic methods only (no generated codecs): the second certify run of a mutant.
CODECS_OFF = {"REFERENCE_GENERATED_CODECS": "0"}
#: A suite: its command, the output line that ends it as failed, and the environments it runs
#: in, one after the other until one fails (each a (label, variables) pair).
Suite = tuple[list[str], str | None, list[tuple[str, dict[str, str]]]]


def suites(args: argparse.Namespace) -> dict[str, Suite]:
    py = sys.executable
    found: dict[str, Suite] = {}
    if "certify" in args.suites:
        modes = {"both": [("", {}), ("codecs off", CODECS_OFF)], "on": [("", {})],
                 "off": [("codecs off", CODECS_OFF)]}[args.codecs]
        found["certify"] = ([py, "-m", "conformance", "certify", "--builtins", "--seed", str(args.certify_seed),
                             "--examples", str(args.examples), "--exitfirst"], "NOT CERTIFIED", modes)
    if "unit" in args.suites:
        found["unit"] = ([py, "-m", "pytest", *args.unit_paths, "-x", "-q", "-p", "no:cacheprovider",
                          "-m", "not slow and not spark and not flink", "-o", "addopts=", *args.unit_args],
                         None, [("", {})])
    return found


def markdown(todo: list[Mutant], judged: list[Mutant], names: list[str], args: argparse.Namespace) -> str:
    lines = [f"{seeds_line(args).capitalize()}; certify --seed {args.certify_seed} --examples "
             f"{args.examples}; unit paths {' '.join(args.unit_paths)}.", ""]
    for name in names:
        for label, of in _by_sample(judged):
            killed = sum(1 for m in of if name in m.killed_by)
            lines.append(f"- **{name}**, {label}: killed {killed} of {len(of)} non-equivalent mutants "
                         f"({100 * killed / max(1, len(of)):.1f}%)")
    lines += ["", "| # | sample | site | operator | mutation | " + " | ".join(names) + " |",
              "|---|---|---|---|---|" + "---|" * len(names)]
    for m in todo:
        cells = ["equivalent" if m.id not in {j.id for j in judged} else
                 ("killed" if n in m.killed_by else "**survived**") for n in names]
        detail = m.site.detail.replace("|", "\\|")
        lines.append(f"| {m.id} | {m.sample} | {m.site.file}:{m.site.line} | {m.site.op} | {detail} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _by_sample(mutants: list[Mutant]) -> list[tuple[str, list[Mutant]]]:
    """(label, mutants) for the fixed sample, the fresh one and both, those that have any."""
    fixed = [m for m in mutants if m.sample == "fixed"]
    fresh = [m for m in mutants if m.sample == "fresh"]
    parts = [(label, of) for label, of in (("fixed sample", fixed), ("fresh sample", fresh)) if of]
    return parts + [("both samples", mutants)] if len(parts) > 1 else parts or [("sample", mutants)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sample", type=int, default=70)
    p.add_argument("--seed", type=int, default=15, help="sampling seed of the fixed sample")
    p.add_argument("--fresh-sample", type=int, default=None,
                   help="sites of the fresh sample (default: a quarter of --sample; 0: none)")
    p.add_argument("--fresh-seed", type=int, default=None,
                   help="sampling seed of the fresh sample (default: a new random one, printed)")
    p.add_argument("--certify-seed", type=int, default=1)
    p.add_argument("--examples", type=int, default=30)
    p.add_argument("--suites", default="certify,unit", type=lambda s: s.split(","))
    p.add_argument("--unit-paths", nargs="+", default=["tests/reference", "tests/backends", "tests/strategies"])
    p.add_argument("--unit-args", type=str.split, default=[],
                   help="more pytest arguments, one string: --unit-args='-n 2'")
    p.add_argument("--codecs", choices=("both", "on", "off"), default="both",
                   help="certify with generated codecs (on), the generic methods (off), or on then off")
    p.add_argument("--timeout-factor", type=float, default=3.0)
    p.add_argument("--only", type=lambda s: {int(x) for x in s.split(",")}, default=None,
                   help="ids of sampled mutants to run (others are not run)")
    p.add_argument("--site", action="append", default=None, metavar="TEXT",
                   help="judge every site (sampled or not) whose --list line contains TEXT "
                        "(repeatable); ids are then positions in the --list order")
    p.add_argument("--equivalent", type=lambda s: {int(x) for x in s.split(",") if x}, default=set(),
                   help="ids classified as equivalent (left out of the score)")
    p.add_argument("--json", help="write every mutant and its outcome here")
    p.add_argument("--markdown", help="write the scores and a table of every mutant here")
    p.add_argument("--list", action="store_true", help="list every site and exit")
    args = p.parse_args(argv)
    if args.fresh_sample is None:
        args.fresh_sample = max(1, args.sample // 4)
    if args.fresh_seed is None:
        args.fresh_seed = random.SystemRandom().randrange(2**31)

    if args.list:
        every = all_sites(ROOT)
        for s in every:
            print(f"{s.file}:{s.line} [{s.op}] {s.detail}")
        print(f"{len(every)} sites")
        return 0

    # The sample is drawn from the copy the mutants run in: edits to the working files while
    # the run goes on change neither.
    tree = _copy_tree(ROOT)
    if args.site:
        every = all_sites(tree)
        numbered = [(i, "chosen", s) for i, s in enumerate(every)
                    if any(text in f"{s.file}:{s.line} [{s.op}] {s.detail}" for text in args.site)]
        args.fresh_sample = 0
    else:
        numbered = [(i, which, s) for i, (which, s) in enumerate(
            fixed_and_fresh(tree, args.sample, args.seed, args.fresh_sample, args.fresh_seed))]
        print(seeds_line(args), flush=True)
    mutants = []
    for i, which, site in numbered:
        with open(os.path.join(tree, site.file), encoding="utf-8") as fh:
            lines = fh.read().splitlines()
        before = lines[site.line - 1].strip() if 0 < site.line <= len(lines) else ""
        mutants.append(Mutant(i, site, before, site.detail, sample=which))
    todo = [m for m in mutants if args.only is None or m.id in args.only]

    commands = suites(args)
    # A terminated run still removes its copy and the suite it was running.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        limits: dict[tuple[str, str], float] = {}
        for name, (cmd, stop_on, modes) in commands.items():
            for label, extra in modes:
                verdict, took = _run(cmd, tree, timeout=3600, stop_on=stop_on, extra=extra)
                what = f"{name} ({label})" if label else name
                if verdict:
                    print("".join(_TAIL), file=sys.stderr)
                    print(f"the unmutated tree fails {what} ({verdict}): fix that first", file=sys.stderr)
                    return 2
                limits[(name, label)] = max(30.0, took * args.timeout_factor)
                print(f"unmutated {what}: passed in {took:.1f} s (mutant limit {limits[(name, label)]:.0f} s)",
                      flush=True)
        for m in todo:
            target = os.path.join(tree, m.site.file)
            with open(target, encoding="utf-8") as fh:
                original = fh.read()
            try:
                with open(target, "w", encoding="utf-8") as fh:
                    # From the copy (the text the sample was drawn from), never from the
                    # working files, which may change while the run goes on.
                    fh.write(mutate(original, m.site))
                for name, (cmd, stop_on, modes) in commands.items():
                    m.seconds[name] = 0.0
                    for label, extra in modes:
                        verdict, took = _run(cmd, tree, limits[(name, label)], stop_on, extra)
                        m.seconds[name] = round(m.seconds[name] + took, 1)
                        if verdict:
                            m.killed_by[name] = f"{label}: {verdict}" if label else verdict
                            break
            finally:
                with open(target, "w", encoding="utf-8") as fh:
                    fh.write(original)
            status = ", ".join(f"{k}: {'killed (' + m.killed_by[k][:60] + ')' if k in m.killed_by else 'SURVIVED'}"
                               for k in commands)
            print(f"#{m.id:3d} ({m.sample}) {m.site.file}:{m.site.line} [{m.site.op}] {m.site.detail}  -> {status}",
                  flush=True)
    finally:
        shutil.rmtree(tree, ignore_errors=True)

    print()
    print(seeds_line(args))
    judged = [m for m in todo if m.id not in args.equivalent]
    for name in commands:
        for label, of in _by_sample(judged):
            killed = sum(1 for m in of if name in m.killed_by)
            print(f"{name}, {label}: killed {killed} of {len(of)} non-equivalent mutants "
                  f"({100 * killed / max(1, len(of)):.0f}%)")
        print(f"  ({len(todo) - len(judged)} equivalent left out)")
    if len(commands) > 1:
        either = sum(1 for m in judged if m.killed_by)
        print(f"any suite: killed {either} of {len(judged)}")
    for m in judged:
        missing = [k for k in commands if k not in m.killed_by]
        if missing:
            print(f"  survivor #{m.id} ({m.sample}; {', '.join(missing)}): {m.site.file}:{m.site.line} [{m.site.op}] "
                  f"{m.site.detail}")
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as fh:
            fh.write(markdown(todo, judged, list(commands), args))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"sample": args.sample, "seed": args.seed, "fresh_sample": args.fresh_sample,
                       "fresh_seed": args.fresh_seed, "certify_seed": args.certify_seed,
                       "examples": args.examples, "unit_paths": args.unit_paths,
                       "equivalent": sorted(args.equivalent),
                       "mutants": [asdict(m) for m in mutants if m in todo]}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
