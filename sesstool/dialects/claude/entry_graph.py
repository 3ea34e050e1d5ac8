"""The ``parentUuid`` graph of a transcript's entries (spec agent-formats §1.7, §1.9), kept
compactly: a few bytes per entry in flat arrays, so a 1 GiB transcript validates in flat memory
(issue 17).

Per entry: its uuid (exactly: key_index.py), flags, line and offset. The parent is the
entry before it in the file unless recorded otherwise — the CLI appends each entry to its
parent, so exceptions (roots, parallel results, rewinds, forks) are few. The entries of one
streamed reply (same ``message.id``) are linked to the first of them while that id is among the
last ``MESSAGE_WINDOW`` ids seen, and the last ``MESSAGE_BYTES`` of them (an id is as long as the
log chose it; the newest is kept whatever its length): a reply's blocks are written together
(docs/format.md).

Past ``SPILL_AT`` entries the arrays move to a spill file (store/spill.py: pages on disk, a few
in memory) and so do the uuids (key_index.py), and the walks of ``finish`` build their per-entry
marks there too: memory stays flat however long the file (docs/format.md, "Memory").
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import repeat

from sesstool.core.humanize import chosen
from sesstool.dialects.claude import rule_ids as CR
from sesstool.dialects.claude.entry_stamps import NONE, ODD, stamp_key, stamp_text
from sesstool.dialects.claude.findings import Findings
from sesstool.dialects.claude.held import HeldList, HeldRows, Store
from sesstool.dialects.claude.key_index import KeyIndex
from sesstool.store.spill import IntArray, SpilledArray, SpillFile, bisect

SIDECHAIN, DUPLICATE, ASSISTANT, USER, RESULTS, LOCAL, MESSAGE, SYSTEM = 1, 2, 4, 8, 16, 32, 64, 128
ROOT, MISSING = -1, -2
BRIDGES = 16  # missing parents 2.1.332 bridges on one walk; past them one ends the chain
MESSAGE_WINDOW = 4096
MESSAGE_BYTES = 1 << 20  # ... and at most this many characters of them (the newest kept, however long)
_BATCH = 4096  # branches read back from the spill file at a time
SPILL_AT = 1 << 15  # graph entries held in memory; past them the graph moves to a spill file ...
SPILL_BYTES = 8 << 20  # ... and so it does past this many bytes of text keys (its and the tool book's)
_SORTED = ("_parent_at", "_group_at", "_session_at")  # appended in entry order
_SPILLED = {
    "flags": "B",
    "lines": "i",
    "_low": "I",
    "_stamps": "q",
    "_parent_to": "i",
    "_group_of": "i",
    "_session_of": "i",
}


class EntryGraph:
    def __init__(self, held: Store | None = None) -> None:
        self.held = held if held is not None else Store()  # the spill file this graph's scan shares
        self.uuids = KeyIndex()  # item i is entry i
        self.store: SpillFile | None = None  # past SPILL_AT entries
        self.flags: IntArray = bytearray()
        self.lines: IntArray = array("i")
        self._low: IntArray = array("I")  # offsets, low 32 bits…
        self._stamps: IntArray = array("q")  # timestamps (entry_stamps.stamp_key)…
        self._odd_stamps = HeldRows(self.held)  # …and the text of those not canonical, by str(entry)
        self._high_at = array("i")  # …and runs of their high bits: the first entry of a run…
        self._high_of = array("i")  # …and its high bits
        self._parent_at: IntArray = array("i")  # entries whose parent is not the entry before them…
        self._parent_to: IntArray = array("i")  # …and theirs: an entry, ROOT or MISSING (then in _unseen)
        # str(entry) -> (parent uuid, uuid, type), in entry order: only hostile input makes it
        # long, so past ``held.HELD_AT`` it is in the spill file (issue 11 item 1)
        self._unseen = HeldRows(self.held)
        self._group_at: IntArray = array("i")  # entries of a reply after its first…
        self._group_of: IntArray = array("i")  # …and that first entry
        self._recent: dict[str, int] = {}  # the last MESSAGE_WINDOW message ids -> first entry
        self._recent_bytes = 0  # the characters of the ids in ``_recent``
        self._session_at: IntArray = array("i")  # runs of entries of one session: first entry…
        self._session_of: IntArray = array("i")  # …and the session's number in ``sessions``
        self.sessions: list[str | None] = []
        self._number: dict[str | None, int] = {}  # session -> its index in ``sessions``
        self._before: str | None = None  # the uuid of the last entry, when first of its uuid
        self._settled = -1  # the length at ``settle``: every MISSING left in _parent_to is missing

    def __len__(self) -> int:
        return len(self.flags)

    def spill(self, store: SpillFile) -> None:
        """Move the graph to ``store`` (the scanner calls this once, past ``SPILL_AT`` entries)."""
        if self.store is not None:
            return
        self.store = store
        self.uuids.spill(store)
        for key, typecode in (*_SPILLED.items(), *((k, "i") for k in _SORTED)):
            setattr(self, key, SpilledArray(typecode, store.pages(), getattr(self, key), key in _SORTED))

    def marks(self, typecode: str = "B") -> IntArray:
        """Zeros, one per entry: in memory, or in the spill file once the graph is there."""
        if self.store is not None:
            return SpilledArray.zeros(typecode, self.store.pages(), len(self.flags))
        return bytearray(len(self.flags)) if typecode == "B" else array(typecode, bytes(4 * len(self.flags)))

    def ints(self) -> IntArray:
        """An empty array of entries, in the spill file once the graph is there."""
        return SpilledArray("i", self.store.pages()) if self.store is not None else array("i")

    def add(
        self, uuid: str, parent: str | None, kind: str, at: tuple[int, int], flags: int, stamp: object = None
    ) -> int:
        """Append an entry at (line, offset) written at ``stamp`` (its ``timestamp``); answer the
        entry that used its uuid first when it is a duplicate, else -1. Its session and message
        id come with ``session``/``message``."""
        line, offset = at
        node = len(self.flags)
        key = stamp_key(stamp)
        if key == ODD:
            self._odd_stamps[str(node)] = (stamp,)
        self._stamps.append(key)
        if parent is None:
            self._except(node, ROOT)
        elif parent != self._before:
            found = self.uuids.find(parent)
            if found < 0:
                self._unseen[str(node)] = (parent, uuid, kind)
                self._except(node, MISSING)
            elif found != node - 1:
                self._except(node, found)
        first = self.uuids.add(uuid)
        self._before = uuid if first < 0 else None
        if first >= 0:
            flags |= DUPLICATE
        self.flags.append(flags)
        self.lines.append(line)
        self._low.append(offset & 0xFFFFFFFF)
        if (offset >> 32) != (self._high_of[-1] if self._high_of else 0):
            self._high_at.append(node)
            self._high_of.append(offset >> 32)
        return first

    def _except(self, node: int, parent: int) -> None:
        self._parent_at.append(node)
        self._parent_to.append(parent)

    def message(self, node: int, msg: str) -> None:
        """``node`` carries a block of the reply ``msg`` (``message.id``)."""
        self.flags[node] |= MESSAGE
        first = self._recent.get(msg)
        if first is None:
            self._recent[msg] = node
            self._recent_bytes += len(msg)
            while len(self._recent) > MESSAGE_WINDOW or (
                self._recent_bytes > MESSAGE_BYTES and len(self._recent) > 1
            ):
                oldest = next(iter(self._recent))
                del self._recent[oldest]
                self._recent_bytes -= len(oldest)
        else:
            self._group_at.append(node)
            self._group_of.append(first)

    def session(self, node: int, session: str | None) -> None:
        """``node`` belongs to ``session`` (its ``sessionId``); call once per entry, in order."""
        if self._session_of and self.sessions[self._session_of[-1]] == session:
            return
        # a dict, not a search of the list: a file of many session ids (each entry its own) made
        # the search per entry quadratic (issue 11 item 2)
        number = self._number.setdefault(session, len(self.sessions))
        if number == len(self.sessions):
            self.sessions.append(session)
        self._session_at.append(node)
        self._session_of.append(number)

    def copy(self) -> EntryGraph:
        """An independent copy; a spilled graph shares what it wrote so far (copy-on-write)."""
        twin = EntryGraph(self.held)
        twin.uuids, twin.store = self.uuids.copy(), self.store
        for key in ("_high_at", "_high_of", *_SPILLED, *_SORTED):
            value = getattr(self, key)
            if isinstance(value, SpilledArray):
                setattr(twin, key, value.copy())
            elif isinstance(value, bytearray):
                setattr(twin, key, bytearray(value))
            else:
                setattr(twin, key, array(value.typecode, value))
        twin._unseen, twin._odd_stamps, twin._recent, twin.sessions, twin._number = (
            self._unseen.copy(),
            self._odd_stamps.copy(),
            dict(self._recent),
            list(self.sessions),
            dict(self._number),
        )
        twin._before, twin._recent_bytes, twin._settled = self._before, self._recent_bytes, self._settled
        return twin

    # -- per entry ------------------------------------------------------------------------------

    def offset(self, node: int) -> int:
        run = bisect(self._high_at, node + 1) - 1
        return (self._high_of[run] << 32 if run >= 0 else 0) | self._low[node]

    def find(self, uuid: str) -> int:
        """The first entry with ``uuid``, or -1."""
        return self.uuids.find(uuid)

    def parent(self, node: int) -> int:
        """The parent entry, ROOT, or MISSING (named but not in the file)."""
        at = bisect(self._parent_at, node)
        if at == len(self._parent_at) or self._parent_at[at] != node:
            return node - 1
        parent = self._parent_to[at]
        if parent == MISSING and self._settled != len(self.flags):
            found = self.find(self._unseen[str(node)][0])  # written later in the file, perhaps
            return found if found >= 0 else MISSING
        return parent

    def settle(self) -> None:
        """Note in ``_parent_to`` each parent that was missing when its child was read and has
        been read since, so that ``parent`` answers from the arrays until the next entry (a walk
        asks for the parent of every entry, a bridge of every entry before it, each a lookup in
        the uuid index otherwise: 16 bridges over a transcript of 52,000 orphans 2.5 -> 11.5 s)."""
        if self._settled == len(self.flags):
            return
        for key, (parent, _, _) in self._unseen.items():
            found = self.find(parent)
            if found >= 0:
                node = int(key)
                self._parent_to[bisect(self._parent_at, node)] = found
        self._settled = len(self.flags)

    def group(self, node: int) -> int:
        """The first entry of the reply ``node`` belongs to; -1 when it carries no message id."""
        if not self.flags[node] & MESSAGE:
            return -1
        at = bisect(self._group_at, node)
        return self._group_of[at] if at < len(self._group_at) and self._group_at[at] == node else node

    def session_of(self, node: int) -> str | None:
        return self.sessions[self._session_of[bisect(self._session_at, node + 1) - 1]]

    def eligible(self, node: int, session: str | None) -> bool:
        """In the session's conversation: not a sidechain entry, not a replayed uuid."""
        return not self.flags[node] & (SIDECHAIN | DUPLICATE) and self.session_of(node) == session

    # -- walks ----------------------------------------------------------------------------------

    def missing_parents(self, findings: Findings) -> HeldList[int]:
        """Flag the entries whose parent is not in the file; answers their line numbers, ascending."""
        lines: HeldList[int] = HeldList(self.held)
        self.settle()  # each parent looked up once, here or by the walk, not by both
        for key, (parent, uuid, kind) in self._unseen.items():
            node = int(key)
            if self.parent(node) == MISSING and not self.flags[node] & DUPLICATE:
                message = f"{kind} {chosen(uuid)} names parent {chosen(parent)}, which is not in the file"
                findings.add(CR.PARENT_MISSING, message, self.offset(node), self.lines[node])
                lines.append(self.lines[node])
        return lines

    def active_chain(self, session: str | None) -> tuple[IntArray, IntArray]:
        """§1.7: the latest entry of the session (not a sidechain, not a replayed uuid) back to
        its root, root first, and a byte per entry marking the chain. Measured (lane): resume
        continues from the newest entry, attachments included; a parent missing from the file is
        bridged over as 2.1.332 does (``bridge``, at most ``BRIDGES`` times a walk)."""
        self.settle()
        on_chain = self.marks()
        chain = self.ints()
        bridged: dict[int, int] = {}
        current = self.previous(len(self.flags), session)
        while current >= 0 and not on_chain[current]:
            on_chain[current] = 1
            chain.append(current)
            parent = self.parent(current)
            if parent == MISSING and len(bridged) < BRIDGES:
                parent = self.bridge(current, session, on_chain, bridged)
                if parent >= 0:
                    bridged[current] = parent
            current = parent
        chain.reverse()
        return chain, on_chain

    def bridge(self, node: int, session: str | None, walked: IntArray, bridged: dict[int, int]) -> int:
        """The entry resume re-parents ``node`` to when its parent is not in the file, or -1 (the
        chain ends there). Read from 2.1.332 and measured (lane ``damaged-broken-parent``, where
        either outcome occurs by the millisecond the CLI stamped the prompt with): of the session's
        entries before ``node`` in the file, not sidechain ones, with a timestamp no later than
        ``node``'s (compared as strings, as the CLI does), the newest (the last in the file on a
        tie) that is no other such entry's parent, not walked yet and not a ``system`` root.
        ``bridged``: the links this walk already re-pointed (they count as the CLI's edited
        entries do). Two passes over the entries before ``node``, each reading the graph's
        arrays in order (a page at a time once spilled); past ``SPILL_AT`` entries the parents
        seen are marks in the spill file."""
        if self._stamps[node] == NONE:
            return -1
        named = self.marks()
        for i, (bridgeable, _, _, parent) in enumerate(self._walk_before(node, session)):
            if bridgeable and (parent := bridged.get(i, parent)) >= 0:
                named[parent] = 1
        best, best_key = -1, NONE
        candidates = zip(self._walk_before(node, session), named, walked, strict=False)
        for i, ((bridgeable, key, flag, parent), seen, done) in enumerate(candidates):
            if not bridgeable or seen or done or (flag & SYSTEM and parent == ROOT):
                continue
            if best < 0 or self._no_later(best, i, best_key, key):
                best, best_key = i, key
        return best

    def _walk_before(self, orphan: int, session: str | None) -> Iterator[tuple[bool, int, int, int]]:
        """For each entry before ``orphan``, in file order: whether it is a bridge's candidate (in
        the session's conversation, with a timestamp no later than ``orphan``'s), its stamp key,
        its flags and its parent; the graph's arrays are read in order, not searched per entry."""
        okey = self._stamps[orphan]
        skip = SIDECHAIN | DUPLICATE
        columns = zip(self._stamps, self.flags, self._session_runs(session), self._parents(), strict=False)
        for i, (key, flag, ours, parent) in zip(range(orphan), columns, strict=False):
            candidate = key != NONE and ours and not flag & skip and self._no_later(i, orphan, key, okey)
            yield candidate, key, flag, parent

    def _session_runs(self, session: str | None) -> Iterator[bool]:
        """Whether each entry, in order, belongs to ``session``."""
        number = self._number.get(session, -1)
        start, ours = 0, False
        for at, of in zip(self._session_at, self._session_of, strict=True):
            yield from repeat(ours, at - start)
            start, ours = at, of == number
        yield from repeat(ours, len(self.flags) - start)

    def _parents(self) -> Iterator[int]:
        """``parent`` of each entry, in order (the exceptions merged in, not searched for)."""
        start = 0
        settled = self._settled == len(self.flags)  # then a MISSING is missing
        for at, to in zip(self._parent_at, self._parent_to, strict=True):
            yield from range(start - 1, at - 1)
            yield self.parent(at) if to == MISSING and not settled else to
            start = at + 1
        yield from range(start - 1, len(self.flags) - 1)

    def _no_later(self, a: int, b: int, key_a: int, key_b: int) -> bool:
        """``a``'s timestamp <= ``b``'s (both have one; ``key_a``, ``key_b`` their stamp keys),
        as the strings compare: two canonical ones as their words (``entry_stamps``: the same
        order), no text made."""
        if key_a >= 0 and key_b >= 0:
            return key_a <= key_b
        return str(self.stamp(a)) <= str(self.stamp(b))

    def stamp(self, node: int) -> str | None:
        """``node``'s ``timestamp`` as written, or None when it has no string one."""
        key = self._stamps[node]
        if key == NONE:
            return None
        return str(self._odd_stamps[str(node)][0]) if key == ODD else stamp_text(key)

    def previous(self, node: int, session: str | None) -> int:
        """The last entry of the session's conversation before ``node``, or -1."""
        for i in range(node - 1, -1, -1):
            if self.eligible(i, session):
                return i
        return -1

    def reply_siblings(self, session: str | None, on_chain: IntArray) -> IntArray:
        """Entries off the chain that carry blocks of a reply on it (§1.9: parallel calls), a
        byte per entry (``marks``: in the spill file once the graph is there)."""
        attached = self.marks()  # the replies' first entries
        for node, first in self._links():
            if on_chain[node] or on_chain[first]:
                attached[first] = 1
        siblings = self.marks()
        for link in self._links():
            if attached[link[1]]:
                for node in link:
                    if not on_chain[node] and self.eligible(node, session):
                        siblings[node] = 1
        return siblings

    def reply(self, first: int) -> set[int]:
        """The entries of the reply whose first entry is ``first`` (``group``)."""
        return {first, *(node for node, group in self._links() if group == first)}

    def _links(self) -> Iterable[tuple[int, int]]:
        return zip(self._group_at, self._group_of, strict=True)

    def branch_check(self, session: str | None, findings: Findings) -> int:
        """Count conversation branches (§1.7: rewinds, forks) and flag those that grew
        interleaved. A parent's children are branches unless several are blocks of one streamed
        reply (§1.9); a branch starting before the one before it (by line) ended is two writers.
        The parents come in the order of their first recorded child, each one's branches by line:
        held in memory with the graph (``_children``), sorted in the spill file once the graph is
        there (``_spilled_siblings``: nothing per branch in memory; docs/format.md, "Memory")."""
        store = self.store
        siblings = self._siblings(session) if store is None else self._spilled_siblings(session, store)
        branches = 0
        last: IntArray | None = None
        parent = before = ROOT  # the parent walked and its branch before
        flagged = False
        for of, start in siblings:
            if of != parent:
                parent, before, flagged = of, start, False
                continue
            branches += 1
            last = last if last is not None else self._last_descendants()
            if not flagged and start < last[before]:
                findings.add(
                    CR.CONCURRENT_WRITERS,
                    f"the branch starting here and the one before it (from line "
                    f"{self.lines[parent]}) were appended interleaved",
                    self.offset(start),
                    self.lines[start],
                )
                flagged = True
            before = start
        return branches

    def _siblings(self, session: str | None) -> Iterator[tuple[int, int]]:
        """(parent, branch) of the graph in memory, in ``branch_check``'s order."""
        for parent, kids in self._children(session).items():
            # the groups counted once per parent (a sum per child was quadratic in a fan of replies)
            groups = [self.group(k) for k in kids]
            shared = Counter(groups)
            for kid, group in zip(kids, groups, strict=True):
                if group < 0 or shared[group] == 1:
                    yield parent, kid

    def _spilled_siblings(self, session: str | None, store: SpillFile) -> Iterator[tuple[int, int]]:
        """``_siblings`` of a spilled graph: a row per child (``_child_rows``) in a table of the
        spill file keyed by (parent, child) and indexed by (parent, reply), each parent's first
        recorded child in a table keyed by it; then one query walks the second table in order
        and each parent's children in the first, keeping those alone in their reply, a batch at
        a time. Every step follows a B-tree's order (no sorter, no window buffer): what SQLite
        holds is its bounded page cache."""
        rows = store.table(
            "parent INTEGER NOT NULL, child INTEGER NOT NULL, reply INTEGER NOT NULL, "
            "recorded INTEGER NOT NULL, PRIMARY KEY (parent, child)",
            "WITHOUT ROWID",
        )
        store.execute(f"CREATE INDEX {rows}_reply ON {rows} (parent, reply)")
        store.executemany(
            f"INSERT INTO {rows} VALUES (?, ?, ?, ?) ON CONFLICT (parent, child) "
            "DO UPDATE SET recorded = max(recorded, excluded.recorded)",
            self._child_rows(session),
        )
        firsts = store.table("first INTEGER PRIMARY KEY, parent INTEGER NOT NULL")
        store.execute(
            f"INSERT INTO {firsts} SELECT min(CASE WHEN recorded THEN child END), parent "
            f"FROM {rows} GROUP BY parent"
        )
        cursor = store.execute(
            f"SELECT f.parent, r.child FROM {firsts} AS f JOIN {rows} AS r ON r.parent = f.parent "
            f"WHERE NOT EXISTS (SELECT 1 FROM {rows} AS o WHERE o.parent = r.parent "
            "AND o.reply = r.reply AND o.child != r.child) ORDER BY f.first, r.child"
        )
        while batch := store.fetch(cursor, _BATCH):
            for parent, child in batch:
                yield int(parent), int(child)
        for table in (rows, firsts):
            store.execute(f"DELETE FROM {table}")  # their pages back to the file's free list

    def _child_rows(self, session: str | None) -> Iterator[tuple[int, int, int, int]]:
        """(parent, child, reply, recorded) of every child ``_children`` would list: ``reply``
        its group, or a number of its own (below -1) when it has none, so that it is counted
        alone; ``recorded`` 0 for the follower. A parent's follower is looked at once per run
        of its recorded children (a repeat is merged by the table's key)."""
        looked = ROOT
        for node in self._parent_at:
            parent = self.parent(node)
            group = self._branch_group(node, parent, session) if parent >= 0 else None
            if group is None:
                continue
            yield parent, node, group if group >= 0 else -2 - node, 1
            if parent == looked:
                continue
            looked, follower = parent, parent + 1
            if follower < len(self.flags) and self.parent(follower) == parent:
                group = self._branch_group(follower, parent, session)
                if group is not None:
                    yield parent, follower, group if group >= 0 else -2 - follower, 0

    def _children(self, session: str | None) -> dict[int, list[int]]:
        """Parents with two children or more: one may follow it in the file, the others are
        recorded exceptions."""
        children: dict[int, list[int]] = {}
        for node in self._parent_at:
            parent = self.parent(node)
            if parent >= 0 and self._branch_child(node, parent, session):
                children.setdefault(parent, []).append(node)
        for parent, kids in children.items():
            follower = parent + 1
            if (
                follower < len(self.flags)
                and follower not in kids
                and self.parent(follower) == parent
                and self._branch_child(follower, parent, session)
            ):
                kids.append(follower)
            kids.sort()
        return {parent: kids for parent, kids in children.items() if len(kids) >= 2}

    def _branch_child(self, node: int, parent: int, session: str | None) -> bool:
        return self._branch_group(node, parent, session) is not None

    def _branch_group(self, node: int, parent: int, session: str | None) -> int | None:
        """``node``'s reply group (``group``) when it counts as a child of ``parent`` in
        ``branch_check`` (eligible, not a result entry, not the next block of the reply
        ``parent`` is a block of: §1.9), else None."""
        if not self.eligible(node, session) or self.flags[node] & RESULTS:
            return None
        group = self.group(node)
        return group if group < 0 or group != self.group(parent) else None

    def _last_descendants(self) -> IntArray:
        every = range(len(self.flags))
        store = self.store
        last: IntArray = array("i", every) if store is None else SpilledArray("i", store.pages(), every)
        for i in range(len(self.flags) - 1, -1, -1):
            parent = self.parent(i)
            if 0 <= parent < i and not self.flags[i] & DUPLICATE:
                last[parent] = max(last[parent], last[i])
        return last
