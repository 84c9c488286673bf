"""The scheduler spec (``scheduler.yaml``): one spec is the single source of truth from which
every artefact is rendered.

Pure (reads files, nothing else). By job: :mod:`.model` the types, :mod:`.load` strict loading,
:mod:`.defaults` defaults and retargeting, :mod:`.checks` and :mod:`.programs` validation. This
module is the package's API: callers import from ``kschedctl.spec``.
"""

from kschedctl.spec.checks import check_spec, ensure_valid
from kschedctl.spec.defaults import (
    apply_defaults,
    builtin_image,
    default_spec,
    with_program,
    with_version,
)
from kschedctl.spec.load import (
    PLUGINS_DIR,
    add_plugin_files,
    load_spec,
    read_plugins,
    read_text,
    spec_from_dict,
    spec_from_source,
    spec_problems,
)
from kschedctl.spec.model import (
    API_VERSION,
    BUILTIN_BINARY,
    KIND,
    PROGRAMS,
    SPEC_FILE,
    BuiltinSettings,
    CheckedSpec,
    CustomSettings,
    LeaderElection,
    MetricsScraper,
    MetricsSettings,
    PodSettings,
    Routing,
    ServiceSettings,
    Spec,
    plugin_file,
    thawed,
)
from kschedctl.spec.programs import check_custom

__all__ = [
    "API_VERSION",
    "BUILTIN_BINARY",
    "KIND",
    "PLUGINS_DIR",
    "PROGRAMS",
    "SPEC_FILE",
    "BuiltinSettings",
    "CheckedSpec",
    "CustomSettings",
    "LeaderElection",
    "MetricsScraper",
    "MetricsSettings",
    "Routing",
    "PodSettings",
    "ServiceSettings",
    "Spec",
    "add_plugin_files",
    "apply_defaults",
    "builtin_image",
    "check_custom",
    "check_spec",
    "default_spec",
    "ensure_valid",
    "load_spec",
    "plugin_file",
    "read_plugins",
    "read_text",
    "spec_from_dict",
    "spec_from_source",
    "spec_problems",
    "thawed",
    "with_program",
    "with_version",
]
