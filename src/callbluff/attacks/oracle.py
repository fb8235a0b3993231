"""The oracle: a search attack's only way to the system under test, within a query budget.

Model-in-the-loop adversaries (Jia & Liang 2017 Sec. 3.3 AddAny / AddCommon, which "query the model" to pick
words greedily; DPAEG's search) are compared by what they find *for a given number of queries*, so the
budget must be enforced by something the attack cannot bypass, as TextAttack's goal function does with its
``query_budget``. The engine (or the conformance kit) builds one :class:`Oracle` per (record, attack
configuration, target) and hands it to ``SearchAttack.search``; the attack never sees the target.

Counting rule (stated because papers count differently): every text passed to :meth:`Oracle.ask` that is
sent on is one query, whether the target's prediction cache already holds it or not, and duplicates within
one call count once each. The count is therefore a property of the attack's behaviour, not of the cache's
state, and is the same on a fresh run and on a resumed one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import NoReturn

from callbluff.targets.base import Input, Output, Target


class Oracle:
    """Answers ``ask(texts)`` with the target's outputs until ``budget`` queries are spent.

    ``to_input`` turns an adversarial text into the target's :class:`Input` for this record (e.g. the
    record's response replaced, or its context); ``original`` is the target's output on the unmodified
    record, given for free (it is not counted)."""

    __slots__ = ("__target", "__to_input", "__budget", "__used", "__calls", "__lock", "original")

    def __init__(self, target: Target, to_input: Callable[[str], Input], budget: int,
                 original: Output | None = None) -> None:
        if int(budget) < 0:
            raise ValueError(f"query budget must be >= 0, got {budget}")
        self.__target = target
        self.__to_input = to_input
        self.__budget = int(budget)
        self.__used = 0
        self.__calls = 0
        self.__lock = threading.Lock()
        self.original = original

    @property
    def budget(self) -> int:
        """Queries this oracle allows in total."""
        return self.__budget

    @property
    def used(self) -> int:
        """Queries spent so far (every text sent on, cache hits included)."""
        return self.__used

    @property
    def remaining(self) -> int:
        return self.__budget - self.__used

    @property
    def exhausted(self) -> bool:
        """True once no query is left: further ``ask`` calls return ``[]``."""
        return self.__used >= self.__budget

    @property
    def calls(self) -> int:
        """``target.predict`` calls made (one per non-empty ``ask``)."""
        return self.__calls

    def ask(self, texts: Sequence[str]) -> list[Output]:
        """The target's outputs for the first ``min(len(texts), remaining)`` texts, in order, from ONE batched
        ``predict`` call. Fewer outputs than texts means the budget ran out; ``[]`` when it is spent."""
        if isinstance(texts, str):
            raise TypeError("Oracle.ask takes a list of texts; wrap a single text: oracle.ask([text])")
        with self.__lock:
            take = list(texts)[: max(0, self.__budget - self.__used)]
            if not take:
                return []
            inputs = [self.__to_input(t) for t in take]
            self.__used += len(take)
            self.__calls += 1
            outputs = list(self.__target.predict(inputs))
        if len(outputs) != len(inputs):
            raise RuntimeError(f"target returned {len(outputs)} outputs for {len(inputs)} inputs")
        return outputs

    def ask_one(self, text: str) -> Output | None:
        """``ask([text])[0]``, or None when the budget is spent."""
        out = self.ask([text])
        return out[0] if out else None

    def __reduce__(self) -> NoReturn:
        raise TypeError("an Oracle is bound to a live target and cannot be pickled; build one per search")
