"""rollback's checks of a stored revision (ops/rollback.py): its spec is loaded as a user's
file, must name the same scheduler and namespace, and must render what it recorded."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kschedctl import __version__
from kschedctl.base.errors import SpecError
from kschedctl.base.yamltext import to_yaml
from kschedctl.observe.revisions import Revision
from kschedctl.ops.history import rendered_digest
from kschedctl.ops.reporter import Reporter
from kschedctl.ops.rollback import check_digest, revision_spec
from kschedctl.spec import default_spec, ensure_valid


def revision(**changes: object) -> Revision:
    spec = ensure_valid(default_spec("s1"))
    base = Revision(
        name="s1", namespace="kube-system", number=2, form="deployment",
        spec=to_yaml(spec.to_dict(), document=True),
        objects_hash=rendered_digest(spec, "deployment"), version=__version__, by="me",
        at="2026-01-01T00:00:00Z",
    )  # fmt: skip
    return replace(base, **changes)  # type: ignore[arg-type]


def test_a_good_revision_loads_and_matches_its_hash() -> None:
    rev = revision()
    spec = revision_spec(rev)
    assert (spec.name, spec.namespace) == ("s1", "kube-system")
    check_digest(rev, spec, Reporter())


def test_an_invalid_spec_is_refused_naming_the_revision() -> None:
    rev = revision(spec=revision().spec.replace("replicas: 1", "replicas: many"))
    with pytest.raises(SpecError, match=r"revision 2 \(kschedctl.s1.v2\): spec.replicas"):
        revision_spec(rev)


def test_a_spec_of_another_scheduler_or_namespace_is_refused() -> None:
    other = revision().spec.replace("s1", "s2")
    with pytest.raises(SpecError, match="records scheduler 's2'"):
        revision_spec(revision(spec=other))
    with pytest.raises(SpecError, match="not 's1' in 'elsewhere'"):
        revision_spec(revision(namespace="elsewhere"))


def test_a_plugin_file_outside_the_workspace_is_refused() -> None:
    with pytest.raises(SpecError, match="plugin file '../../etc/x.py'"):
        revision_spec(revision(files={"../../etc/x.py": "x = 1\n"}))


def test_a_changed_spec_with_the_hash_kept_is_refused_as_tampered() -> None:
    rev = revision()
    tampered = replace(rev, spec=rev.spec.replace("replicas: 1", "replicas: 3"))
    with pytest.raises(SpecError, match="tampered with or is corrupt"):
        check_digest(tampered, revision_spec(tampered), Reporter())


def test_another_version_warns_and_goes_on() -> None:
    warned: list[str] = []
    old = revision(version="0.0.1", objects_hash="0" * 64)
    check_digest(old, revision_spec(old), Reporter(warn=warned.append))
    assert "recorded by kschedctl 0.0.1" in warned[0]
