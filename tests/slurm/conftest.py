"""The `slurm` tests' cluster: tests/slurm/cluster.sh starts a single-node Slurm for the session
(unless one is running already, which is then left running) and stops it at the end."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("cluster.sh")


def cluster(action: str) -> subprocess.CompletedProcess:
    """Run cluster.sh (through `sudo -n` when this is not root: slurmd must be root)."""
    command = [str(SCRIPT), action]
    if os.geteuid() != 0 and action != "env":
        command = ["sudo", "-n", "--preserve-env=HELPERS_SLURM_DIR,HELPERS_SLURM_PORT", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="session")
def slurm_cluster():
    """SLURM_CONF of the running test cluster (set in os.environ, so sbatch and squeue find it)."""
    running = cluster("status").returncode == 0
    if not running:
        started = cluster("start")
        if started.returncode != 0:
            pytest.fail(f"could not start the test Slurm cluster with {SCRIPT} start "
                        f"(install slurm-wlm and munge: scripts/system_deps.sh):\n{started.stdout}{started.stderr}")
    conf = re.search(r"export SLURM_CONF=(\S+)", cluster("env").stdout).group(1)
    before = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = conf
    yield conf
    if before is None:
        os.environ.pop("SLURM_CONF", None)
    else:
        os.environ["SLURM_CONF"] = before
    if not running:
        stopped = cluster("stop")
        assert stopped.returncode == 0, f"{SCRIPT} stop failed:\n{stopped.stdout}{stopped.stderr}"
