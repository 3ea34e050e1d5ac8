"""A `fleet migrate` run's child index, installed once on every worker of the cluster (spec
§13.A item 5; docs/fleet.md "Subagent children").

The index is no task's data: it is a Dask worker plugin (``SharedIndex``), registered by
``run.execute`` under a name of its own for the run and removed when the run ends. The client
serializes it once; the scheduler keeps those bytes and hands them to each worker once — to
those running when the run starts and to any that joins or is restarted later (a worker
installs the scheduler's plugins when it registers, before it takes a task). Since Dask never
moves it again, neither work stealing nor the active memory manager's dropped and re-fetched
replicas make a worker rebuild it: each worker process rebuilds it once per run, however many
batches it runs. A batch (``work.process_batch``) finds it by the run's name (``installed``).
"""

from __future__ import annotations

from distributed import WorkerPlugin, get_worker

from sesstool.engine.children import ChildIndex


class SharedIndex(WorkerPlugin):
    """The run's ``ChildIndex``, held by each worker while the plugin is registered."""

    def __init__(self, index: ChildIndex) -> None:
        self.index = index


def installed(name: str) -> ChildIndex:
    """The child index registered as ``name`` on the worker running this task."""
    plugin = get_worker().plugins.get(name)
    if not isinstance(plugin, SharedIndex):
        raise RuntimeError(f"the run's child index ({name}) is not installed on this worker")
    return plugin.index
