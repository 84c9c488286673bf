"""The shapes of strings (and numbers) at the spec boundary, each checked in one place.

Pure. Every string a spec holds reaches a rendered file: a YAML manifest, a systemd unit, a
comment. The renderer escapes for each target (:mod:`kschedctl.render.escape`); these checks
make sure a value has the shape its field means before it gets there, so that a newline in a
user name or a ``..`` in a host path is refused with the field named instead of rendered.

- :func:`hostile_problems` walks a whole parsed document (passthrough fields included): only
  JSON types, string keys, no control or format characters, no line breaks, integers in
  int64, finite numbers, bounded nesting;
- one ``*_problem`` function per shape (DNS-1123 label/subdomain, absolute clean path, image
  reference, IP address, user name, command-line flag, Kubernetes version), each returning
  why the value does not fit, or None;
- :func:`image_repository` and :func:`image_tag`: the one place an image reference is split.

Messages never quote a hostile value raw: :func:`shown` gives a bounded, escaped form.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from kschedctl.base.errors import Problem, quote

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
# Deeper than any real config (a KubeSchedulerConfiguration nests about 8 levels).
MAX_DEPTH = 64
# Kubernetes limits: a DNS-1123 label / subdomain; Linux's PATH_MAX and NAME_MAX.
PATH_MAX = 4095
NAME_MAX = 255
USER_MAX = 512
FLAG_MAX = 4096

# Unicode categories that must never reach a rendered file: controls (C0, C1 incl. \x85,
# DEL), format characters (bidi overrides, zero-width), line/paragraph separators (U+2028,
# U+2029), surrogates and unassigned code points.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_SHOWN_MAX = 60


def shown(value: Any) -> str:
    """A bounded, escaped repr of ``value`` for messages: :func:`kschedctl.base.errors.quote`."""
    return quote(value, _SHOWN_MAX)


def plain(value: Any) -> str:
    """Like :func:`shown`, but a string without its quotes (for names inside a sentence)."""
    return shown(value)[1:-1] if isinstance(value, str) else shown(value)


def _escape_char(c: str) -> str:
    if c == "\\":
        return "\\\\"
    if c.isprintable() and unicodedata.category(c) not in _REFUSED_CATEGORIES:
        return c
    code = ord(c)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def bad_char(value: str) -> str | None:
    """The first character of ``value`` that no rendered file may hold, escaped, or None."""
    if value.isascii() and value.isprintable():
        return None
    for c in value:
        if unicodedata.category(c) in _REFUSED_CATEGORIES:
            return _escape_char(c)
    return None


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be rendered at all (a control, format or line-break character)."""
    bad = bad_char(value)
    if bad is not None:
        return (
            f"{shown(value)} holds {bad}: control characters, line breaks and invisible "
            "format characters are not allowed in a spec"
        )
    return None


_JSON_SCALARS = (str, int, float, bool, type(None))


def hostile_problems(value: Any, path: str = "", depth: int = 0) -> list[Problem]:
    """Everything in ``value`` (a parsed document, all of it) that no spec field may hold.

    Runs before any other check so that none sees such a value: only JSON types (YAML's
    dates, sets and binaries are refused: quote them), string keys, no control or format
    characters or line breaks in keys or strings, integers within int64, finite floats, and
    at most :data:`MAX_DEPTH` levels.
    """
    out: list[Problem] = []
    _walk(value, path, depth, out)
    return out


def _walk(value: Any, path: str, depth: int, out: list[Problem]) -> None:
    if depth > MAX_DEPTH:
        out.append(Problem(path, f"nested deeper than {MAX_DEPTH} levels"))
        return
    if isinstance(value, dict):
        for key, child in value.items():
            if not isinstance(key, str):
                out.append(
                    Problem(path, f"key {shown(key)} must be a string (quote it in the YAML)")
                )
                continue
            key_path = _child(path, key)
            problem = text_problem(key)
            if problem:
                out.append(Problem(path, f"key {problem}"))
                continue
            _walk(child, key_path, depth + 1, out)
    elif isinstance(value, list):
        for i, child in enumerate(value):
            _walk(child, f"{path}[{i}]", depth + 1, out)
    elif isinstance(value, str):
        problem = text_problem(value)
        if problem:
            out.append(Problem(path, problem))
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        if not -INT64_MAX - 1 <= value <= INT64_MAX:
            out.append(Problem(path, "integer out of range (Kubernetes numbers are 64-bit)"))
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            out.append(Problem(path, f"{value!r} is not a number Kubernetes accepts"))
    else:
        out.append(
            Problem(
                path,
                f"YAML read {shown(value)} here: quote it if a string is meant "
                "(only strings, numbers, booleans, lists and mappings are allowed)",
            )
        )


def _child(path: str, key: str) -> str:
    shown_key = key if re.fullmatch(r"[A-Za-z0-9_./-]{1,80}", key) else shown(key)
    return f"{path}.{shown_key}" if path else shown_key


# ---------------------------------------------------------------------------------------------
# Shapes of single values: why a value does not fit, or None.

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", re.ASCII)
_DNS_SUBDOMAIN = re.compile(
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", re.ASCII
)
# For JSON Schemas (anchored there): the same rules in an editor as in the loaders.
DNS_PATTERNS = {"label": (_DNS_LABEL.pattern, 63), "subdomain": (_DNS_SUBDOMAIN.pattern, 253)}


def dns_label_problem(value: str) -> str | None:
    """Why ``value`` is not a DNS-1123 label (object and scheduler names), or None."""
    if not value:
        return "must not be empty"
    if len(value) > 63:
        return f"must be at most 63 characters (a DNS-1123 label), not {len(value)}"
    if not _DNS_LABEL.fullmatch(value):
        return (
            f"{shown(value)} is not a DNS-1123 label: lowercase letters, digits and '-', "
            "starting and ending with a letter or digit"
        )
    return None


def dns_subdomain_problem(value: str) -> str | None:
    """Why ``value`` is not a DNS-1123 subdomain (Lease and profile names), or None."""
    if not value:
        return "must not be empty"
    if len(value) > 253 or not _DNS_SUBDOMAIN.fullmatch(value):
        return (
            f"{shown(value)} is not a DNS-1123 subdomain (lowercase letters, digits, '-' and '.')"
        )
    return None


_QUALIFIED_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]", re.ASCII)
_QUALIFIED_CHARS = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)


def qualified_name_problems(value: str) -> list[str]:
    """Why ``value`` is not a qualified name (a label key, a resource name), in
    apimachinery's words (``pkg/util/validation/validation.go`` IsQualifiedName)."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
        if len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix):
            return [
                "prefix part a lowercase RFC 1123 subdomain must consist of lower case "
                "alphanumeric characters, '-' or '.', and must start and end with an "
                "alphanumeric character"
            ]
    else:
        return [
            f"a qualified name {_QUALIFIED_CHARS}, with an optional DNS subdomain prefix and "
            "'/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        return ["name part must be non-empty"]
    return _short_and_matching(name, _QUALIFIED_PART, "name part ", _QUALIFIED_CHARS)


def _short_and_matching(value: str, form: re.Pattern[str], what: str, chars: str) -> list[str]:
    """apimachinery's two checks of a name part or a label value: at most 63 characters,
    and of the right form (both reported)."""
    out = []
    if len(value) > 63:
        out.append(f"{what}must be no more than 63 characters")
    if not form.fullmatch(value):
        out.append(f"{what}{chars}")
    return out


_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", re.ASCII)


def label_value_problems(value: str) -> list[str]:
    """Why ``value`` is not a label value (apimachinery IsValidLabelValue's words)."""
    return _short_and_matching(value, _LABEL_VALUE, "", f"a valid label {_QUALIFIED_CHARS}")


# Characters a host path may hold: it is written into YAML, a systemd ExecStart line and a
# kubelet hostPath; quotes, spaces, %, $ and \ are refused to keep it readable everywhere.
_PATH_CHARS = re.compile(r"[A-Za-z0-9._+@:,=~/-]+", re.ASCII)


def absolute_path_problem(value: str) -> str | None:
    """Why ``value`` is not an absolute, clean host path (no ``..``, ``.`` or ``//``)."""
    if not value.startswith("/"):
        return f"{shown(value)} must be an absolute path (starting with /)"
    if len(value.encode()) > PATH_MAX:
        return f"is longer than {PATH_MAX} bytes (PATH_MAX)"
    if not _PATH_CHARS.fullmatch(value):
        return (
            f"{shown(value)}: a host path may hold letters, digits and . _ + @ : , = ~ - / "
            "only (no spaces, quotes, %, $ or \\)"
        )
    parts = value.split("/")[1:]
    if parts and parts[-1] == "":
        parts = parts[:-1]  # one trailing slash
    if value != "/" and any(p in ("", ".", "..") for p in parts):
        return (
            f"{shown(value)} must be a clean path: no '..' or '.' components and no '//' "
            "(write the path it means)"
        )
    if any(len(p.encode()) > NAME_MAX for p in parts):
        return f"has a component longer than {NAME_MAX} bytes (NAME_MAX)"
    return None


# The docker reference grammar (github.com/distribution/reference, regexp.go).
_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_PATH_COMPONENT = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
_NAME = rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_REFERENCE = re.compile(rf"({_NAME})(?::{_TAG})?(?:@{_DIGEST})?", re.ASCII)
_NAME_MAX_LENGTH = 255


def image_problem(value: str) -> str | None:
    """Why ``value`` is not an image reference (``[registry/]path[:tag][@digest]``), or None."""
    match = _REFERENCE.fullmatch(value)
    if not match:
        return (
            f"{shown(value)} is not an image reference: [registry[:port]/]path[:tag][@digest], "
            "path in lowercase (e.g. registry.k8s.io/kube-scheduler:v1.36.3)"
        )
    if len(match.group(1)) > _NAME_MAX_LENGTH:
        return f"its repository name is longer than {_NAME_MAX_LENGTH} characters"
    return None


def image_repository(image: str) -> str:
    """The image reference without tag and digest.

    ``localhost:5000/a/b`` for ``localhost:5000/a/b:v1@sha256:…`` (a registry's port is no tag).
    """
    name = image.split("@", 1)[0]
    slash, colon = name.rfind("/"), name.rfind(":")
    return name[:colon] if colon > slash else name


def image_tag(image: str) -> str:
    """The tag of an image reference ("" without one; a digest is not a tag)."""
    name = image.split("@", 1)[0]
    slash, colon = name.rfind("/"), name.rfind(":")
    return name[colon + 1 :] if colon > slash else ""


def ip_address_problem(value: str) -> str | None:
    """Why ``value`` is not an IPv4 or IPv6 address literal (no zone ``%x``), or None."""
    import ipaddress  # only here: keeps start-up lean

    if not value.isascii() or "%" in value:
        return (
            f"{shown(value)} is not an IP address (kube-scheduler's --bind-address takes an "
            "IPv4 or IPv6 address; an IPv6 zone %x is not allowed)"
        )
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return f"{shown(value)} is not an IP address"
    return None


def user_name_problem(value: str) -> str | None:
    """Why ``value`` is not a Kubernetes user name (what a kubeconfig authenticates as)."""
    if not value or value != value.strip():
        return f"{shown(value)}: a user name must not be empty or start or end with spaces"
    if len(value) > USER_MAX:
        return f"is longer than {USER_MAX} characters"
    return text_problem(value)


_FLAG = re.compile(r"--[A-Za-z0-9][A-Za-z0-9_.-]*(=.*)?", re.ASCII | re.DOTALL)


def flag_problem(value: Any) -> str | None:
    """Why ``value`` is not one command-line flag, ``--name`` or ``--name=value``."""
    if not isinstance(value, str) or not _FLAG.fullmatch(value):
        return f"{shown(value)} is not a flag (write it as --name or --name=value)"
    if len(value) > FLAG_MAX:
        return f"is longer than {FLAG_MAX} characters"
    if any(c.isspace() for c in value):
        return f"{shown(value)}: write the flag and its value as one --name=value, without spaces"
    return text_problem(value)


_VERSION = re.compile(r"1\.[0-9]{1,3}(\.[0-9]{1,4})?", re.ASCII)


def kubernetes_version_problem(value: str) -> str | None:
    """Why ``value`` is not a strict ASCII ``1.X`` or ``1.X.Y``, or None."""
    if not _VERSION.fullmatch(value):
        return f"{shown(value)} is not a Kubernetes version: write 1.X or 1.X.Y (e.g. 1.36)"
    return None


def int_range_problem(value: int, low: int, high: int = INT32_MAX) -> str | None:
    """Why ``value`` is outside ``low..high`` (int32 by default, as Kubernetes stores it)."""
    if not low <= value <= high:
        if high == INT32_MAX:
            return f"{shown(value)} is out of range: {low} to {high} (a 32-bit integer)"
        return f"{shown(value)}: must be {low}–{high}"
    return None


# A plugin file of kschedctl's own scheduler (spec.builtin.plugins): a path relative to the
# workspace whose file name is a Python module name. The file name becomes a ConfigMap key
# (``plugin-<file>``: Kubernetes' IsConfigMapKey, [-._a-zA-Z0-9]+ of at most 253,
# k8s.io/apimachinery/pkg/util/validation/validation.go), a file in the pod's plugin directory
# and on the host, and a --plugin argument; the loader imports it under its module name.
PLUGIN_PATH_MAX = 255
PLUGIN_FILE_MAX = 100
_PLUGIN_DIR_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*", re.ASCII)
_PLUGIN_FILE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\.py", re.ASCII)
_CONFIGMAP_KEY = re.compile(r"[-._a-zA-Z0-9]+", re.ASCII)
CONFIGMAP_KEY_MAX = 253


def plugin_path_problem(value: Any) -> str | None:
    """Why ``value`` is not a clean relative path of a plugin file (``plugins/rack.py``)."""
    if not isinstance(value, str) or not value:
        return f"{shown(value)} is not a path: name a .py file relative to the workspace"
    if value.startswith("/"):
        return (
            f"{shown(value)} must be relative to the workspace (the directory of "
            "scheduler.yaml): copy the file into it"
        )
    if len(value.encode()) > PLUGIN_PATH_MAX:
        return f"is longer than {PLUGIN_PATH_MAX} bytes"
    *dirs, file = value.split("/")
    if any(part in ("", ".", "..") for part in dirs):
        return (
            f"{shown(value)} must be a clean path inside the workspace: no '..' or '.' "
            "components and no '//'"
        )
    if any(not _PLUGIN_DIR_PART.fullmatch(part) for part in dirs):
        return (
            f"{shown(value)}: a directory name may hold letters, digits and . _ - only "
            "(not starting with . or -)"
        )
    if not _PLUGIN_FILE.fullmatch(file) or len(file) > PLUGIN_FILE_MAX:
        return (
            f"{shown(value)}: the file name must be a Python module name ending in .py "
            f"(a letter or _, then letters, digits or _; at most {PLUGIN_FILE_MAX} "
            "characters): it becomes the module's name, a ConfigMap key and a file name"
        )
    return None


def configmap_key_problem(value: str) -> str | None:
    """Why ``value`` is not a ConfigMap data key (IsConfigMapKey), or None."""
    if not value or len(value) > CONFIGMAP_KEY_MAX or not _CONFIGMAP_KEY.fullmatch(value):
        return (
            f"{shown(value)} is not a ConfigMap key ([-._a-zA-Z0-9]+, at most "
            f"{CONFIGMAP_KEY_MAX} characters)"
        )
    if value in (".", "..") or value.startswith(".."):
        return f"{shown(value)} is not a ConfigMap key (must not be '.' or start with '..')"
    return None
