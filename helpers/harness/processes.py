"""Data parallelism as lm-eval's ``hf`` model does it under ``accelerate launch`` (lm-eval 0.4.13,
``models/huggingface.py`` l.245-254 and l.462-491; ``all_gather``, ``gather_object`` and
``barrier`` l.647-661): each process takes its rank and the number of processes from accelerate,
loads the model on its own device, and lm-eval's evaluator gives it its share of the documents
(``task.build_all_requests(rank=, world_size=)``) and gathers the results on rank 0 through the
three methods below. A single process (no launcher) is rank 0 of 1, as before."""
from __future__ import annotations

import os
from datetime import timedelta


def launched():
    """The ``accelerate.Accelerator`` of a run of several processes (``accelerate launch``,
    torchrun: ``WORLD_SIZE`` > 1), its process group initialised; None for a single process."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return None
    from accelerate import Accelerator, InitProcessGroupKwargs

    accelerator = Accelerator(kwargs_handlers=[InitProcessGroupKwargs(timeout=timedelta(weeks=52))])
    return accelerator if accelerator.num_processes > 1 else None


class SharedAcrossProcesses:
    """lm-eval's collective methods over ``self.accelerator`` (a no-op for a single process)."""

    accelerator = None

    def all_gather(self, tensor):
        return tensor if self.accelerator is None else self.accelerator.gather(tensor)

    def gather_object(self, obj, dst: int = 0):
        if self.accelerator is None:
            return [obj]
        import torch.distributed

        result = [None] * self.world_size if self.rank == dst else None
        torch.distributed.gather_object(obj=obj, object_gather_list=result, dst=dst)
        return result

    def barrier(self) -> None:
        if self.accelerator is not None:
            self.accelerator.wait_for_everyone()
