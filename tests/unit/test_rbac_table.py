"""RBAC of program kube-scheduler: the per-version table of the bootstrap roles, least
privilege (``spec.rbac``), what ``status`` reads back, and the rule-coverage helpers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.model.config import rbac
from kschedctl.model.config.versions import PATCH_RELEASES, parse_version, supported_minors
from kschedctl.observe.permissions import DEFAULT_LEASE_UPDATE, RbacMode, rbac_mode
from kschedctl.ops.status import rbac_warnings
from kschedctl.render.forms import render
from kschedctl.spec import check_spec, default_spec, spec_from_dict

FIXTURE = Path(__file__).parent / "fixtures" / "rbac" / "bootstrap-scheduler-roles.yaml"
UPSTREAM: dict[str, Any] = yaml.safe_load(FIXTURE.read_text())
VERSIONS = supported_minors()
COORD = "coordination.k8s.io"
# Leader-election resources: none of them may be granted cluster-wide by the ClusterRole.
LOCK_RESOURCES = {"leases", "leasecandidates", "endpoints", "configmaps"}


def _docs(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]


def _objects(spec_rbac: str = "leastPrivilege", version: str = "1.36", form: str = "deployment"):
    spec = default_spec("my-scheduler", kubernetes_version=version, rbac=spec_rbac)
    spec.image = ""
    from kschedctl.spec import apply_defaults

    return {
        (d["kind"], d["metadata"]["name"]): d for d in _docs(render(apply_defaults(spec), form))
    }


# --- the table holds upstream's bootstrap roles, version by version ------------------------


def test_the_fixture_covers_every_supported_version_at_its_patch() -> None:
    assert list(UPSTREAM) == VERSIONS
    for minor, entry in UPSTREAM.items():
        assert entry["tag"] == parse_version(minor).tag
        assert parse_version(minor).patch == PATCH_RELEASES[int(minor.split(".")[1])]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("role", rbac.BOOTSTRAP_ROLES)
def test_bootstrap_rules_are_upstreams_exactly(version: str, role: str) -> None:
    assert rbac.bootstrap_rules(parse_version(version), role) == UPSTREAM[version]["roles"][role]


@pytest.mark.parametrize("version", VERSIONS)
def test_least_privilege_is_the_bootstrap_roles_minus_the_default_lock(version: str) -> None:
    v = parse_version(version)
    bootstrap = [r for role in rbac.BOOTSTRAP_ROLES for r in UPSTREAM[version]["roles"][role]]
    ours = rbac.scheduler_rules(v)
    assert rbac.uncovered(bootstrap, ours) == set()  # nothing beyond the bootstrap roles
    missing = rbac.uncovered(ours, bootstrap)
    assert missing == rbac.permissions(rbac.lock_rules(v))  # and exactly the lock left out
    assert {resource for _, _, resource, _ in missing} <= LOCK_RESOURCES
    assert ("update", COORD, "leases", "kube-scheduler") in missing
    assert ("create", COORD, "leases", "") in missing


@pytest.mark.parametrize("version", VERSIONS)
def test_least_privilege_grants_no_leader_election_rights(version: str) -> None:
    rules = rbac.scheduler_rules(parse_version(version))
    granted = rbac.permissions(rules)
    assert not {p for p in granted if p[2] in LOCK_RESOURCES}
    for verb in ("get", "update", "patch", "delete", "create"):
        assert not rbac.allows(rules, (verb, COORD, "leases", "kube-scheduler"))
    assert not any("resourceNames" in r for r in rules)


@pytest.mark.parametrize(
    ("version", "present", "absent"),
    [
        ("1.25", ["csistoragecapacities"], ["volumeattachments", "resourceslices"]),
        ("1.31", ["csinodes"], ["volumeattachments", "resourceclaims"]),
        ("1.32", ["volumeattachments"], ["resourceslices", "deviceclasses"]),
        ("1.34", ["resourceslices", "deviceclasses", "resourceclaims/status", "pods/finalizers"],
         ["resourceclaims/binding"]),
        ("1.36", ["resourceclaims/binding"], ["devicetaintrules"]),
        ("1.37", ["devicetaintrules"], []),
    ],
)  # fmt: skip
def test_version_ranges(version: str, present: list[str], absent: list[str]) -> None:
    resources = {p[2] for p in rbac.permissions(rbac.scheduler_rules(parse_version(version)))}
    assert set(present) <= resources
    assert not set(absent) & resources


def test_one_row_per_rule_and_sane_ranges() -> None:
    for row in rbac.BOOTSTRAP_RULES:
        assert 25 <= row.since <= row.until <= 37, row
        assert row.role in rbac.BOOTSTRAP_ROLES
        assert list(row.verbs) == sorted(row.verbs), row  # as upstream's testdata lists them
        assert row.lock == (set(row.resources) <= LOCK_RESOURCES), row


# --- the rule-coverage helpers ---------------------------------------------------------------


def test_allows_matches_like_the_rbac_authorizer() -> None:
    named = [{"apiGroups": [COORD], "resources": ["leases"], "resourceNames": ["a"],
              "verbs": ["get"]}]  # fmt: skip
    assert rbac.allows(named, ("get", COORD, "leases", "a"))
    assert not rbac.allows(named, ("get", COORD, "leases", "b"))
    assert not rbac.allows(named, ("get", COORD, "leases", ""))  # a name never covers all
    wild = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
    assert rbac.allows(wild, ("update", COORD, "leases", "kube-scheduler"))
    assert not rbac.allows([{"apiGroups": [""], "resources": ["pods"]}], ("get", "", "pods", ""))
    assert rbac.uncovered(wild, named) == set()
    assert rbac.uncovered(named, wild) == {("*", "*", "*", "")}


# --- rendered objects -------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("form", ["pod", "deployment"])
def test_rendered_cluster_role_is_the_table(version: str, form: str) -> None:
    objects = _objects(version=version, form=form)
    role = objects[("ClusterRole", "my-scheduler-scheduler")]
    assert role["rules"] == rbac.scheduler_rules(parse_version(version))
    binding = objects[("ClusterRoleBinding", "my-scheduler-scheduler")]
    assert binding["roleRef"]["name"] == "my-scheduler-scheduler"
    assert not [k for k in objects if k[0] == "ClusterRoleBinding" and "-as-" in k[1]]
    # The scheduler's own Lease: a create in its namespace, its own name, never kube-scheduler.
    lease_role = objects[("Role", "my-scheduler-leader-election")]
    assert lease_role["metadata"]["namespace"] == "kube-system"
    assert not rbac.allows(lease_role["rules"], ("update", COORD, "leases", "kube-scheduler"))
    assert rbac.allows(lease_role["rules"], ("update", COORD, "leases", "my-scheduler"))


@pytest.mark.parametrize(
    ("spec_rbac", "kinds"),
    [
        ("leastPrivilege", [("ClusterRole", "my-scheduler-scheduler"),
                            ("ClusterRoleBinding", "my-scheduler-scheduler")]),
        ("builtinRoles", [("ClusterRoleBinding", "my-scheduler-as-kube-scheduler"),
                          ("ClusterRoleBinding", "my-scheduler-as-volume-scheduler")]),
    ],
)  # fmt: skip
def test_each_mode_renders_its_objects_only(spec_rbac: str, kinds: list[tuple[str, str]]) -> None:
    objects = _objects(spec_rbac)
    cluster_wide = [k for k in objects if k[0] in ("ClusterRole", "ClusterRoleBinding")]
    # and the status metrics reader's (component metrics: not the scheduler's RBAC mode)
    assert cluster_wide == [*kinds, ("ClusterRole", "my-scheduler-metrics-reader"),
                            ("ClusterRoleBinding", "my-scheduler-metrics-reader-status")]  # fmt: skip
    reader = objects[("RoleBinding", "my-scheduler-extension-apiserver-authentication-reader")]
    assert reader["roleRef"]["name"] == "extension-apiserver-authentication-reader"
    assert rbac_mode(list(objects.values())) == RbacMode(
        spec_rbac, tuple(objects[k]["roleRef"]["name"] for k in kinds if k[0].endswith("Binding"))
    )


def test_without_leader_election_no_lease_right_at_all() -> None:
    spec = default_spec("my-scheduler", leader_elect=False)
    docs = _docs(render(spec, "deployment"))
    rules = [r for d in docs for r in d.get("rules", [])]
    assert not [p for p in rbac.permissions(rules) if p[2] in LOCK_RESOURCES]


def test_builtin_program_has_no_lease_rights_in_its_cluster_role() -> None:
    spec = default_spec("fb", program="builtin")
    from kschedctl.spec import apply_defaults

    docs = _docs(render(apply_defaults(spec), "deployment"))
    (role,) = [d for d in docs if d["kind"] == "ClusterRole"]
    assert not [p for p in rbac.permissions(role["rules"]) if p[2] in LOCK_RESOURCES]
    (lease_role,) = [d for d in docs if d["kind"] == "Role"]
    # (A create is by namespace: RBAC cannot name what is created; the lock exists anyway.)
    for verb in ("get", "update", "patch", "delete"):
        assert not rbac.allows(lease_role["rules"], (verb, COORD, "leases", "kube-scheduler"))
    bound = {d["roleRef"]["name"] for d in docs if "roleRef" in d}
    assert not bound & set(rbac.BOOTSTRAP_ROLES)


# --- spec.rbac --------------------------------------------------------------------------------


def _problems(**spec: object) -> list[str]:
    doc = {"apiVersion": "kschedctl.io/v1alpha1", "kind": "Scheduler",
           "metadata": {"name": "s"}, "spec": spec}  # fmt: skip
    _, problems = spec_from_dict(doc)
    return [f"{p.path}: {p.message}" for p in problems]


def test_spec_rbac_defaults_to_least_privilege_and_is_written_only_when_chosen() -> None:
    spec, problems = spec_from_dict(
        {"apiVersion": "kschedctl.io/v1alpha1", "kind": "Scheduler", "metadata": {"name": "s"}}
    )
    assert problems == [] and spec is not None and spec.rbac == "leastPrivilege"
    assert "rbac" not in spec.to_dict()["spec"]
    spec.rbac = "builtinRoles"
    data = spec.to_dict()
    assert data["spec"]["rbac"] == "builtinRoles"
    again, problems = spec_from_dict(data)
    assert problems == [] and again == spec


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("LeastPrivilege", "spec.rbac: must be one of leastPrivilege, builtinRoles"),
        ("", "spec.rbac: must be one of leastPrivilege, builtinRoles"),
        # refused by the spec-wide walk before the rbac check: a line break is never allowed
        ("builtinRoles\n---\nkind: ClusterRoleBinding", "spec.rbac: "),
        (["builtinRoles"], "spec.rbac: must be a string"),
        (None, "spec.rbac: must not be null"),
        (1, "spec.rbac: must be a string"),
    ],
    ids=["case", "empty", "injection", "list", "null", "int"],
)
def test_spec_rbac_is_strict(value: object, expected: str) -> None:
    problems = _problems(rbac=value)
    assert any(p.startswith(expected) for p in problems), problems
    assert not any("ClusterRoleBinding\n" in p for p in problems)  # never echoed


def test_builtin_roles_do_not_apply_to_program_builtin() -> None:
    problems = _problems(rbac="builtinRoles", program="builtin")
    assert any(
        p.startswith("spec.rbac: builtinRoles applies to program kube-scheduler") for p in problems
    )
    spec = default_spec("s", program="builtin")
    assert check_spec(spec) == []  # the default is fine for it


def test_validate_and_render_refuse_a_bad_rbac_alike(tmp_path: Path) -> None:
    from kschedctl.cli import app

    path = tmp_path / "scheduler.yaml"
    path.write_text(
        "apiVersion: kschedctl.io/v1alpha1\nkind: Scheduler\nmetadata: {name: s}\n"
        "spec: {rbac: everything}\n"
    )
    runner = CliRunner()
    validated = runner.invoke(app, ["validate", str(path)])
    rendered = runner.invoke(app, ["render", str(path), "--as", "deployment"])
    assert validated.exit_code == rendered.exit_code == 3
    assert "spec.rbac" in validated.output and "spec.rbac" in rendered.output


# --- what status reads back -------------------------------------------------------------------


def _binding(name: str, role: str) -> dict[str, Any]:
    return {"kind": "ClusterRoleBinding", "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": role}}  # fmt: skip


def test_rbac_mode_and_the_warning_for_both_modes_bound() -> None:
    least = [_binding("s-scheduler", "s-scheduler")]
    builtin = [
        _binding("s-as-kube-scheduler", "system:kube-scheduler"),
        _binding("s-as-volume-scheduler", "system:volume-scheduler"),
    ]
    assert rbac_mode([]) is None
    assert rbac_mode([{"kind": "Role", "metadata": {"name": "x"}}]) is None
    assert rbac_mode(least) == RbacMode("leastPrivilege", ("s-scheduler",))
    assert rbac_mode(builtin) == RbacMode(
        "builtinRoles", ("system:kube-scheduler", "system:volume-scheduler")
    )
    assert rbac_warnings(least) == rbac_warnings(builtin) == []
    both = rbac_mode(builtin + least)
    assert both is not None and both.mode == "builtinRoles" and both.stale == ("s-scheduler",)
    (warning,) = rbac_warnings(builtin + least)
    assert "s-as-kube-scheduler, s-as-volume-scheduler" in warning
    assert "(ClusterRoleBinding s-scheduler)" in warning


def test_the_default_lease_check_names_the_default_lock() -> None:
    assert str(DEFAULT_LEASE_UPDATE) == (
        "update leases.coordination.k8s.io 'kube-scheduler' in kube-system"
    )


def test_status_table_says_which_rbac() -> None:
    from kschedctl.cli.status import _rbac_line
    from kschedctl.ops.status import SchedulerStatus

    def line(rbac_report: dict[str, Any]) -> str:
        status = SchedulerStatus("s", None, [], None, rbac_report,  # type: ignore[arg-type]
                                 {"server": "", "image": None, "skew": ""}, [], [], [])  # fmt: skip
        return _rbac_line(status)

    assert line({"mode": "leastPrivilege", "clusterRoles": ["s-scheduler"],
                 "defaultLeaseUpdate": False}) == (
        "RBAC mode:  leastPrivilege (ClusterRole s-scheduler); cannot update the default "
        "scheduler's Lease"
    )  # fmt: skip
    assert "CAN update the default scheduler's Lease kube-system/kube-scheduler" in line(
        {"mode": "builtinRoles", "clusterRoles": ["system:kube-scheduler"],
         "defaultLeaseUpdate": True}
    )  # fmt: skip
    assert line({"mode": None, "clusterRoles": [], "defaultLeaseUpdate": None}).startswith(
        "RBAC mode:  - (no ClusterRoleBinding"
    )
