"""Function-local imports only where they keep start-up fast, each saying so (README: Code map).

A block of imports inside a function must carry a comment: on the line above the block, on
its first line, or in the function's docstring ("Imported on use: …").
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "kschedctl"


def _unexplained(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for fn in ast.walk(ast.parse("\n".join(lines))):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        doc = (ast.get_docstring(fn) or "").lower()
        previous_end = -1
        for node in ast.walk(fn):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            first = node.lineno - 1
            gap = lines[previous_end + 1 : first] if previous_end >= 0 else ["x"]
            previous_end = (node.end_lineno or node.lineno) - 1
            if not any(line.strip() for line in gap):
                continue  # the same block as the import above (blank lines between)
            above = lines[first - 1].strip() if first else ""
            if "#" in lines[first] or above.startswith("#") or "import" in doc:
                continue
            found.append(
                f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {lines[first].strip()}"
            )
    return sorted(set(found))


def test_every_function_local_import_says_why() -> None:
    unexplained = [line for p in sorted(PACKAGE.rglob("*.py")) for line in _unexplained(p)]
    assert unexplained == []
