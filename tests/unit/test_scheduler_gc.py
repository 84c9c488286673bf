"""The scheduler process keeps CPython's cycle collector off its hot path: the young
generation is collected rarely, and the caches are frozen once every watch has listed. Run in
a child process, since both change the interpreter's collector for good."""

from __future__ import annotations

import subprocess
import sys

CHILD = """
import gc, threading, time
from kschedctl.ops.run_scheduler import GC_YOUNG_THRESHOLD, _tune_gc

class Loop:  # what _tune_gc reads of a SchedulerLoop
    def __init__(self):
        self.stop = threading.Event()
        self.synced = False
    def ready(self):
        return self.synced

def wait_for(check):
    deadline = time.monotonic() + 10
    while not check() and time.monotonic() < deadline:
        time.sleep(0.02)
    return check()

gc.unfreeze()
loop = Loop()
_tune_gc(loop)
assert gc.get_threshold()[0] == GC_YOUNG_THRESHOLD > 700, gc.get_threshold()
time.sleep(0.3)
assert gc.get_freeze_count() == 0, "frozen before the caches were listed"
cache = [{"node": i, "labels": {"zone": str(i % 3)}} for i in range(5000)]
loop.synced = True
assert wait_for(lambda: gc.get_freeze_count() >= 10000), gc.get_freeze_count()

gc.unfreeze()
stopped = Loop()
_tune_gc(stopped)
stopped.stop.set()  # stopped before it was ever ready: nothing is frozen
time.sleep(0.3)
assert gc.get_freeze_count() == 0
print("ok")
"""


def test_young_collections_are_rare_and_the_synced_caches_are_frozen() -> None:
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
