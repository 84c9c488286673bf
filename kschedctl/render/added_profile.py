"""``render --as config --add-to EXISTING``: an existing config plus the spec's profiles.

Pure. The result is rendered through ``templates/added-profile.yaml.j2``.
"""

from __future__ import annotations

import copy

from kschedctl.base.errors import SpecError, errors_in, quote
from kschedctl.model.config import versions
from kschedctl.model.config.schema import YamlError, parse_yaml
from kschedctl.model.config.validation import check_config
from kschedctl.render.context import require_renderable
from kschedctl.render.templates import render_template
from kschedctl.spec import Spec


def add_profile(existing_config_text: str, spec: Spec, source: str = "") -> str:
    """The existing KubeSchedulerConfiguration, also serving ``spec``'s profiles.

    One kube-scheduler with several profiles (names) is what upstream recommends: the profiles
    share one cache, so they cannot double-book a node. The result is validated like any
    config; the existing leader election and client connection stay as they are.
    """
    spec = require_renderable(spec)
    if spec.program != "kube-scheduler":
        raise SpecError(
            "spec.program",
            f"program {spec.program} is a scheduler of its own; only kube-scheduler profiles "
            "can be added to a KubeSchedulerConfiguration",
        )
    try:
        docs = parse_yaml(existing_config_text)
    except YamlError as err:
        raise SpecError("", str(err), source=source) from err
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise SpecError("", "expected one KubeSchedulerConfiguration document", source=source)
    config = copy.deepcopy(docs[0])
    profiles = config.get("profiles")
    if profiles is None or profiles == []:
        # kube-scheduler would default to one profile; keep it, now that there are two.
        profiles = [{"schedulerName": versions.DEFAULT_SCHEDULER_NAME}]
    elif isinstance(profiles, list) and len(profiles) == 1 and isinstance(profiles[0], dict):
        # A lone profile without a name defaults to default-scheduler; with a second profile
        # that defaulting stops, so write the name down.
        profiles[0] = {"schedulerName": versions.DEFAULT_SCHEDULER_NAME, **profiles[0]}
    if not isinstance(profiles, list):
        raise SpecError("profiles", "must be a list", source=source)
    existing = [p.get("schedulerName") for p in profiles if isinstance(p, dict)]
    for name in spec.scheduler_names:
        if name in existing:
            raise SpecError(
                "profiles",
                f"already has a profile named {quote(name)}",
                hint="pick another scheduler name, or edit that profile instead",
                source=source,
            )
    config["profiles"] = profiles + copy.deepcopy(spec.profiles)
    # The combined config runs as the cluster's scheduler: default names and lease are fine.
    # Errors only: a warning (kube-scheduler runs it) never stops rendering.
    problems = errors_in(check_config(config, spec.version, replaces_default=True, source=source))
    if problems:
        raise SpecError.from_problems(problems)
    return render_template(
        "added-profile.yaml.j2", config=config, added=spec.scheduler_names, source=source
    )
