"""Per-user locations of the lab: the binary cache and the default lab directory."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$KSCHEDCTL_CACHE_DIR``, else ``$XDG_CACHE_HOME/kschedctl``, else ``~/.cache/kschedctl``."""
    explicit = os.environ.get("KSCHEDCTL_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "kschedctl"


def default_lab_dir() -> Path:
    """``$KSCHEDCTL_LAB_DIR``, else ``$XDG_STATE_HOME/kschedctl/lab`` (~/.local/state/...)."""
    explicit = os.environ.get("KSCHEDCTL_LAB_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / "kschedctl" / "lab"
