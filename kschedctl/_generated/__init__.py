"""Generated tables: do not edit by hand. ``python tools/regen.py`` regenerates all of them and
runs their drift tests. Each .py file's header names its generator and inputs:

- ``completion_table.py``: ``python -m kschedctl.cli.completion_scripts`` (the command tree);
- ``registry_data.py``: ``tools/gen_plugin_registry.py`` (k8s.io/kubernetes sources);
- ``scheduler_plugins.py``: ``tools/gen_scheduler_plugins.py`` (scheduler-plugins releases);
- ``schemas/*.schema.json`` (JSON has no comments): ``python -m kschedctl.render.schemas``
  (the spec, policy and snapshot shapes).
"""
