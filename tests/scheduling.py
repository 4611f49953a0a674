"""How ``make test`` spreads the tests over its workers (pytest-xdist, ``--dist loadgroup``).

Every test gets an ``xdist_group``: one group per file for tests that share a
module-scoped fixture or are quick, one group per test for slow tests and for
tests that read the built book, so those spread over every worker. The
scheduler then hands out one test that needs the book first, so one worker
builds it (``conftest.book_build``) while the others run everything that does
not need it, and leaves the other book tests for last: by then the build is
done and nobody waits for it.
"""

from __future__ import annotations

import importlib.util
from collections import Counter

import pytest

XDIST = importlib.util.find_spec("xdist") is not None
BOOK_FIXTURES = {"book_build", "built_book", "book_server", "open_page", "chapter_run"}
SHARED_SCOPES = {"module", "package", "class"}
BOOK = "buku"
OTHER = "lain"


def _shares_a_fixture_with_its_file(item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(defs and defs[-1].scope in SHARED_SCOPES for defs in info.name2fixturedefs.values())


def group_for_workers(items) -> None:
    """Mark every test with its scheduling unit (names hold no ``@`` or ``]``)."""
    seen = Counter()
    for item in items:
        file = item.nodeid.split("::")[0]
        needs_book = bool(BOOK_FIXTURES & set(getattr(item, "fixturenames", ())))
        kind = BOOK if needs_book else OTHER
        alone = (needs_book or item.get_closest_marker("slow")) and not _shares_a_fixture_with_its_file(item)
        if alone:
            seen[file] += 1
            group = f"{kind} {file} #{seen[file]}"
        else:
            group = f"{kind} {file}"
        item.add_marker(pytest.mark.xdist_group(group))


if XDIST:
    from xdist.scheduler import LoadGroupScheduling

    class BookLastScheduling(LoadGroupScheduling):
        """LoadGroupScheduling with the order described in the module docstring."""

        def schedule(self) -> None:
            assert self.collection_is_completed
            if self.collection is not None:
                for node in self.nodes:
                    self._reschedule(node)
                return
            if not self._check_nodes_have_same_collection():
                self.log("**Different tests collected, aborting run**")
                return
            self.collection = list(next(iter(self.registered_collections.values())))
            if not self.collection:
                return
            units: dict[str, dict[str, bool]] = {}
            for nodeid in self.collection:
                units.setdefault(self._split_scope(nodeid), {})[nodeid] = False
            for scope in order_of_work(units):
                self.workqueue[scope] = units[scope]
            while len(self.nodes) > len(self.workqueue):
                unused, _ = self.assigned_work.popitem()
                unused.shutdown()
            for node in self.nodes:
                self._assign_work_unit(node)
            for node in self.nodes:
                self._reschedule(node)
            if not self.workqueue:
                for node in self.nodes:
                    node.shutdown()


def order_of_work(units: dict[str, dict[str, bool]]) -> list[str]:
    """The first book unit, then the rest largest first, the other book units last."""
    scopes = list(units)  # collection order
    book = [scope for scope in scopes if scope.startswith(BOOK + " ")]
    rest = sorted((scope for scope in scopes if scope not in book), key=lambda scope: -len(units[scope]))
    return book[:1] + rest + book[1:]
