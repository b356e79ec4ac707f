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


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that can run (skipping ``if TYPE_CHECKING:`` bodies)."""
    found: list[ast.Import | ast.ImportFrom] = []

    def walk(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
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


def _graph() -> tuple[dict[str, set[str]], list[tuple[str, int, str]]]:
    modules = _modules()

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = {m: set() for m in modules}
    private: list[tuple[str, int, str]] = []
    for module, file in modules.items():
        package = module.split(".")[0]
        for node in _imports(ast.parse(file.read_text(encoding="utf-8"))):
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
