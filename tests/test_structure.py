"""The packages' structure: no module reaches into another package's private names, and no two
modules import each other, directly or around a circle (imports inside functions count; those
under ``if TYPE_CHECKING:`` do not run and do not)."""

from __future__ import annotations

import ast
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
