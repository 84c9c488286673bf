"""Bounded input: the user-file reader, the bounded YAML loader, quoting user text in messages."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from kschedctl.base.errors import NotFoundError, Problem, SpecError, printable, quote
from kschedctl.base.userfile import MAX_FILE_BYTES, path_kind, read_user_file
from kschedctl.model.config.schema import (
    MAX_ALIAS_NODES,
    MAX_DEPTH,
    AliasBudget,
    YamlError,
    check_fields,
    join,
    key_segment,
    parse_yaml,
)

# --- read_user_file ------------------------------------------------------------------------


def test_reads_utf8_and_drops_a_bom(tmp_path: Path) -> None:
    file = tmp_path / "a.yaml"
    file.write_bytes(b"\xef\xbb\xbfname: caf\xc3\xa9\n")
    assert read_user_file(file) == "name: café\n"


def test_missing_and_dangling_are_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="no such file"):
        read_user_file(tmp_path / "missing.yaml")
    (tmp_path / "link.yaml").symlink_to(tmp_path / "missing.yaml")
    with pytest.raises(NotFoundError, match="a symbolic link to a missing file"):
        read_user_file(tmp_path / "link.yaml")
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotFoundError):
        read_user_file(tmp_path / "file" / "below.yaml")  # ENOTDIR


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda p: p.mkdir(), "a directory"),
        (lambda p: os.mkfifo(p), "a FIFO (named pipe)"),
    ],
    ids=["directory", "fifo"],
)
def test_special_files_are_refused_without_reading(tmp_path: Path, make: Any, kind: str) -> None:
    path = tmp_path / "special.yaml"
    make(path)
    started = time.monotonic()
    with pytest.raises(SpecError) as info:
        read_user_file(path)
    assert time.monotonic() - started < 1
    assert info.value.exit_code == 3
    assert str(info.value) == f"{path}: is {kind}, not a regular file"


def test_devices_are_refused() -> None:
    with pytest.raises(SpecError, match="is a character device, not a regular file"):
        read_user_file("/dev/zero")


def test_size_cap(tmp_path: Path) -> None:
    file = tmp_path / "big.yaml"
    file.write_bytes(b"#" * MAX_FILE_BYTES)
    assert len(read_user_file(file)) == MAX_FILE_BYTES
    with file.open("ab") as f:
        f.write(b"#")
    with pytest.raises(SpecError) as info:
        read_user_file(file)
    assert "too large: 1,048,577 bytes, the limit is 1,048,576 (1 MiB)" in str(info.value)
    assert info.value.hint


def test_not_utf8(tmp_path: Path) -> None:
    file = tmp_path / "latin1.yaml"
    file.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(SpecError, match=r"not UTF-8 text \(invalid byte at offset 9\)"):
        read_user_file(file)


def test_path_kind_never_raises(tmp_path: Path) -> None:
    assert path_kind(tmp_path) == "directory"
    assert path_kind(tmp_path / "nothing") is None
    assert path_kind("a" * 5000) is None  # ENAMETOOLONG
    assert path_kind("a\0b") is None
    assert path_kind("/dev/null") == "a character device"


# --- parse_yaml --------------------------------------------------------------------------------


def _error(text: str) -> str:
    with pytest.raises(YamlError) as info:
        parse_yaml(text)
    return str(info.value)


def _laughs(levels: int) -> str:
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [{','.join([f'*l{i - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_fails_fast() -> None:
    started = time.monotonic()
    assert "aliases expand to more than 100,000 nodes" in _error(_laughs(9))
    assert time.monotonic() - started < 0.5


def test_a_few_aliases_are_fine() -> None:
    docs = parse_yaml("base: &b {cpu: 1}\na: *b\nb: *b\n")
    assert docs == [{"base": {"cpu": 1}, "a": {"cpu": 1}, "b": {"cpu": 1}}]
    assert parse_yaml(_laughs(5))  # 9**5 = 59,049 expanded nodes: under the limit


def test_the_alias_budget_is_shared_between_documents_and_parses() -> None:
    doc = _laughs(5)  # ~66,000 nodes added by aliases
    with pytest.raises(YamlError, match="aliases expand"):
        parse_yaml(f"{doc}---\n{doc}")
    budget = AliasBudget()
    parse_yaml(doc, budget)
    assert 0 < budget.nodes < MAX_ALIAS_NODES
    with pytest.raises(YamlError, match="aliases expand"):
        parse_yaml(doc, budget)


def test_merge_keys_count_against_the_budget() -> None:
    text = "a: &a {" + ", ".join(f"k{i}: {i}" for i in range(1000)) + "}\n"
    text += "".join(f"m{i}: {{<<: *a}}\n" for i in range(200))
    assert "aliases expand" in _error(text)


@pytest.mark.parametrize("text", ["&a [*a]\n", "&a {x: *a}\n", "&a [[[*a]]]\n"])
def test_recursive_aliases_are_refused(text: str) -> None:
    assert _error(text)


def test_depth() -> None:
    ok = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    assert parse_yaml(ok)
    assert f"nested more than {MAX_DEPTH} levels deep" in _error("{a: " * 150 + "1" + "}" * 150)
    assert _error("[" * 100_000 + "]" * 100_000)  # libyaml's own limit, or ours


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("? [a]\n: b\n", "a mapping key must be a string, not a sequence (line 1, column 3)"),
        ("{[1]: 2}\n", "a mapping key must be a string, not a sequence (line 1, column 2)"),
        ("? {a: 1}\n: b\n", "a mapping key must be a string, not a mapping"),
        ("1: a\n", "a mapping key must be a string, not 1 (line 1, column 1): quote it"),
        ("? \n: a\n", "a mapping key must be a string, not null"),
        ("on: a\n", "a mapping key must be a string, not True"),
        ("a: 1\na: 2\n", "duplicate key 'a' (line 2, column 1)"),
    ],
)
def test_keys(text: str, message: str) -> None:
    assert message in _error(text)


def test_integers_are_int64() -> None:
    assert parse_yaml("a: 9223372036854775807\nb: -9223372036854775808\nc: 0x7f")[0] == {
        "a": 2**63 - 1,
        "b": -(2**63),
        "c": 127,
    }
    started = time.monotonic()
    message = _error("a: " + "9" * 5000)
    assert time.monotonic() - started < 0.5
    assert message.startswith("integer out of range (line 1, column 4): '999")
    assert len(message) < 200
    assert "integer out of range" in _error("a: 9223372036854775808")
    assert "invalid value (line 1, column 4)" in _error("a: 0x_")


@pytest.mark.parametrize(
    "text",
    [
        "!!python/object/apply:os.system ['true']\n",
        "!!python/name:os.system\n",
        "!!set {a, b}\n",
        "!!binary aGVsbG8=\n",
        "!!omap [a: 1]\n",
        "!!pairs [a: 1]\n",
    ],
)
def test_tags_outside_the_json_model_are_refused(text: str) -> None:
    assert _error(text)


def test_dates_stay_strings() -> None:
    assert parse_yaml("a: 2001-12-14\nb: !!timestamp 2001-13-45\n") == [
        {"a": "2001-12-14", "b": "2001-13-45"}
    ]


def test_control_characters() -> None:
    assert _error("a: \x00\n").startswith("not YAML text: character U+0000 at offset 3")
    assert "U+001B" in _error("\x1b[31m: 1\n")


# --- quoting -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("plain", "'plain'"),
        ("a\nb", "'a\\nb'"),
        ("\x1b[31mred", "'\\x1b[31mred'"),
        ("a\u2028b\x85c\rd\u202e", "'a\\u2028b\\x85c\\rd\\u202e'"),
        ("x" * 100, "'" + "x" * 80 + "…'"),
        (None, "None"),
        (True, "True"),
        (12, "12"),
        ("HUGE", "<an integer of 16610 bits>"),
        (1.5, "1.5"),
        (["a\nb"] * 100, "['a\\nb', 'a\\nb', 'a\\nb', 'a\\nb', 'a\\nb', 'a\\nb', ...]"),
    ],
)
def test_quote(value: Any, shown: str) -> None:
    if value == "HUGE":  # built here: pytest would repr it for the test id (ValueError)
        value = 10**5000
    assert quote(value) == shown


def test_quote_is_bounded_for_any_value() -> None:
    deep: Any = []
    for _ in range(1000):
        deep = [deep, "x" * 1000, {"k\n": "v" * 1000}]
    assert len(quote(deep)) <= 200
    assert "\n" not in quote(deep)


def test_printable_escapes_and_bounds() -> None:
    assert printable("a\nb\x1b[0m\t") == "a\\nb^[[0m\\t"
    assert printable("ok text: with colons") == "ok text: with colons"
    assert printable("é✓ 日本") == "é✓ 日本"
    assert printable("x" * 5000, 10) == "x" * 10 + "…"


def test_a_problem_is_one_line() -> None:
    problem = Problem("spec.a\nb", "bad\x1b[2J value\r", "file\n.yaml")
    assert str(problem) == "file\\n.yaml: spec.a\\nb: bad^[[2J value\\r"
    error = SpecError.from_problems([problem, problem])
    assert error.message.count("\n") == 2
    assert "\x1b" not in error.message


def test_field_paths_quote_keys_that_are_not_names() -> None:
    assert join("args", "nvidia.com/gpu") == "args.nvidia.com/gpu"
    assert join("args", "[0]") == "args[0]"
    assert join("spec", "tolerate[3]") == "spec.tolerate[3]"
    assert join("args", "a\nFILE: x: y") == "args['a\\nFILE: x: y']"
    assert join("", "has space") == "['has space']"
    assert key_segment("k" * 1000).endswith("…']")
    out: list[Problem] = []
    assert check_fields({"a\nb": 1, "n": [1]}, {"n": str}, "p", out) == {"a\nb": 1}
    assert [p.path for p in out] == ["p['a\\nb']", "p.n"]
    assert out[1].message == "must be a string, not [1]"


@pytest.mark.parametrize(
    "config",
    [
        _laughs(9),
        "profiles: {schedulerName: x}\n",
        "profiles: 5\n",
        "profiles: [{schedulerName: " + "9" * 5000 + "}]\n",
        "? [a]\n: b\n",
    ],
    ids=["alias-bomb", "profiles-mapping", "profiles-int", "5000-digits", "unhashable-key"],
)
def test_a_hostile_config_in_the_cluster_is_ignored(config: str) -> None:
    from kschedctl.observe.containers import config_facts

    started = time.monotonic()
    facts = config_facts(config, [])
    assert time.monotonic() - started < 1
    assert facts.names == ["default-scheduler"]
