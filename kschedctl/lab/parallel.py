"""The lab's many small writes, a few at a time: one helper for every writer of the lab."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def in_parallel(
    work: Callable[[Any], object], items: Iterable[Any], workers: int, name: str = "lab"
) -> None:
    """``work`` on every item, ``workers`` at a time; the first error (or Ctrl-C) cancels the
    writes not started yet and is raised."""
    items = list(items)
    if not items:
        return
    pool = ThreadPoolExecutor(min(workers, len(items)), thread_name_prefix=name)
    try:
        for future in [pool.submit(work, item) for item in items]:
            future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
