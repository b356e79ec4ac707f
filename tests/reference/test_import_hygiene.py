"""``reference`` is importable on its own: it pulls in no test or Spark machinery."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = ("pytest", "hypothesis", "pyspark", "_pytest", "strategies", "conformance")


def _modules_after(statement: str) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"got exit {out.returncode} importing: {out.stderr}"
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_reference_imports_no_test_or_spark_machinery():
    modules = _modules_after("import reference, reference.serializers, reference.types")
    assert "reference.serializers" in modules, "the import itself did not happen"
    leaked = sorted(m for m in modules if m.split(".")[0] in FORBIDDEN)
    assert not leaked, f"got {leaked} imported by `import reference`, should be none of {FORBIDDEN}"


def test_using_the_builtins_imports_no_test_or_spark_machinery():
    statement = (
        "import reference, reference.serializers as s\n"
        "x = s.MapSerializer(s.StringSerializer(), s.ListSerializer(s.PickleSerializer()))\n"
        "reference.snapshot_from_bytes(reference.snapshot_to_bytes(x.snapshot_configuration()))\n"
        "x.from_bytes(x.to_bytes({'a': [1]}))"
    )
    modules = _modules_after(statement)
    leaked = sorted(m for m in modules if m.split(".")[0] in FORBIDDEN)
    assert not leaked, f"got {leaked} imported while using built-ins, should be none of {FORBIDDEN}"
