"""Where the host forms (systemd service, static pod) live: a machine with systemd, or the lab."""
