"""Values kept per process for a key that names what they were made from, so a changed source has a new key and a
kept value is never stale: what a live run's page draws, per state of the run (app/runs/round_views.py), and the
pieces of pages that never change once drawn (app/shell/fragments.py)."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, ClassVar, Generic, TypeVar

T = TypeVar("T")


class KeptByState(Generic[T]):
    """At most `kept` values, each made by the first request that needs it and reused by the others until it is
    the least recently used. Keys name what a value was made from (a run's state, a round and whether it is the
    best), so a value is never stale: a changed source has a new key.

    When a round lands, the viewers of the run ask for its new state within moments of each other: those who ask
    while the first is still making the value wait for it rather than make it again."""

    every: ClassVar[weakref.WeakSet[KeptByState[Any]]] = weakref.WeakSet()

    def __init__(self, kept: int) -> None:
        self._kept: OrderedDict[Hashable, T] = OrderedDict()
        self._making: dict[Hashable, _Making[T]] = {}
        self._most = kept
        self._lock = threading.Lock()
        KeptByState.every.add(self)

    @classmethod
    def forget_all(cls) -> None:
        """Drops every kept value, so the next request makes its own (bench/run_page.py times the first viewer)."""
        for kept in list(cls.every):
            with kept._lock:
                kept._kept.clear()

    def peek(self, key: Hashable) -> T | None:
        """The value kept for `key`, now the most recently used; None where none is."""
        with self._lock:
            return self._recall(key)

    def _recall(self, key: Hashable) -> T | None:  # under the lock
        value = self._kept.get(key)
        if value is not None:
            self._kept.move_to_end(key)
        return value

    def put(self, key: Hashable, value: T) -> None:
        with self._lock:
            self._keep(key, value)

    def _keep(self, key: Hashable, value: T) -> None:  # under the lock
        self._kept[key] = value
        self._kept.move_to_end(key)
        while len(self._kept) > self._most:
            self._kept.popitem(last=False)

    def get(self, key: Hashable, make: Callable[[], tuple[T, bool]]) -> T:
        """`make` gives the value and whether to keep it (what may change without the key changing is not kept)."""
        with self._lock:
            value = self._recall(key)
            if value is not None:
                return value
            making = self._making.get(key)
            first = making is None
            if making is None:
                making = self._making[key] = _Making()
        if not first:
            making.done.wait()
            return making.value if making.value is not None else make()[0]  # the first failed: make it here
        try:
            value, keep = make()  # made outside the lock: viewers of other runs go on
            making.value = value
        finally:
            with self._lock:
                del self._making[key]
                if making.value is not None and keep:
                    self._keep(key, making.value)
            making.done.set()
        return value


class _Making(Generic[T]):
    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: T | None = None
