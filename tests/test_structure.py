"""The packages' structure: no module reaches into another package's private names, and no two
modules import each other, directly or around a circle (imports inside functions count; those
under ``if TYPE_CHECKING:`` do not run and do not)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("reference", "strategies", "conformance")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for file in (ROOT / package).rglob("*.py"):
            parts = list(file.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = file
    return found


def _imports(tree: ast.AST, annotations: bool = False) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that can run (skipping ``if TYPE_CHECKING:`` bodies unless
    ``annotations``, which counts the imports that only annotations use as well)."""
    found: list[ast.Import | ast.ImportFrom] = []

    def walk(node: ast.AST) -> None:
        if not annotations and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                walk(child)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            walk(child)

    walk(tree)
    return found


def _absolute(module: str, file: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if file.name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _graph(annotations: bool = False) -> tuple[dict[str, set[str]], list[tuple[str, int, str]]]:
    modules = _modules()

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = {m: set() for m in modules}
    private: list[tuple[str, int, str]] = []
    for module, file in modules.items():
        package = module.split(".")[0]
        for node in _imports(ast.parse(file.read_text(encoding="utf-8")), annotations):
            if isinstance(node, ast.ImportFrom):
                base = _absolute(module, file, node)
                names = [f"{base}.{a.name}" for a in node.names]
            else:
                base, names = "", [a.name for a in node.names]
            for name in names:
                target = owner(name) if name in modules else owner(base or name)
                if target and target != module:
                    edges[module].add(target)
                top = name.split(".")[0]
                if top in PACKAGES and top != package and any(p.startswith("_") for p in name.split(".")[1:]):
                    private.append((module, node.lineno, name))
    return edges, private


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_another_packages_private_names():
    _, private = _graph()
    assert not private, (
        "got imports of other packages' private names (module, line, name): "
        f"{private}; should use their public API")


def test_no_import_circles_between_modules():
    edges, _ = _graph()
    assert len(edges) > 80, f"got {len(edges)} modules, should walk all of {PACKAGES}"
    cycles = _cycles(edges)
    assert not cycles, f"got import circles {cycles}, should be none (move the shared part down a layer)"


def test_the_walk_finds_a_planted_circle_and_a_private_import():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(edges) == [["a", "b", "c"]], f"got {_cycles(edges)}"
    tree = ast.parse("if TYPE_CHECKING:\n    import x\nelse:\n    import y\ndef f():\n    from z import w\n")
    assert [ast.unparse(n) for n in _imports(tree)] == ["import y", "from z import w"]


#: Flink's serializer / snapshot / compatibility triad: a serializer snapshots itself, a snapshot
#: restores a serializer and judges another snapshot, a compatibility result may carry a
#: reconfigured serializer. The three refer to each other by design (as in Flink), and only in
#: annotations or inside functions; it is the one circle the packages may have.
ALLOWED_CIRCLES = [["reference._compat", "reference._serializer", "reference._snapshot"]]


def test_no_import_circles_even_through_annotations():
    edges, _ = _graph(annotations=True)
    cycles = _cycles(edges)
    assert cycles == ALLOWED_CIRCLES, (
        f"got import circles {cycles} (counting imports only annotations use), should be only "
        f"Flink's serializer/snapshot/compatibility triad {ALLOWED_CIRCLES}")


def test_backends_export_the_backends_and_the_state_api_only():
    import reference.backends

    names = reference.backends.__all__
    assert len(names) <= 25, (
        f"got {len(names)} names in reference.backends.__all__, should be at most 25 (the backends "
        "and the state API; savepoint plumbing belongs to reference.savepoint)")
    assert len(set(names)) == len(names), f"got duplicates in reference.backends.__all__: {names}"
    for name in names:
        assert hasattr(reference.backends, name), f"reference.backends.__all__ names {name!r}, which it lacks"


#: Which package each folder of tests is the test of: a test may read the private modules of its
#: own package, never another package's (those it uses through their public names).
TESTED_PACKAGE = {
    "reference": {"reference"}, "backends": {"reference"}, "storage": {"reference"},
    "fuzz": {"reference"}, "strategies": {"strategies"}, "table": {"conformance", "reference"},
    "harness": {"conformance"}, "spark": {"conformance"}, "cluster": {"conformance"},
    "docs": {"conformance"}, "flink": {"reference"},
    "": {"conformance"},  # the suite's conftest registers the harness's hypothesis profiles
}
#: The zoo of reference bugs plants faults inside the reference's own private functions (the
#: check meant for each must catch it first): the one place a test of the harness reaches into
#: another package, named here module by module.
ZOO_PLANTS = {
    ("tests/harness/zoo.py", "reference._io"),
    ("tests/harness/zoo.py", "reference.backends._bytes"),
    ("tests/harness/zoo.py", "reference.serializers._codegen"),
    ("tests/harness/zoo.py", "reference.serializers._composites"),
    ("tests/harness/zoo.py", "reference.serializers._enum"),
    ("tests/harness/zoo.py", "reference.serializers._pojo"),
    ("tests/harness/zoo.py", "reference.serializers._primitives"),
    ("tests/harness/test_harness_zoo.py", "reference._snapshot"),
    ("tests/harness/test_harness_zoo.py", "reference.serializers._codegen"),
    ("tests/harness/zoo.py", "reference._snapshot"),
}


def _private_imports_of_tests() -> list[tuple[str, int, str]]:
    found = []
    for file in sorted((ROOT / "tests").rglob("*.py")):
        folder = file.relative_to(ROOT / "tests").parts[0] if file.parent != ROOT / "tests" else ""
        own = TESTED_PACKAGE.get(folder, set())
        for node in _imports(ast.parse(file.read_text(encoding="utf-8")), annotations=True):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    continue
                names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                names = [a.name for a in node.names]
            for name in names:
                parts = name.split(".")
                private = [i for i, p in enumerate(parts) if i and p.startswith("_") and not p.startswith("__")]
                if parts[0] in PACKAGES and parts[0] not in own and private:
                    where = str(file.relative_to(ROOT))
                    if (where, ".".join(parts[: private[0] + 1])) not in ZOO_PLANTS:
                        found.append((where, node.lineno, name))
    return found


def test_no_test_imports_a_private_module_of_another_package():
    private = _private_imports_of_tests()
    assert not private, (
        f"got {len(private)} imports of another package's private names by tests (file, line, "
        f"name): {private}; should use that package's public API (or live with that package's tests)")


# -- byte formats have one home: a serializer's and a view's private state stays in its module ----
#: The modules that own the byte formats (the serializers, their generated codecs) and the views
#: they read and write: only these read the private attributes their classes define.
FORMAT_OWNERS = ("reference/serializers/", "reference/_io.py")


def _class_private_names(tree: ast.AST) -> set[str]:
    """The private names (``_x``, not dunders) the classes of a module define: methods, class
    attributes, ``__slots__`` entries, attributes assigned on ``self``."""
    names: set[str] = set()
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for node in ast.walk(cls):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                  and isinstance(node.value, ast.Name) and node.value.id == "self"):
                names.add(node.attr)
        for node in cls.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets):
                names.update(c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str))
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def _private_reads(tree: ast.AST, foreign: set[str]) -> list[tuple[int, str]]:
    """Each access ``x._name`` in ``tree`` of a name in ``foreign``, where ``x`` is not ``self``
    or ``cls`` (line, expression)."""
    return sorted(
        (node.lineno, ast.unparse(node)) for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in foreign
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
    )


def _foreign_private_reads() -> list[tuple[str, int, str]]:
    owners, others = {}, {}
    for file in _modules().values():
        relative = file.relative_to(ROOT).as_posix()
        tree = ast.parse(file.read_text(encoding="utf-8"))
        (owners if relative.startswith(FORMAT_OWNERS) else others)[relative] = tree
    owned = set().union(*(_class_private_names(tree) for tree in owners.values()))
    found = []
    for relative, tree in sorted(others.items()):
        # A name the module's own classes define is theirs (a homonym, not a serializer's).
        for line, text in _private_reads(tree, owned - _class_private_names(tree)):
            found.append((relative, line, text))
    return found


def test_no_module_reads_the_private_attributes_of_a_serializer_or_a_view():
    found = _foreign_private_reads()
    assert not found, (
        f"got reads of serializers' or views' private attributes outside {FORMAT_OWNERS} (file, "
        f"line, expression): {found}; should go through their public API (a serializer's "
        "byte_migration, DataInputView.mark / reset / position / available), so that each byte "
        "format lives in its serializer's module only")


def test_the_private_read_walk_finds_a_planted_read():
    owner = ast.parse(
        "class View:\n    __slots__ = ('_pos',)\n"
        "class Row:\n    def _prepare(self):\n        self._cache_mask_len = 1\n"
    )
    names = _class_private_names(owner)
    assert names == {"_pos", "_prepare", "_cache_mask_len"}, f"got {names}"
    reader = ast.parse(
        "def part(source, prior):\n"
        "    source._pos = prior._cache_mask_len + self._pos\n"
        "    return source.position\n"
    )
    found = _private_reads(reader, names)
    assert found == [(2, "prior._cache_mask_len"), (2, "source._pos")], f"got {found}"


def _spark_engine_imports(files: list[Path]) -> list[tuple[str, int, str]]:
    """(file, line, import) of every import of ``conformance.spark`` in ``files`` other than the
    package itself or a name of its ``__all__`` imported from it."""
    import conformance.spark as engine

    public = set(engine.__all__)
    found = []
    for file in files:
        tree = ast.parse(file.read_text(encoding="utf-8"))
        for node in _imports(tree):
            where = (str(file.relative_to(ROOT)), node.lineno, ast.unparse(node))
            if isinstance(node, ast.Import):
                found += [where for a in node.names
                          if a.name.startswith("conformance.spark.") and a.name != "conformance.spark"]
                continue
            module = node.module or ""
            if node.level:  # only conformance's own modules import relatively
                parts = file.relative_to(ROOT).with_suffix("").parts[:-1]
                module = ".".join(parts[: len(parts) - (node.level - 1)] + ((module,) if module else ()))
            if module == "conformance" and any(a.name == "spark" for a in node.names):
                continue  # the package itself
            if module == "conformance.spark" and all(a.name in public for a in node.names):
                continue
            if module == "conformance.spark" or module.startswith("conformance.spark."):
                found.append(where)
    return found


def test_the_spark_engine_is_used_through_its_public_api():
    # The CLI, the spark family, the tests and the benchmarks use conformance.spark's public
    # names (its __all__), never a module's internals; inside the engine, no module imports
    # another's leading-underscore names.
    users = [f for d in ("conformance/cli", "conformance/_checks", "tests", "bench") for f in (ROOT / d).rglob("*.py")]
    outside = _spark_engine_imports(users)
    assert not outside, f"got imports of conformance.spark's internals {outside}; should import its __all__ names"
    inside = []
    for file in (ROOT / "conformance" / "spark").glob("*.py"):
        for node in _imports(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                inside += [(file.name, node.lineno, a.name) for a in node.names if a.name.startswith("_")]
    assert not inside, f"got private names imported across the engine's modules {inside}; should be public helpers"


def test_the_spark_engine_check_finds_an_internal_import(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    planted = tmp_path / "t.py"
    planted.write_text("from conformance.spark.verify import batch_verifier\nfrom conformance.spark import verify_savepoint\n"
                       "from conformance.spark import _common\nimport conformance.spark.session\n")
    got = [line for _, line, _ in _spark_engine_imports([planted])]
    assert got == [1, 3, 4], f"got lines {got}, should flag the module import, the private name and the submodule"
