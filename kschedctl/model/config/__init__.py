"""KubeSchedulerConfiguration knowledge (pure): versions, schema, rules, plugin args, durations."""
