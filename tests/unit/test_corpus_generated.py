"""The generated part of the oracle corpus is exactly what tests/corpus/mutate.py writes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def _mutate():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("corpus_mutate", CORPUS / "mutate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_generated_documents_match_mutate_py() -> None:
    expected = _mutate().generated()
    committed = {
        p.name: p.read_bytes().decode("utf-8")
        for p in (CORPUS / "configs").iterdir()
        if p.name.startswith(("mut-", "edge-"))
    }
    assert sorted(committed) == sorted(expected)
    stale = [name for name, text in expected.items() if committed[name] != text]
    assert stale == [], "run python tests/corpus/mutate.py"


def test_every_corpus_file_has_a_source() -> None:
    sources = (CORPUS / "SOURCES.md").read_text(encoding="utf-8")
    listed = [
        p.name for p in (CORPUS / "configs").iterdir() if not p.name.startswith(("mut-", "edge-"))
    ]
    assert listed, "the corpus has real-world documents"
    assert [n for n in listed if f"`{n}`" not in sources] == []
