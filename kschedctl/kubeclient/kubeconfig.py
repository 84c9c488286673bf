"""kubeconfig files loaded and merged the way kubectl does, on plain dicts.

The rules are client-go's ``clientcmd.ClientConfigLoadingRules.Load`` (k8s.io/client-go
v0.36.3, tools/clientcmd/loader.go), which kubectl uses:

- ``--kubeconfig FILE`` is the only file read, and must exist. Otherwise every entry of
  ``$KUBECONFIG`` (``os.pathsep``-separated; empty entries skipped, duplicates read once), or
  ``~/.kube/config`` when ``$KUBECONFIG`` is empty; a missing file in that list is ignored.
- clusters, users and contexts are maps keyed by name: the FIRST file that defines a name
  wins (within one file, the last entry of a name wins, as client-go's list-to-map conversion
  does). ``current-context`` (like every other single value): the first file that sets a
  non-empty one wins.
- relative file references (a cluster's ``certificate-authority``; a user's
  ``client-certificate``, ``client-key``, ``tokenFile`` and an exec ``command`` that contains
  a path separator) resolve against the directory of the file that defined the entry
  (``ResolveLocalPaths``, ``GetClusterFileReferences``, ``GetAuthInfoFileReferences``).

The official Python client's ``KubeConfigMerger`` does not follow these rules (the LAST
``current-context`` wins there, and an empty file is an error), hence this module. Overrides
(``--context``, ``--cluster``, ``--user``, ``-n``) are applied by :func:`select`, which returns
a one-context kubeconfig dict the client loads as is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kschedctl.base.errors import ClusterError, KschedError, NotFoundError, quote, shown_path

# kubeconfigs embed certificates; a few hundred clusters fit in 16 MiB.
MAX_KUBECONFIG_BYTES = 16 * 1024 * 1024
_SECTIONS = (("clusters", "cluster"), ("users", "user"), ("contexts", "context"))
_LISTED = 10  # names an error message lists


@dataclass(frozen=True)
class Selection:
    """What one invocation uses: the context's name, its namespace, and a kubeconfig dict
    holding exactly that context, its cluster and its user (overrides applied)."""

    context: str
    namespace: str
    cluster: str
    config: dict[str, Any]


@dataclass(frozen=True)
class Overrides:
    """kubectl's connection flags that replace the kubeconfig's values (``--server``,
    ``--certificate-authority``, ``--insecure-skip-tls-verify``, ``--token``), and those that
    change each request (``--as``, ``--as-group``, ``--request-timeout``: 0 no limit, None the
    default). Pure data: :func:`select` applies the first four, ``Cluster`` the others."""

    server: str | None = None
    certificate_authority: str | None = None
    insecure_skip_tls_verify: bool = False
    token: str | None = None
    impersonate: str | None = None
    impersonate_groups: tuple[str, ...] = ()
    request_timeout: float | None = None

    def cluster_entry(self, entry: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """A kubeconfig ``clusters`` entry with --server, --certificate-authority and
        --insecure-skip-tls-verify applied (``None``: no entry and no --server)."""
        body = dict((entry or {}).get("cluster") or {})
        if entry is None and self.server is None:
            return None
        if self.server is not None:
            body["server"] = self.server
        if self.certificate_authority is not None:
            # client-go: the flag's file replaces the kubeconfig's file or data
            body.pop("certificate-authority-data", None)
            body["certificate-authority"] = self.certificate_authority
            body.pop("insecure-skip-tls-verify", None)
        if self.insecure_skip_tls_verify:
            # kubectl refuses a CA with the flag; a kubeconfig's own CA gives way to it
            body.pop("certificate-authority-data", None)
            body.pop("certificate-authority", None)
            body["insecure-skip-tls-verify"] = True
        return {"name": (entry or {}).get("name") or "kschedctl-server", "cluster": body}

    def user_entry(self, entry: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """A ``users`` entry with --token applied: the token replaces the user's credentials
        (its tokenFile, client certificate, exec plugin), so the API server sees the token's
        identity, not the certificate's."""
        if self.token is None:
            return dict(entry) if entry is not None else None
        name = (entry or {}).get("name") or "kschedctl-token"
        return {"name": name, "user": {"token": self.token}}


def kubeconfig_paths(
    explicit: str | None, env: Mapping[str, str] | None = None, home: str | None = None
) -> list[str]:
    """The files to read, in precedence order (see the module docstring)."""
    if explicit:
        return [explicit]
    env = os.environ if env is None else env
    value = env.get("KUBECONFIG", "")
    if value:
        paths: list[str] = []
        for entry in value.split(os.pathsep):
            if entry and entry not in paths:
                paths.append(entry)
        return paths
    base = home if home is not None else str(Path.home())
    return [os.path.join(base, ".kube", "config")]


def read_kubeconfigs(paths: Sequence[str], explicit: bool) -> list[tuple[str, dict[str, Any]]]:
    """``(path, parsed dict)`` for each file of ``paths`` that exists, in order.

    A missing file is skipped, unless ``explicit`` (``--kubeconfig``): then it is an error
    (exit 4). A file that cannot be read or parsed is an error (exit 4) naming it.
    """
    # here: yaml costs ~15 ms, and only the commands that read a kubeconfig need it
    import yaml

    from kschedctl.base.userfile import read_user_file

    loaded: list[tuple[str, dict[str, Any]]] = []
    for path in paths:
        try:
            text = read_user_file(path, MAX_KUBECONFIG_BYTES)
        except NotFoundError as err:
            if explicit:  # exit 4 like every "no cluster to talk to" (README "Exit codes")
                raise ClusterError(
                    f"kubeconfig {shown_path(path)} does not exist", hint=_HINT
                ) from err
            continue
        except KschedError as err:
            raise ClusterError(f"cannot read kubeconfig: {err.message}", hint=_HINT) from err
        try:
            data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError as err:
            raise ClusterError(
                f"kubeconfig {shown_path(path)} is not valid YAML: "
                f"{str(err).splitlines()[0][:200]}",
                hint=_HINT,
            ) from err
        if data is None:  # an empty file is an empty config, as in clientcmd.Load
            data = {}
        if not isinstance(data, dict):
            raise ClusterError(f"kubeconfig {shown_path(path)} is not a mapping", hint=_HINT)
        loaded.append((os.path.abspath(path), data))
    return loaded


_HINT = (
    "pass --kubeconfig FILE and --context NAME, or set KUBECONFIG "
    '(for the lab: eval "$(kschedctl lab env)")'
)


def merge_kubeconfigs(files: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """One kubeconfig dict from ``(path, dict)`` pairs in precedence order (kubectl's rules).

    Each cluster/user/context entry keeps the file it came from: relative paths in it are made
    absolute against that file's directory.
    """
    merged: dict[str, Any] = {"apiVersion": "v1", "kind": "Config"}
    tables: dict[str, dict[str, dict[str, Any]]] = {section: {} for section, _ in _SECTIONS}
    for path, data in files:
        base = os.path.dirname(os.path.abspath(path))
        for section, field in _SECTIONS:
            seen_here: dict[str, dict[str, Any]] = {}
            for entry in _entries(data.get(section)):
                seen_here[entry["name"]] = entry  # last of a name within one file wins
            for name, entry in seen_here.items():
                if name not in tables[section]:  # first file wins
                    tables[section][name] = _resolved(section, entry, field, base)
        current = data.get("current-context")
        if isinstance(current, str) and current and "current-context" not in merged:
            merged["current-context"] = current
        for key in ("preferences", "extensions"):
            if key in data and key not in merged:
                merged[key] = data[key]
    for section, _ in _SECTIONS:
        merged[section] = list(tables[section].values())
    return merged


def _entries(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return []
    return [e for e in value if isinstance(e, dict) and isinstance(e.get("name"), str)]


def _resolved(section: str, entry: dict[str, Any], field: str, base: str) -> dict[str, Any]:
    body = entry.get(field)
    if not isinstance(body, dict):
        return dict(entry)
    body = dict(body)
    if section == "clusters":
        refs = ["certificate-authority"]
    elif section == "users":
        refs = ["client-certificate", "client-key", "tokenFile"]
        exec_ = body.get("exec")
        if isinstance(exec_, dict) and os.sep in str(exec_.get("command") or ""):
            command = str(exec_["command"])
            body["exec"] = {**exec_, "command": _absolute(command, base)}
    else:
        refs = []
    for ref in refs:
        value = body.get(ref)
        if isinstance(value, str) and value:
            body[ref] = _absolute(value, base)
    return {**entry, field: body}


def _absolute(path: str, base: str) -> str:
    return path if os.path.isabs(path) else os.path.normpath(os.path.join(base, path))


def section_names(merged: Mapping[str, Any], section: str) -> list[str]:
    """The names in one section (``clusters``, ``users``, ``contexts``) in merged order."""
    return [e["name"] for e in _entries(merged.get(section))]


def select(
    merged: Mapping[str, Any],
    *,
    context: str | None = None,
    cluster: str | None = None,
    user: str | None = None,
    namespace: str | None = None,
    overrides: Overrides | None = None,
) -> Selection:
    """The context to use, with kubectl's overrides applied.

    ``context`` defaults to ``current-context``; ``cluster``/``user`` replace the context's
    own; ``namespace`` defaults to the context's, then ``default``; ``overrides`` replace the
    server, its CA and the user's token (with ``--server``, no context is needed). Unknown
    names are :class:`NotFoundError` (exit 5) listing what exists.
    """
    overrides = overrides or Overrides()
    contexts = {e["name"]: e for e in _entries(merged.get("contexts"))}
    name = context or merged.get("current-context") or ""
    if not name:
        if cluster is None and overrides.server is None:
            raise ClusterError(
                "no context chosen: the kubeconfig sets no current-context",
                hint=f"pass --context NAME ({_available(contexts)})",
            )
        chosen: dict[str, Any] = {}
    elif name not in contexts:
        raise NotFoundError(
            f"context {quote(name)} not found in the kubeconfig",
            hint=f"{_available(contexts)}; pass --context NAME or --kubeconfig FILE",
        )
    else:
        body = contexts[name].get("context")
        chosen = dict(body) if isinstance(body, dict) else {}
    cluster_name = cluster or str(chosen.get("cluster") or "")
    user_name = user or str(chosen.get("user") or "")
    clusters = {e["name"]: e for e in _entries(merged.get("clusters"))}
    users = {e["name"]: e for e in _entries(merged.get("users"))}
    if cluster_name not in clusters and not (overrides.server and not cluster):
        what = f"cluster {quote(cluster_name)}" if cluster_name else "no cluster"
        raise NotFoundError(
            f"{what} for context {quote(name)}: not in the kubeconfig"
            if not cluster
            else f"cluster {quote(cluster_name)} not found in the kubeconfig",
            hint=f"clusters found: {_listed(list(clusters))}; pass --cluster NAME",
        )
    if user_name and user_name not in users:
        raise NotFoundError(
            f"user {quote(user_name)} not found in the kubeconfig",
            hint=f"users found: {_listed(list(users))}; pass --user NAME",
        )
    ns = namespace or str(chosen.get("namespace") or "") or "default"
    effective = name or "kschedctl-override"
    cluster_entry = overrides.cluster_entry(clusters.get(cluster_name))
    user_entry = overrides.user_entry(users.get(user_name) if user_name else None)
    assert cluster_entry is not None  # a cluster found above, or --server
    context_body = {
        **chosen,
        "cluster": cluster_entry["name"],
        "user": user_entry["name"] if user_entry else "",
        "namespace": ns,
    }
    config: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": effective,
        "contexts": [{"name": effective, "context": context_body}],
        "clusters": [cluster_entry],
        "users": [user_entry] if user_entry else [],  # none: anonymous
    }
    return Selection(context=effective, namespace=ns, cluster=cluster_entry["name"], config=config)


def _available(contexts: Mapping[str, Any]) -> str:
    return f"contexts found: {_listed(list(contexts))}"


def _listed(found: list[str]) -> str:
    if not found:
        return "none"
    shown = ", ".join(quote(n) for n in found[:_LISTED])
    return shown + (f" and {len(found) - _LISTED} more" if len(found) > _LISTED else "")


# -- the direct connection -----------------------------------------------------------------------

# What the official client reads from a cluster entry besides these: `proxy-url`
# (kubernetes/config/kube_config.py ``_load_cluster_info``), which sends us to the client.
_DIRECT_USER_KEYS = frozenset(
    {"client-certificate", "client-certificate-data", "client-key", "client-key-data"}
    | {"token", "tokenFile", "extensions"}
)


@dataclass(frozen=True)
class DirectPlan:
    """A connection kschedctl can open with urllib3 alone (no kubernetes client): TLS from
    files or base64 ``-data``, a bearer token or a client certificate. File paths are
    absolute (resolved by :func:`merge_kubeconfigs`); ``*_data`` are still base64."""

    server: str
    verify: bool = True
    ca_file: str | None = None
    ca_data: str | None = None
    tls_server_name: str | None = None
    cert_file: str | None = None
    cert_data: str | None = None
    key_file: str | None = None
    key_data: str | None = None
    token: str | None = None
    token_file: str | None = None


def direct_plan(selection: Selection, proxies: Mapping[str, str]) -> DirectPlan | None:
    """The :class:`DirectPlan` for ``selection``, or ``None`` when it needs the official client:
    an exec plugin, an auth-provider, username/password, impersonation, any other user key, a
    ``proxy-url``, or an environment proxy (``proxies``: :func:`urllib.request.getproxies`)
    for the server's scheme, which the client honours (its ``Configuration._env_proxy``).
    Values of unexpected types also go to the client, so its errors stay the same."""
    config = selection.config
    cluster = _body(config.get("clusters"), "cluster")
    users = config.get("users") or []
    user = _body(users, "user") if users else {}
    if cluster is None or user is None:
        return None
    server = cluster.get("server")
    if not isinstance(server, str) or not server.startswith(("https://", "http://")):
        return None
    if "proxy-url" in cluster or not set(user) <= _DIRECT_USER_KEYS:
        return None
    scheme = server.split(":", 1)[0]
    if proxies.get(scheme) or proxies.get("all"):
        return None
    texts: dict[str, str | None] = {}
    for source, key in (
        (cluster, "certificate-authority"),
        (cluster, "certificate-authority-data"),
        (cluster, "tls-server-name"),
        (user, "client-certificate"),
        (user, "client-certificate-data"),
        (user, "client-key"),
        (user, "client-key-data"),
        (user, "token"),
        (user, "tokenFile"),
    ):
        value = source.get(key)
        if value is not None and not isinstance(value, str):
            return None
        texts[key] = value or None
    insecure = cluster.get("insecure-skip-tls-verify", False)
    if not isinstance(insecure, bool):
        return None
    https = server.startswith("https://")

    def file_or_data(body: Mapping[str, Any], key: str) -> tuple[str | None, str | None]:
        # ``FileOrData``: a ``-data`` field, even empty, wins over its file; certificates
        # are read only for an https server (``_load_cluster_info``)
        if not https:
            return None, None
        if f"{key}-data" in body:
            return None, texts[f"{key}-data"]
        return texts[key], None

    ca_file, ca_data = file_or_data(cluster, "certificate-authority")
    cert_file, cert_data = file_or_data(user, "client-certificate")
    key_file, key_data = file_or_data(user, "client-key")
    return DirectPlan(
        server=server.rstrip("/"),
        verify=not insecure,
        ca_file=ca_file,
        ca_data=ca_data,
        tls_server_name=texts["tls-server-name"],
        cert_file=cert_file,
        cert_data=cert_data,
        key_file=key_file,
        key_data=key_data,
        token=texts["token"],
        token_file=None if "token" in user else texts["tokenFile"],  # ``token`` wins
    )


def _body(entries: Any, field: str) -> dict[str, Any] | None:
    """The body of the one entry a :class:`Selection` config holds in a section."""
    if not isinstance(entries, list) or len(entries) != 1 or not isinstance(entries[0], dict):
        return None
    body = entries[0].get(field)
    return body if isinstance(body, dict) else None
