"""How a headless run starts its Jupyter kernel: its own log (IPKernelApp) at errors only, so that
an executed notebook does not print the kernel's "running over TCP without encryption" warning
(a kernel bound to localhost for the one run) each time; cells' output and warnings, and the
kernel's errors, are kept. (IPC sockets would avoid the warning too, but under them a Ctrl-C to a
sweep no longer stopped its kernel mid-cell: tests/test_faults.py, fault h.)"""
from __future__ import annotations

KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=ERROR"]  # papermill's extra_arguments
