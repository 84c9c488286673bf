"""Pure readings of cluster data: scheduler discovery, permissions, diagnosis, events, log lines."""
