"""The Jupyter kernel a headless run starts: over IPC sockets in the node's temporary folder, not
TCP on localhost, so that each executed notebook neither prints the kernel's "running over TCP
without encryption" warning nor opens ports other users of the machine could reach."""
from __future__ import annotations

import os
import tempfile
import uuid

from jupyter_client.manager import KernelManager


class LocalKernelManager(KernelManager):
    """papermill's kernel manager (``kernel_manager_class``), the transport IPC and the connection
    file (beside which the sockets go) in the node-local temporary folder."""

    def __init__(self, **kwargs):
        kwargs.setdefault("transport", "ipc")
        kwargs.setdefault("connection_file",
                          os.path.join(tempfile.gettempdir(), f"helpers-kernel-{uuid.uuid4().hex}.json"))
        super().__init__(**kwargs)
