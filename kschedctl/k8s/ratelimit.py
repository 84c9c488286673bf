"""Client-side rate limiting: client-go's token bucket (``flowcontrol.NewTokenBucketRateLimiter``).

A bucket holds up to ``burst`` tokens and refills at ``qps`` per second; every request takes
one, waiting when the bucket is empty. kube-scheduler's ``clientConnection.qps``/``burst``
mean exactly this, so kschedctl's scheduler given the same numbers is throttled the same way.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["TokenBucket"]


class TokenBucket:
    def __init__(
        self,
        qps: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError(f"need qps > 0 and burst >= 1, got qps={qps} burst={burst}")
        self.qps = qps
        self.burst = burst
        self.clock = clock
        self.sleep = sleep
        self._tokens = float(burst)
        self._last = clock()
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Take a token now or in the future: seconds to wait before using it."""
        with self._lock:
            now = self.clock()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1
            if self._tokens >= 0:
                return 0.0
            return -self._tokens / self.qps

    def take(self) -> None:
        wait = self.reserve()
        if wait > 0:
            self.sleep(wait)
