"""KubeSchedulerConfiguration rules for the scheduler process's own settings: the top-level
numbers (parallelism, percentages, backoff), ``clientConnection`` and ``leaderElection``
(component-base's validation), and ``extenders`` (validation.go's validateExtenders, plus what
client-go refuses in their TLS data when kube-scheduler builds them).

Pure; called by :func:`kschedctl.model.config.validation.check_config`, which owns the type
meta, the profiles and their plugins.
"""

from __future__ import annotations

import re
from typing import Any

from kschedctl.base.errors import Problem, quote
from kschedctl.model.config.durations import parse_go_duration
from kschedctl.model.config.schema import (
    GO_INT32,
    GO_INT64,
    NUMBER,
    check_fields,
    check_list,
    type_message,
    type_ok,
)
from kschedctl.model.config.shapes import qualified_name_problems, shown
from kschedctl.model.config.versions import DEFAULT_LEASE_NAME

__all__ = ["DEFAULT_TRAP", "as_int", "check_extenders", "check_leader_election", "check_top"]

# client-go's leader election adds up to 20% jitter to retryPeriod and refuses a renewDeadline
# that does not leave room for it ("renewDeadline must be greater than retryPeriod*JitterFactor").
_JITTER_FACTOR = 1.2
# client-go's rest.Config.QPS is a float32.
_FLOAT32_MAX = 3.4028234663852886e38

LEADER_ELECTION = {
    "leaderElect": bool,
    "leaseDuration": str,
    "renewDeadline": str,
    "retryPeriod": str,
    "resourceLock": str,
    "resourceName": str,
    "resourceNamespace": str,
}
CLIENT_CONNECTION = {
    "kubeconfig": str,
    "acceptContentTypes": str,
    "contentType": str,
    "qps": NUMBER,
    "burst": GO_INT32,
}

EXTENDER = {
    "urlPrefix": str,
    "filterVerb": str,
    "preemptVerb": str,
    "prioritizeVerb": str,
    "weight": GO_INT64,
    "bindVerb": str,
    "enableHTTPS": bool,
    "tlsConfig": dict,
    "httpTimeout": str,
    "nodeCacheCapable": bool,
    "managedResources": list,
    "ignorable": bool,
}
TLS_CONFIG: dict[str, Any] = {"insecure": bool}
TLS_CONFIG.update(
    dict.fromkeys(("serverName", "certFile", "keyFile", "caFile", "certData", "keyData"), str),
    caData=str,
)
MANAGED_RESOURCE = {"name": str, "ignoredByScheduler": bool}


DEFAULT_TRAP = "the default scheduler's lock"


_TOP_INTS = {
    "parallelism": GO_INT32,
    "percentageOfNodesToScore": GO_INT32,
    "percentageOfPlacementsToScore": GO_INT32,
    "podInitialBackoffSeconds": GO_INT64,
    "podMaxBackoffSeconds": GO_INT64,
}


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check_top(doc: dict[str, Any], out: list[Problem], prefix: str) -> None:
    """validation.go ValidateKubeSchedulerConfiguration's top-level rules (on the defaulted
    config) and component-base's ValidateClientConnectionConfiguration."""
    p = prefix
    cc = check_fields(doc.get("clientConnection"), CLIENT_CONNECTION, p + "clientConnection", out)
    burst = as_int(cc.get("burst"))
    if burst is not None and burst < 0:
        out.append(Problem(p + "clientConnection.burst", "must be non-negative"))
    qps = cc.get("qps")
    if isinstance(qps, NUMBER) and not isinstance(qps, bool) and not abs(qps) <= _FLOAT32_MAX:
        out.append(Problem(p + "clientConnection.qps", f"{shown(qps)} is out of range (float32)"))
    for key in ("enableProfiling", "enableContentionProfiling", "delayCacheUntilActive"):
        if key in doc and not type_ok(doc[key], bool):
            out.append(Problem(p + key, type_message(doc[key], bool)))
    typed: dict[str, int] = {}
    for key, kind in _TOP_INTS.items():
        if key in doc and not type_ok(doc[key], kind):
            out.append(Problem(p + key, type_message(doc[key], kind)))
        elif as_int(doc.get(key)) is not None:
            typed[key] = doc[key]
    if typed.get("parallelism", 1) <= 0:
        out.append(Problem(p + "parallelism", "should be an integer value greater than zero"))
    for key in ("percentageOfNodesToScore", "percentageOfPlacementsToScore"):
        value = typed.get(key)
        if value is not None and not 0 <= value <= 100:
            out.append(Problem(p + key, f"not in valid range [0-100] (got {value})"))
    initial = typed.get("podInitialBackoffSeconds", 1)
    maximum = typed.get("podMaxBackoffSeconds", 10)
    if initial <= 0:
        out.append(
            Problem(p + "podInitialBackoffSeconds", f"must be greater than 0 (got {initial})")
        )
    if maximum < initial:
        out.append(
            Problem(
                p + "podMaxBackoffSeconds",
                f"must be greater than or equal to PodInitialBackoffSeconds (got {maximum}, "
                f"podInitialBackoffSeconds is {initial})",
            )
        )


def _ns(seconds: float) -> int:
    """A parsed Go duration back in its int64 nanoseconds."""
    return round(seconds * 1e9)


def _duration(le: dict[str, Any], key: str, path: str, out: list[Problem]) -> float | None:
    try:
        return parse_go_duration(le[key])
    except (ValueError, KeyError, TypeError) as err:
        if isinstance(err, ValueError):
            out.append(Problem(f"{path}.{key}", str(err)))
        return None


def check_leader_election(
    defaulted: Any, raw: Any, replaces_default: bool, out: list[Problem], prefix: str
) -> None:
    """component-base ValidateLeaderElectionConfiguration on the defaulted values, the
    resourceLock rule of validation.go, client-go's leader elector rules, and the Lease trap."""
    path = prefix + "leaderElection"
    le = check_fields(defaulted, LEADER_ELECTION, path, out)
    lease = _duration(le, "leaseDuration", path, out)
    renew = _duration(le, "renewDeadline", path, out)
    retry = _duration(le, "retryPeriod", path, out)
    if le.get("leaderElect") is False:
        return  # kube-scheduler skips every leader-election rule then
    for key, value in (("leaseDuration", lease), ("renewDeadline", renew), ("retryPeriod", retry)):
        if value is not None and value <= 0:
            out.append(Problem(f"{path}.{key}", f"must be greater than zero (got {le[key]})"))
    if lease is not None and renew is not None and lease <= renew:
        out.append(
            Problem(
                f"{path}.leaseDuration",
                f"{le['leaseDuration']} must be greater than renewDeadline "
                f"({le['renewDeadline']}) (kube-scheduler: must be greater than `RenewDeadline`)",
            )
        )
    # client-go compares int64 nanoseconds with time.Duration(1.2 * float64(retry)), truncated:
    # in float seconds 3600ms would pass against 3s x 1.2 (3.5999…), which client-go refuses.
    if (
        renew is not None
        and retry is not None
        and 0 < renew
        and _ns(renew) <= int(_JITTER_FACTOR * _ns(retry))
    ):
        out.append(
            Problem(
                f"{path}.renewDeadline",
                f"{le['renewDeadline']} must be greater than retryPeriod ({le['retryPeriod']}) "
                "× 1.2: client-go's leader election refuses it (renewDeadline must be greater "
                "than retryPeriod*JitterFactor)",
            )
        )
    if le.get("resourceLock") != "leases":
        out.append(
            Problem(
                f"{path}.resourceLock",
                f'{quote(le.get("resourceLock"))}: resourceLock value must be "leases"',
            )
        )
    given = raw if isinstance(raw, dict) else {}
    if le.get("resourceName") == DEFAULT_LEASE_NAME and not replaces_default:
        where = "is" if given.get("resourceName") else "defaults to"
        out.append(
            Problem(
                f"{path}.resourceName",
                f"{where} {DEFAULT_LEASE_NAME!r}, {DEFAULT_TRAP}: an additional scheduler "
                "holding it only waits as a standby. Use a Lease of its own (e.g. the scheduler "
                "name)",
            )
        )


def check_extenders(raw: Any, out: list[Problem], path: str) -> None:
    binders = 0
    managed: set[str] = set()
    for i, entry in enumerate(check_list(raw, path, out)):
        epath = f"{path}[{i}]"
        ext = check_fields(entry, EXTENDER, epath, out)
        tls = check_fields(ext.get("tlsConfig"), TLS_CONFIG, f"{epath}.tlsConfig", out)
        pem: dict[str, bytes] = {}
        for key in ("certData", "keyData", "caData"):
            problem = _base64_problem(tls.get(key))
            if problem:
                out.append(Problem(f"{epath}.tlsConfig.{key}", problem))
            elif tls.get(key):
                pem[key] = _base64_bytes(tls[key])
        _check_pem(pem, f"{epath}.tlsConfig", out)
        if tls.get("insecure") is True and (tls.get("caFile") or tls.get("caData")):
            # client-go rest.TLSConfigFor, when scheduler.New builds the extenders (with or
            # without enableHTTPS): "couldn't build extenders: specifying a root certificates
            # file with the insecure flag is not allowed".
            out.append(
                Problem(
                    f"{epath}.tlsConfig.insecure",
                    "specifying a root certificates file (caFile/caData) with the insecure flag "
                    "is not allowed: drop one of them",
                )
            )
        weight = as_int(ext.get("weight"))
        if ext.get("prioritizeVerb") and (weight is None or weight <= 0):
            out.append(
                Problem(
                    f"{epath}.weight",
                    f"must have a positive weight applied to it (got {weight or 0})",
                )
            )
        if ext.get("bindVerb"):
            binders += 1
        if "httpTimeout" in ext:  # a null too: metav1.Duration refuses it
            try:
                parse_go_duration(ext["httpTimeout"])
            except ValueError as err:
                out.append(Problem(f"{epath}.httpTimeout", str(err)))
        for j, res in enumerate(
            check_list(ext.get("managedResources"), f"{epath}.managedResources", out)
        ):
            rpath = f"{epath}.managedResources[{j}]"
            resource = check_fields(res, MANAGED_RESOURCE, rpath, out)
            name = resource.get("name")
            name = "" if name is None else name  # Go's zero value
            qualified = qualified_name_problems(name) if isinstance(name, str) else []
            if qualified:
                out += [Problem(f"{rpath}.name", f"{quote(name)}: {m}") for m in qualified]
            elif not _is_extended_resource(name):
                out.append(
                    Problem(
                        f"{rpath}.name",
                        f"{quote(name)} is an invalid extended resource name (expected "
                        "domain/name, not in kubernetes.io)",
                    )
                )
            elif name in managed:
                out.append(
                    Problem(
                        f"{rpath}.name", f"{quote(name)}: duplicate extender managed resource name"
                    )
                )
            else:
                managed.add(str(name))

    if binders > 1:
        out.append(
            Problem(
                path,
                f"found {binders} extenders implementing bind: only one extender can implement "
                "bind",
            )
        )


def _base64_problem(value: Any) -> str | None:
    """Why a ``[]byte`` field's string is not what encoding/json decodes it from: standard,
    padded base64 (\r and \n ignored), or None."""
    if not isinstance(value, str) or not value:
        return None
    import base64  # only for extenders with inline TLS data
    import binascii

    text = value.replace("\r", "").replace("\n", "")
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return (
            "is not base64: certData, keyData and caData hold the PEM file base64-encoded "
            "(kube-scheduler: illegal base64 data)"
        )
    return None


def _base64_bytes(value: str) -> bytes:
    import base64  # only for extenders with inline TLS data

    return base64.b64decode(value.replace("\r", "").replace("\n", ""))


_PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----\r?\n")


def ca_pem_problem(data: bytes) -> str:
    """Why client-go refuses ``data`` as root certificates ("" if it does not; transport.go
    createErrorParsingCAData's words: PEM blocks of other types are skipped)."""
    blocks = {m.group(1) for m in _PEM_BLOCK.finditer(data)}
    if b"CERTIFICATE" in blocks:
        return ""
    why = (
        "no valid certificate authority data seen"
        if blocks
        else "unable to parse bytes as PEM block"
    )
    return (
        "holds no PEM certificate (-----BEGIN CERTIFICATE-----): kube-scheduler: "
        f"unable to load root certificates: {why}"
    )


def extender_tls_files(doc: Any, prefix: str = "") -> list[tuple[str, str]]:
    """The files kube-scheduler reads when ``scheduler.New`` builds the extenders, in its
    order, as (field path, file): each extender's caFile, certFile, keyFile (client-go
    transport.loadTLSFiles). Not read, so not listed: a file its inline data replaces, and
    every file of an extender whose TLS config client-go skips (no CA, no client certificate
    pair, not insecure, no serverName) or refuses first (a CA with ``insecure``)."""
    extenders = doc.get("extenders") if isinstance(doc, dict) else None
    files: list[tuple[str, str]] = []
    for i, ext in enumerate(extenders if isinstance(extenders, list) else []):
        tls = ext.get("tlsConfig") if isinstance(ext, dict) else None
        if not isinstance(tls, dict):
            continue
        given = {k: v for k, v in tls.items() if isinstance(v, str) and v}
        has_ca = "caFile" in given or "caData" in given
        cert_pair = bool({"certFile", "certData"} & set(given)) and bool(
            {"keyFile", "keyData"} & set(given)
        )
        # pkg/scheduler/extender.go makeTransport: HTTPS without a CA is insecure
        insecure = tls.get("insecure") is True or (ext.get("enableHTTPS") is True and not has_ca)
        if (has_ca and tls.get("insecure") is True) or not (
            has_ca or cert_pair or insecure or "serverName" in given
        ):
            continue
        for name in ("ca", "cert", "key"):
            if f"{name}File" in given and f"{name}Data" not in given:
                files.append((f"{prefix}extenders[{i}].tlsConfig.{name}File", given[f"{name}File"]))
    return files


def _check_pem(pem: dict[str, bytes], path: str, out: list[Problem]) -> None:
    """What client-go (transport.TLSConfigFor, when scheduler.New builds the extenders) refuses
    in inline TLS data: a caData with no CERTIFICATE PEM block, a certData/keyData pair
    without PEM blocks (tls.X509KeyPair). Block contents are not parsed here."""
    types = {key: {m.group(1) for m in _PEM_BLOCK.finditer(data)} for key, data in pem.items()}
    if "caData" in types and ca_pem_problem(pem["caData"]):
        out.append(Problem(f"{path}.caData", ca_pem_problem(pem["caData"])))
    if "certData" in types and "keyData" in types:
        if b"CERTIFICATE" not in types["certData"]:
            out.append(
                Problem(
                    f"{path}.certData",
                    "holds no PEM certificate: kube-scheduler: tls: failed to find any PEM data "
                    "in certificate input",
                )
            )
        elif not any(t.endswith(b"PRIVATE KEY") for t in types["keyData"]):
            out.append(
                Problem(
                    f"{path}.keyData",
                    "holds no PEM private key: kube-scheduler: tls: failed to find any PEM "
                    "data in key input",
                )
            )


def _is_extended_resource(name: Any) -> bool:
    """pkg/apis/core/v1/helper IsExtendedResourceName: not native (it has a '/' and does not
    contain "kubernetes.io/"), not "requests."-prefixed, and "requests." + name is still a
    qualified name (so its prefix is at most 244 characters)."""
    if not isinstance(name, str) or "/" not in name or "kubernetes.io/" in name:
        return False
    return not name.startswith("requests.") and not qualified_name_problems("requests." + name)
