"""What ``validate`` found: one :class:`FileReport` per file, and the :class:`Validation` of
them all (the result of :func:`kschedctl.ops.validate.validate_files`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kschedctl.base.errors import Problem, errors_in
from kschedctl.model.config import versions

if TYPE_CHECKING:
    from kschedctl.ops.judge import FileVerdict


@dataclass
class FileReport:
    """What ``validate`` found in one file: problems are data, notes are for humans."""

    path: str
    problems: list[Problem] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # what was recognised and checked
    verdict: FileVerdict | None = None  # kube-scheduler's, with --kube-scheduler
    found: bool = True  # False: no such file (its one problem says so)

    @property
    def agrees(self) -> bool | None:
        """Whether kube-scheduler's verdict equals ours (None: not judged)."""
        return None if self.verdict is None else self.valid == self.verdict.accepted

    @property
    def valid(self) -> bool:
        """No errors (warnings allowed: kube-scheduler runs such a config)."""
        return not errors_in(self.problems)

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if not p.is_error]

    def to_dict(self) -> dict[str, Any]:
        """One entry of ``validate -o json|yaml`` (its keys are a contract; ``kubeScheduler``
        and ``agrees`` only with --kube-scheduler)."""
        entry: dict[str, Any] = {
            "file": self.path,
            "valid": self.valid,
            "checked": self.checked,
            "problems": [
                {"path": p.path, "message": p.message, "severity": p.severity}
                for p in self.problems
            ],
        }
        if self.verdict is not None:
            entry["kubeScheduler"] = self.verdict.to_dict()
            entry["agrees"] = self.agrees
        return entry


@dataclass
class Validation:
    """Every file's report, and which rules they were checked against."""

    reports: list[FileReport]
    kubernetes_version: str | None  # as given; None: each spec's own, the default for configs

    @property
    def invalid(self) -> list[FileReport]:
        return [r for r in self.reports if not r.valid]

    @property
    def missing(self) -> list[FileReport]:
        """The files that do not exist (exit 5, as a missing file is everywhere)."""
        return [r for r in self.reports if not r.found]

    @property
    def problem_count(self) -> int:
        """Errors, all files together."""
        return sum(len(errors_in(r.problems)) for r in self.reports)

    @property
    def warning_count(self) -> int:
        return sum(len(r.warnings) for r in self.reports)

    @property
    def rules(self) -> str:
        if self.kubernetes_version:
            return f"Kubernetes {self.kubernetes_version} rules"
        return f"rules of each spec's kubernetesVersion, {versions.DEFAULT_VERSION} for configs"
