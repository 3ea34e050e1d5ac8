"""Engine: one entry point per command, composing the store (read) and the core (scan/plan).

Entry points take a frozen request and return a frozen report; they never print.
"""

from sesstool.core import held_map


def _spilled_strings(purpose: str) -> held_map.StringTable:
    from sesstool.store.spilled_strings import SpilledStrings  # sqlite3 only when a map outgrows memory

    return SpilledStrings(purpose)


held_map.use_spill(_spilled_strings)  # every command runs through the engine (issue 11 item 1)
