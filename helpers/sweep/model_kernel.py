"""One kernel per model: a sweep's scoring jobs of one model (every scoring notebook and dataset of
one shard) run one after another in one Jupyter kernel that keeps the model loaded between them.

Why a kernel per model: the notebooks stay the one door to scoring (each decides its own jobs, as
a user running it by hand), each keeps its own executed output and status, and the model, which
for a 70B checkpoint in NF4 takes minutes to load, loads once (:func:`helpers.runs.deferred.keep_loaded`:
the kernel's deferred scorers hand each other the built scorer of the same card). Between two
notebooks the kernel's namespace is emptied (``%reset -f``, figures closed, warnings shown again),
so no variable of one reaches the next; the kept scorer lives in the helpers' module, not in the
namespace. Between two models the kernel is shut down: the process ends, and its CPU and GPU memory
with it. A notebook that fails leaves the kernel to the next one (a new kernel if it died).
"""
from __future__ import annotations

from jupyter_client.manager import KernelManager
from nbclient.exceptions import DeadKernelError
from papermill.exceptions import PapermillExecutionError

from .. import paths
from ..settings import SCORER_SETTINGS
from .jobs import ANALYSES, NO_MODEL, Job, clean_partials
from .kernel import KERNEL_ARGUMENTS

KEEP = "from helpers.runs.deferred import keep_loaded\nkeep_loaded()"
# A kernel that dies before it answers is started again, on new ports, up to this many times in all: its
# ports are picked free and then bound by the kernel, so two tasks starting at the same moment on one node
# (a job array's) can pick the same one ("ZMQError: Address already in use", then "Kernel died before
# replying to kernel_info").
START_TRIES = 3
RESET = ("%reset -f\nimport gc as _gc, warnings as _warnings\nimport matplotlib.pyplot as _plt\n_plt.close('all')\n"
         "_warnings._filters_mutated()\ndel _plt, _warnings\n_gc.collect(); del _gc")


def group_key(job: Job) -> tuple | None:
    """The kernel a job shares: one per (model, shard) of the scoring notebooks; None for a job with
    its own (an analysis, a notebook without a model)."""
    if job.model == NO_MODEL or job.notebook.stem in ANALYSES:
        return None
    return (job.model, job.shard, tuple((k, str(job.parameters[k])) for k in SCORER_SETTINGS if k in job.parameters))


class ModelKernels:
    """Runs jobs, each in the kernel of its :func:`group_key` (started on first use, shut down when a
    job of another key comes): ``with ModelKernels() as kernels: kernels.run(job)``. Every kernel, a
    model's or a job's own, is started by :meth:`_start`. ``started`` counts the model kernels started."""

    def __init__(self):
        self.key, self.km, self.started = None, None, 0

    def __enter__(self) -> "ModelKernels":
        return self

    def __exit__(self, kind, *exc) -> None:
        self.close(interrupted=kind is not None)

    def close(self, interrupted: bool = False) -> None:
        """Shut the current kernel down (its process ends: memory released); ``interrupted`` (an
        error or Ctrl-C mid-notebook, papermill's reply tasks still pending on the event loop):
        its process is killed without running that loop again."""
        if self.km is not None and self.km.has_kernel:
            process = getattr(getattr(self.km, "provisioner", None), "process", None)
            if interrupted and process is not None:
                process.kill()
                process.wait(timeout=30)
            else:
                self.km.shutdown_kernel(now=True)
        self.key, self.km = None, None

    def _execute(self, code: str) -> None:
        """Run ``code`` in the kernel through a client of its own (one that papermill used before
        stops answering once papermill's run ends)."""
        client = self.km.client()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=120)
            reply = client.execute_interactive(code, timeout=120, store_history=False, output_hook=lambda msg: None)
        finally:
            client.stop_channels()
        if reply["content"]["status"] != "ok":
            content = reply["content"]
            raise RuntimeError(f"the sweep's kernel could not run {code.splitlines()[0]!r}: "
                               f"{content.get('ename')}: {content.get('evalue')}")

    def _start(self, code: str = KEEP, cwd=None) -> None:
        """A new kernel in ``cwd`` (the notebooks') that has run ``code`` (a model's: :data:`KEEP`); one
        that dies before answering is started again (:data:`START_TRIES`); a kernel alive that fails
        ``code`` is the error."""
        for attempt in range(1, START_TRIES + 1):
            self.km = KernelManager(kernel_name="python3")
            self.km.start_kernel(cwd=str(cwd or paths.NOTEBOOKS), extra_arguments=KERNEL_ARGUMENTS)
            try:
                self._execute(code)
                return
            except RuntimeError:
                if self.km.is_alive() or attempt == START_TRIES:
                    raise
                self.close()

    def _kernel(self, key) -> KernelManager:
        if self.km is not None and (key != self.key or not self.km.is_alive()):
            self.close()
        if self.km is None:
            self._start()
            self.key, self.started = key, self.started + 1
        else:
            self._execute(RESET)
        return self.km

    def run(self, job: Job):
        """Run ``job``: in its group's kernel, or (key None) in a kernel of its own, shut down after it (a
        failed job's by the next run or the block's end, as :meth:`close` says)."""
        key = group_key(job)
        if key is None:
            self.close()
            self._start("pass", cwd=job.notebook.parent)
            done = job.run(km=self.km)
            self.close()
            return done
        return job.run(km=self._kernel(key))


def run_group(jobs: list[Job]) -> list[str]:
    """One model's jobs, as a Slurm task runs them: each notebook in the kernel that keeps the model
    loaded (:class:`ModelKernels`), one that fails (a cell's error, a kernel that died) not stopping
    the others; the task fails at the end, naming them, if any did (so that the analyses waiting on
    it do not run). Anything else (the task stopped at its time limit) stops the task at once."""
    done, failed = [], []
    with ModelKernels() as kernels:
        for job in jobs:
            try:
                done.append(str(kernels.run(job)))
            except (PapermillExecutionError, DeadKernelError) as err:  # a notebook's failure: the others still run
                failed.append(f"{job.label}: {getattr(err, 'ename', type(err).__name__)}: "
                              f"{getattr(err, 'evalue', err)}")
            clean_partials()
    if failed:
        raise RuntimeError(f"{len(failed)} of {len(jobs)} notebook(s) of this task failed (the others finished):\n"
                           + "\n".join(failed))
    return done

