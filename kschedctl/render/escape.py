"""One escaping function per output target; every template and context goes through these.

Pure. The spec loader already refuses what no file may hold (:mod:`kschedctl.model.config.shapes`);
these functions make each target safe on their own as well:

- YAML (a value, a key, a whole collection): :func:`yaml_value`, the ``to_yaml`` filter — the
  YAML emitter quotes whatever needs quoting (``'true'``, ``'123'``, ``'#x'``, ``'a: b'``),
  so no value is ever written raw into a YAML line; :func:`yaml_text_map`, the
  ``to_yaml_text`` filter, writes a mapping of whole files (plugin sources in a ConfigMap)
  with the same emitter, as readable literal blocks where the emitter allows one;
- a ``#`` comment, a Markdown line or a unit's free-text value: :func:`comment` — one line,
  every control, format or line-break character (``\\n``, ``\\r``, ``\\x85``, U+2028,
  U+2029…) escaped as on a terminal (:mod:`kschedctl.base.terminal`) and the backslash doubled,
  so nothing ends the comment;
- a systemd ``ExecStart=`` command line: :func:`exec_start_line` quotes each argument
  following systemd.service(5) "Command lines" and systemd.syntax(7): ``%`` → ``%%`` (a
  specifier otherwise), ``$`` → ``$$`` (environment expansion otherwise), ``\\`` and ``"``
  escaped inside double quotes; :func:`exec_start_argv` undoes exactly that (the lab runs
  the unit's command as a process).
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from kschedctl.base import terminal
from kschedctl.base.errors import KschedError, SpecError
from kschedctl.base.yamltext import to_yaml

__all__ = [
    "yaml_text_map",
    "comment",
    "exec_start_argv",
    "exec_start_line",
    "systemd_arg",
    "unit_value",
    "unquote_command_line",
    "yaml_value",
]

yaml_value = to_yaml


class _TextDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """The emitter of :func:`yaml_text_map`: files as literal blocks when it allows one."""


def _represent_text(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    # A literal block only for text ending in exactly one newline: other endings need the
    # "keep" chomping (|+), whose trailing lines the next document marker would end; the
    # emitter itself falls back to a double-quoted scalar for what a block cannot hold
    # (tabs, \r, trailing spaces, non-ASCII, control characters).
    if "\n" not in text:
        style = None
    elif text.endswith("\n") and not text.endswith("\n\n") and text.strip("\n"):
        style = "|"
    else:
        style = '"'
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_TextDumper.add_representer(str, _represent_text)


def yaml_text_map(files: dict[str, str]) -> str:
    """A YAML mapping of name → whole file text, ending in its last line (no newline): each
    value reads back exactly (a test round-trips hostile texts)."""
    if not files:
        return "{}"
    text = yaml.dump(
        files, Dumper=_TextDumper, sort_keys=False, default_flow_style=False, width=10_000
    )
    return text.removesuffix("\n")


def comment(value: Any) -> str:
    """``value`` as one line of text for a comment (YAML ``#``, systemd ``#``, Markdown).

    Every character that could end the line or hide text is escaped as on a terminal
    (:func:`kschedctl.base.terminal.escape`), and so is the backslash: the result never ends in a
    lone ``\\`` (a systemd line continuation).
    """
    text = value if isinstance(value, str) else str(value)
    return terminal.escape(text.replace("\\", "\\\\"))


def unit_value(value: Any) -> str:
    """``value`` as a systemd unit setting's free text (``Description=``): one line, and
    ``%`` doubled (systemd expands specifiers in it)."""
    return comment(value).replace("%", "%%")


# A word written bare in ExecStart: nothing systemd's parser, its specifier expansion or its
# environment expansion would touch (no quote, backslash, %, $, ;, whitespace).
_BARE = re.compile(r"[A-Za-z0-9_@+=:,./-]+", re.ASCII)


def systemd_arg(arg: str) -> str:
    """One ``ExecStart`` argument, quoted so that systemd passes exactly ``arg`` to the program.

    Refuses (SpecError) what a command line cannot carry: an empty argument, a NUL, a
    control or line-break character (the spec loader refuses those first).
    """
    if not isinstance(arg, str) or not arg:
        raise SpecError("", f"cannot write {arg!r} as an argument of a systemd ExecStart line")
    if _BARE.fullmatch(arg):
        return arg
    if not terminal.is_inert(arg):
        raise SpecError(
            "",
            "cannot write an argument holding control or line-break characters into a "
            "systemd ExecStart line",
        )
    quoted = arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{quoted}"'


def exec_start_line(argv: list[str]) -> str:
    """The value of ``ExecStart=`` running ``argv`` (argv[0]: an absolute path)."""
    if not argv or not argv[0].startswith("/"):
        raise SpecError("", "a systemd ExecStart line needs an absolute executable path")
    return " ".join(systemd_arg(a) for a in argv)


_C_ESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "s": " "}


def unquote_command_line(value: str) -> list[str]:
    """An ``ExecStart=`` value as argv, undoing systemd's quoting and its ``%%`` and ``$$``.

    Follows systemd's extract_first_word (quotes anywhere in a word, C escapes) and refuses
    what kschedctl never writes: a specifier other than ``%%``, a ``$`` expansion, an
    unbalanced quote, an unknown escape, a ``;`` command separator, an executable prefix.
    """
    words: list[str] = []
    i, n = 0, len(value)
    while True:
        while i < n and value[i] in " \t":
            i += 1
        if i >= n:
            break
        word: list[str] = []
        quote = ""
        raw = ""  # the word as written, to tell an unquoted ";" apart
        while i < n:
            c = value[i]
            if not quote and c in " \t":
                break
            raw += c
            if c == "\\":
                if i + 1 >= n or value[i + 1] not in _C_ESCAPES:
                    raise KschedError(f"ExecStart: unsupported escape in {value!r}")
                word.append(_C_ESCAPES[value[i + 1]])
                raw += value[i + 1]
                i += 2
                continue
            if quote and c == quote:
                quote = ""
            elif not quote and c in "\"'":
                quote = c
            else:
                word.append(c)
            i += 1
        if quote:
            raise KschedError(f"ExecStart: unbalanced quoting in {value!r}")
        if raw == ";":
            raise KschedError("ExecStart: kschedctl writes one command, not several")
        words.append(_expand("".join(word), value))
    if not words or not words[0].startswith("/"):
        raise KschedError(f"ExecStart: {value!r} does not start with an absolute path")
    return words


def _expand(word: str, line: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(word):
        c = word[i]
        if c in "%$":
            if i + 1 < len(word) and word[i + 1] == c:
                out.append(c)
                i += 2
                continue
            what = "specifier" if c == "%" else "variable expansion"
            raise KschedError(f"ExecStart: a {what} in {line!r} was not written by kschedctl")
        out.append(c)
        i += 1
    return "".join(out)


def exec_start_argv(unit_text: str) -> list[str]:
    """The argv of the one ``ExecStart=`` of a rendered unit's ``[Service]`` section."""
    section = ""
    found: list[str] = []
    for line in unit_text.split("\n"):  # systemd breaks lines at \n only
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped[1:-1]
        elif section == "Service" and stripped.partition("=")[0].strip() == "ExecStart":
            found.append(stripped.partition("=")[2].strip())
    if len(found) != 1:
        raise KschedError(f"the rendered unit has {len(found)} ExecStart lines, not one")
    return unquote_command_line(found[0])
