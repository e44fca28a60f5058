"""A sweep's model kernel that dies as it starts, its port taken by another process (two tasks of a job
array starting at the same moment on one node pick the same free port), is started again on new ports."""
from __future__ import annotations

import socket

import pytest

from helpers.sweep import model_kernel
from helpers.sweep.model_kernel import ModelKernels

KEY = ("tiny-gpt2", None, ())


def test_a_kernel_whose_port_is_taken_as_it_starts_is_started_again_on_new_ports(monkeypatch, tmp_path):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    made = []

    class TakenPortFirst(model_kernel.KernelManager):
        """Real kernels; the first of each pair is given the port held above, as a neighbour's kernel would."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            made.append(self)
            if len(made) % 2 == 1:  # (not from jupyter_client's cache of this process's free ports)
                self.cache_ports, self.shell_port = False, port

    monkeypatch.setattr(model_kernel, "KernelManager", TakenPortFirst)
    try:
        with ModelKernels() as kernels:
            km = kernels._kernel(KEY)
            assert len(made) == 2 and km is made[1] and km.is_alive() and kernels.started == 1
            assert not made[0].is_alive() and km.shell_port != port
            kernels.close()
            made.clear()
            monkeypatch.setattr(model_kernel, "START_TRIES", 1)  # no second start: the kernel's death is the error
            with pytest.raises(RuntimeError, match="died before replying"):
                kernels._kernel(KEY)
            assert len(made) == 1 and kernels.started == 1
            # a job's own kernel (an analysis) starts the same way: its first death is not the error
            monkeypatch.setattr(model_kernel, "START_TRIES", 3)
            made.clear()
            kernels._start("pass", cwd=tmp_path)
            assert len(made) == 2 and kernels.km is made[1] and kernels.km.is_alive() and kernels.started == 1
    finally:
        taken.close()
