"""Faults provoked for real (issue 33 item 5; the table is docs/faults.md): a full filesystem (a
size-limited tmpfs) mid-write, a truncated and a bit-flipped score file, a corrupted copy of a
mirror file, a model folder missing a weights shard, Ctrl-C to a sweep, and, on the test Slurm
cluster, a task killed with SIGKILL, slurmd killed and restarted, and a task past its time
limit. Each ends with a clear message and loses nothing finished; once the fault is gone a rerun
finishes, recomputes nothing finished and reads no corrupt file."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from helpers import data, paths
from helpers.data.sources import ChecksumError
from helpers.engine import CausalScorer
from helpers.engine.interface import Request
from helpers.files import DamagedFileError, NoSpaceError, size_text
from helpers.models import load as load_model
from helpers.models.registry import ModelNotFoundError
from helpers.parquet_io import read_parquet
from helpers.runner import run_methods
from helpers.store import ScoreStore, load_scores
from test_stale_scores import scorer, selection  # noqa: F401 - fixtures: tiny-gpt2, two BLiMP paradigms
from helpers.settings import Settings

pytestmark = pytest.mark.faults
ROOT = Path(__file__).resolve().parents[1]


def as_root(*command: str) -> subprocess.CompletedProcess:
    """A command that needs root (mount, umount), through `sudo -n` when this is not root."""
    prefix = [] if os.geteuid() == 0 else ["sudo", "-n"]
    return subprocess.run([*prefix, *command], capture_output=True, text=True, timeout=60)


def read_verified(path: Path):
    return read_parquet(path, "a damaged file")


def mtimes(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in folder.glob("*.parquet")}


def no_temp_files(root: Path) -> bool:
    return not [p for p in root.rglob("*") if p.name.endswith(".tmp")]


@pytest.fixture
def small_fs(tmp_path):
    """A 512 KiB tmpfs mounted for the test (a real filesystem that fills up)."""
    mount = tmp_path / "small"
    mount.mkdir()
    mounted = as_root("mount", "-t", "tmpfs", "-o", "size=512k,mode=0777", "tmpfs", str(mount))
    assert mounted.returncode == 0, f"could not mount a tmpfs (needs root or sudo): {mounted.stderr}"
    yield mount
    assert as_root("umount", str(mount)).returncode == 0


def fill(folder: Path) -> list[Path]:
    """Fill the filesystem of ``folder`` with 4 KiB files until it is full, then free one page."""
    fillers = []
    while True:
        path = folder / f"filler-{len(fillers)}"
        try:
            path.write_bytes(b"\0" * 4096)
        except OSError:
            path.unlink(missing_ok=True)
            break
        fillers.append(path)
    fillers.pop().unlink()
    return fillers


def test_d_a_full_filesystem_mid_write_names_the_folder_and_keeps_what_is_finished(scorer, selection, small_fs):
    root = small_fs / "scores"
    (lp,) = run_methods(scorer, selection, ["lp"], store=ScoreStore(root))
    finished = mtimes(lp.parent)
    fillers = fill(small_fs)
    with pytest.raises(NoSpaceError) as err:
        run_methods(scorer, selection, ["lp", "yesno"], {"templates": [1]}, store=ScoreStore(root))
    message = str(err.value)
    assert re.fullmatch(rf"no space left in {lp.parent} while writing yesno__t1\.parquet \((\d+ bytes|[\d.]+ kB) "
                        r"free; it needs (?P<needs>[\d.]+ kB)\): .*", message)
    assert message.endswith("): free space there (or point HELPERS_OUTPUTS_DIR elsewhere) and run again; files "
                            "already finished are kept")
    assert err.value.errno == 28 and isinstance(err.value.__cause__, OSError)
    assert mtimes(lp.parent) == finished and len(read_verified(lp)) == 4  # lp kept whole
    assert no_temp_files(small_fs)  # the half-written file is removed, not left to be read
    for path in fillers:  # the fault is gone
        path.unlink()
    st = ScoreStore(root)
    files = run_methods(scorer, selection, ["lp", "yesno"], {"templates": [1]}, store=st)
    assert st.writes == 1 and [f.name for f in files] == ["lp.parquet", "yesno__t1.parquet"]
    assert f"it needs {size_text(files[1].stat().st_size)})" in message  # the size it needed, exactly
    assert mtimes(lp.parent)["lp.parquet"] == finished["lp.parquet"]  # nothing finished recomputed
    assert len(load_scores("blimp", root=root)) == 8


def flip_a_bit(path: Path, column: str = "score_good") -> None:
    """Flip one bit in the last byte of a column's data pages (the footer stays readable)."""
    meta = pq.ParquetFile(path).metadata.row_group(0)
    chunk = next(meta.column(i) for i in range(meta.num_columns) if meta.column(i).path_in_schema == column)
    start = chunk.dictionary_page_offset if chunk.has_dictionary_page else chunk.data_page_offset
    data = bytearray(path.read_bytes())
    data[start + chunk.total_compressed_size - 1] ^= 0x10
    path.write_bytes(bytes(data))


DAMAGES = [("bit-flipped", "OSError: could not verify page integrity, CRC checksum verification failed for "
                           "page_ordinal 0"),
           ("truncated", "ArrowInvalid: Parquet magic bytes not found in footer. Either the file is corrupted or "
                         "this is not a parquet file.")]


@pytest.mark.parametrize("damage, error", DAMAGES)
def test_e_a_damaged_score_file_is_never_read_and_a_rerun_recomputes_only_it(scorer, selection, tmp_path, damage,
                                                                             error):
    st = ScoreStore(tmp_path)
    lp, yesno = run_methods(scorer, selection, ["lp", "yesno"], {"templates": [1]}, store=st)
    good = load_scores("blimp", root=tmp_path)
    finished = mtimes(lp.parent)
    if damage == "bit-flipped":
        flip_a_bit(yesno)
        assert len(pq.read_table(yesno)) == 4  # without the page checksums it would read as scores
    else:
        yesno.write_bytes(yesno.read_bytes()[:3000])
    with pytest.raises(DamagedFileError) as err:
        load_scores("blimp", root=tmp_path)
    assert str(err.value) == (f"{yesno} is damaged ({error}); rerun the notebook that wrote it: the run moves "
                              "it to set_aside/ and recomputes it")
    st = ScoreStore(tmp_path)
    with pytest.warns(UserWarning, match=rf"{yesno} is not a readable score file .*truncated or damaged: moved to "
                                         rf"{yesno.parent}/set_aside/yesno__t1__unreadable-\d+\.parquet"):
        again = run_methods(scorer, selection, ["lp", "yesno"], {"templates": [1]}, store=st)
    assert again == [lp, yesno] and st.writes == 1
    assert mtimes(lp.parent)["lp.parquet"] == finished["lp.parquet"]
    pd.testing.assert_frame_equal(load_scores("blimp", root=tmp_path), good)


def test_e_score_files_written_before_page_checksums_still_read(scorer, selection, tmp_path):
    (lp,) = run_methods(scorer, selection, ["lp"], store=ScoreStore(tmp_path))
    good = load_scores("blimp", root=tmp_path)
    size = lp.stat().st_size
    pq.write_table(pq.read_table(lp), lp)  # as the store wrote it before: no page checksums (4 bytes a page)
    assert lp.stat().st_size < size
    pd.testing.assert_frame_equal(load_scores("blimp", root=tmp_path), good)
    st = ScoreStore(tmp_path)
    run_methods(scorer, selection, ["lp"], store=st)
    assert st.writes == 0  # reused, not recomputed


def mirror_copy(tmp_path: Path, folder: str) -> Path:
    """A mirror whose ``folder`` is a copy (the rest links to the real, read-only mirror)."""
    real, copy = paths.mirror(), tmp_path / "mirror"
    copy.mkdir()
    for entry in real.iterdir():
        if entry.name != folder:
            (copy / entry.name).symlink_to(entry)
    shutil.copytree(real / folder, copy / folder)
    return copy


def test_f_a_corrupted_mirror_file_is_a_checksum_error_and_reads_once_restored(tmp_path, monkeypatch):
    mirror = mirror_copy(tmp_path, "li")
    monkeypatch.setenv(paths.MIRROR_ENV, str(mirror))
    monkeypatch.setenv(paths.PROCESSED_ENV, str(tmp_path / "processed"))
    target = mirror / "li" / "LI_Large_pairs.csv"
    original = target.read_bytes()
    flipped = bytearray(original)
    flipped[len(flipped) // 2] ^= 0x01
    target.write_bytes(bytes(flipped))
    with pytest.raises(ChecksumError) as err:
        data.load("li")
    message = str(err.value)
    assert message.startswith(f"{target}: sha256 ") and "differs from sources.yaml" in message
    assert message.endswith("the file is not the recorded version of li/LI_Large_pairs.csv. To fix: restore it "
                            "from https://raw.githubusercontent.com/SiyuanSong2004/language-introspection/e8d4c5f/"
                            "LI_Large_pairs.csv (or delete it from the download folder and read it again with "
                            "mode='download').")
    assert not (tmp_path / "processed").exists() or not list((tmp_path / "processed").rglob("*li*"))
    target.write_bytes(original)  # the fault is gone
    assert len(data.load("li")) == 2379


def test_g_a_missing_weights_shard_names_the_file(tmp_path, tiny):
    loaded = tiny("tiny-llama")
    folder = tmp_path / "sharded"
    loaded.model.save_pretrained(folder, max_shard_size="200KB")
    loaded.tokenizer.save_pretrained(folder)
    shards = sorted(folder.glob("model-*-of-*.safetensors"))
    assert len(shards) == 4
    kept = tmp_path / shards[1].name
    shards[1].rename(kept)
    with pytest.raises(ModelNotFoundError) as err:
        load_model(str(folder))
    assert str(err.value) == (f"{folder} lacks the weights file(s) model-00002-of-00004.safetensors that "
                              "model.safetensors.index.json lists: copy or download the model again (a partial "
                              "copy cannot be loaded)")
    kept.rename(shards[1])  # the fault is gone: the same scores as the unsharded model
    request = [Request("", "The cat sleeps.")]
    again = CausalScorer(load_model(str(folder)), Settings(progress=False)).score(request)[0]
    assert again.logprobs == pytest.approx(CausalScorer(loaded, Settings(progress=False)).score(request)[0].logprobs, abs=1e-6)


# 5 pairs per paradigm, so that the five Yes/No passes after lp.parquet give Ctrl-C time to land while the kernel
# computes: with 1 pair, a fresh-clone run on a quiet machine (2026-11-27) once exited 0, the signal lost
SWEEP = [sys.executable, "-m", "helpers", "sweep", "--notebooks", "02", "--models", "tiny-gpt2", "--datasets",
         "blimp", "-p", "limit=5", "-p", "templates=[1,2,3,4,5]", "-p", "02:methods=lp,yesno"]


def _as_from_a_terminal():
    """A shell starts a job with Ctrl-C's default action, but a child inherits an ignored SIGINT and
    Python keeps it ignored (in two fresh-clone runs of the whole suite the sweep ignored the signal
    and exited 0, while the test passed alone): the child starts with the default."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_h_ctrl_c_to_a_sweep_keeps_finished_scores_and_a_rerun_runs_only_the_rest(tmp_path):
    env = {**os.environ, paths.OUTPUTS_ENV: str(tmp_path / "outputs"), "OMP_NUM_THREADS": "1"}
    scores = tmp_path / "outputs" / "scores" / "blimp" / "tiny-gpt2"
    run = subprocess.Popen(SWEEP, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True,  # its own process group, as a terminal's foreground job
                           preexec_fn=_as_from_a_terminal)
    deadline = time.monotonic() + 120
    while not (scores / "lp.parquet").exists():
        assert run.poll() is None and time.monotonic() < deadline, "the sweep ended before writing lp"
        time.sleep(0.05)
    os.killpg(run.pid, signal.SIGINT)  # Ctrl-C: the sweep and its kernel
    out, err = run.communicate(timeout=60)
    assert run.returncode == 130, err
    # the last line (the kernel's own log, above it, may show its socket closing under it)
    assert err.strip().splitlines()[-1] == (
        "error: interrupted (Ctrl-C) while running 02_readout model=tiny-gpt2 dataset=blimp: the 0 job(s) "
        "finished before it and the score files it finished are kept; its notebook "
        "(02_readout__tiny-gpt2__blimp__limit-5__methods-lp_yesno__templates-1_2_3_4_5.running.ipynb) is never "
        "taken as finished. Run the same sweep again to run only what is missing.")
    kept = mtimes(scores)
    assert "lp.parquet" in kept and len(kept) < 6
    for name in kept:
        read_verified(scores / name)
    assert no_temp_files(tmp_path / "outputs")
    notebooks = tmp_path / "outputs" / "notebooks"
    assert [p.name for p in notebooks.glob("*.ipynb") if not p.name.endswith(".running.ipynb")] == []

    rerun = subprocess.run(SWEEP, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert rerun.returncode == 0, rerun.stderr
    after = mtimes(scores)
    assert sorted(after) == ["lp.parquet"] + [f"yesno__t{t}.parquet" for t in range(1, 6)]
    assert {name: after[name] for name in kept} == kept  # nothing finished recomputed
    assert no_temp_files(tmp_path / "outputs") and not list(notebooks.glob("*.running.ipynb"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no stale, damaged or incomplete file read
        assert len(load_scores("blimp", root=tmp_path / "outputs" / "scores")) == 67 * 5 * 6


# ---- on the test Slurm cluster (tests/slurm/cluster.sh), a cluster of its own: slurmd is killed here
CLUSTER = ROOT / "tests" / "slurm" / "cluster.sh"
CLUSTER_ENV = {"HELPERS_SLURM_DIR": "/tmp/helpers-slurm-faults", "HELPERS_SLURM_PORT": "16827"}


def cluster(action: str) -> subprocess.CompletedProcess:
    command = [str(CLUSTER), action]
    if os.geteuid() != 0:
        command = ["sudo", "-n", "--preserve-env=HELPERS_SLURM_DIR,HELPERS_SLURM_PORT", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, env={**os.environ, **CLUSTER_ENV})


@pytest.fixture(scope="module")
def own_slurm():
    """A single-node Slurm of this module's own (its own folder and ports), so that killing its
    slurmd disturbs no other test's cluster; SLURM_CONF set while it runs."""
    running = cluster("status").returncode == 0
    if not running:
        started = cluster("start")
        assert started.returncode == 0, f"could not start the test Slurm cluster:\n{started.stdout}{started.stderr}"
    conf = f"{CLUSTER_ENV['HELPERS_SLURM_DIR']}/etc/slurm.conf"
    before = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = conf
    yield Path(CLUSTER_ENV["HELPERS_SLURM_DIR"])
    os.environ.pop("SLURM_CONF") if before is None else os.environ.__setitem__("SLURM_CONF", before)
    if not running:
        stopped = cluster("stop")
        assert stopped.returncode == 0, f"{CLUSTER} stop failed:\n{stopped.stdout}{stopped.stderr}"


def wait_until(condition, what: str, timeout_s: float = 120, poll_s: float = 0.05):
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen within {timeout_s:.0f} s"
        time.sleep(poll_s)


SLURM_SWEEP = ["sweep", "--notebooks", "02", "--models", "tiny-gpt2", "tiny-llama", "--datasets", "climp",
               "-p", "limit=1", "-p", "templates=[1,2,3,4,5]", "-p", "02:methods=lp,yesno"]
SUBMIT = [*SLURM_SWEEP, "--executor", "slurm", "--profile", "slurm-local"]  # 20 minutes per task


def test_abc_sigkill_slurmd_restart_and_time_limit_on_slurm(own_slurm, tmp_path, monkeypatch, capsys):
    from helpers import sweep
    from helpers.cli import main
    from helpers.models.tiny import ensure
    from helpers.sweep import slurm as sweep_slurm
    from helpers.sweep import status as sweep_status

    monkeypatch.setenv(paths.OUTPUTS_ENV, str(tmp_path / "outputs"))
    ensure("tiny-gpt2"), ensure("tiny-llama")
    # two models: two tasks (a model's notebooks share one task)
    jobs = sweep.plan(["02"], ["tiny-gpt2", "tiny-llama"], ["climp"], {"limit": 1, "templates": [1, 2, 3, 4, 5],
                                                                      "02:methods": "lp,yesno"})
    killed, other = jobs
    store = {j: tmp_path / "outputs" / "scores" / j.dataset / j.model for j in jobs}
    complete = ["lp.parquet"] + [f"yesno__t{t}.parquet" for t in range(1, 6)]
    assert main(SUBMIT) == 0
    ids = {j: sweep_slurm.read_record(j).job_id for j in jobs}
    wait_until(lambda: all(sweep_slurm.live_states().get(ids[j]) == "RUNNING" for j in jobs), "both tasks running")
    # and each task's step launched (srun needs slurmd to start it: a step launching while slurmd is
    # down fails, "Task launch ... failed ... Zero Bytes were transmitted", and a resubmit reruns it)
    logs = {j: tmp_path / "outputs" / "slurm" / ids[j] / f"{ids[j]}_0_log.out" for j in jobs}
    wait_until(lambda: all(p.is_file() and "Starting with JobEnvironment" in p.read_text() for p in logs.values()),
               "both tasks' steps started")

    # (b) slurmd killed and restarted mid-array: the tasks run on (each under its own slurmstepd)
    slurmd = own_slurm / "run" / "slurmd.pid"
    os.kill(int(slurmd.read_text()), signal.SIGKILL)
    # read at once: the tasks (a notebook kernel each, seconds of work ahead) outlive their slurmd
    states = sweep_slurm.live_states()
    assert all(states.get(ids[j]) == "RUNNING" for j in jobs), states
    wait_until(lambda: cluster("status").returncode != 0, "slurmd stopping", 10)
    assert cluster("start").returncode == 0

    # (a) SIGKILL once its first score file is written, while it scores and writes the rest
    wait_until(lambda: (store[killed] / "lp.parquet").exists(), "the first score file of the killed task")
    subprocess.run(["scancel", "--signal=KILL", ids[killed]], check=True)
    sweep_slurm.wait_for(list(ids.values()), poll_s=0.5, timeout_s=150)
    rows = sweep_status.status(jobs)
    assert [r.state for r in rows] == ["failed", "done"]
    assert rows[0].error.startswith("Slurm: CANCELLED; ")
    assert re.search(r"; slurmstepd\S*: error: \*\*\* (STEP|JOB) [\d.]+ ON \S+ CANCELLED AT \S+ \*\*\*$", rows[0].error)
    assert sorted(mtimes(store[other])) == complete  # (b) lost nothing
    kept = mtimes(store[killed])
    assert "lp.parquet" in kept and len(kept) < 6
    for name in kept:
        read_verified(store[killed] / name)  # whole, never half-written

    # (c) past its --time: a run with minutes of work (every BLiMP pair) under a 1-minute limit, in
    # an outputs folder of its own; submitit stops it when Slurm signals it, 90 s before the limit,
    # i.e. at Slurm's first check (a short task may finish before that check: this one cannot)
    timed_outputs = tmp_path / "timed"
    monkeypatch.setenv(paths.OUTPUTS_ENV, str(timed_outputs))
    timed_sweep = ["sweep", "--notebooks", "02", "--models", "tiny-gpt2", "--datasets", "blimp",
                   "-p", "limit=1000", "-p", "templates=[1,2,3,4,5]", "-p", "02:methods=lp,yesno"]
    (timed_job,) = sweep.plan(["02"], ["tiny-gpt2"], ["blimp"], {"limit": 1000, "templates": [1, 2, 3, 4, 5],
                                                                 "02:methods": "lp,yesno"})
    assert main([*timed_sweep, "--executor", "slurm", "--profile", "slurm-local", "--time", "1"]) == 0
    assert "submitted 1 task(s)" in capsys.readouterr().out
    sweep_slurm.wait_for([sweep_slurm.read_record(timed_job).job_id], poll_s=0.5, timeout_s=150)
    (row,) = sweep_status.status([timed_job])
    # submitit's handler stops it, or, when the signal comes before the handler is set, the signal does
    assert row.state == "failed" and re.match(
        r"Slurm: FAILED \(NonZeroExitCode\); (submitit\.core\.utils\.UncompletedJobError: Job not requeued because: "
        r"timed-out and not checkpointable\.|srun: error: \S+: task 0: User defined signal 2); ", row.error)
    assert row.error.endswith("past its --time (submitit stops a task 90 s before it): resubmit with a longer "
                              "--time; the score files it finished are kept")
    assert main([*timed_sweep, "--status"]) == 0
    assert "1 jobs: 1 failed" in capsys.readouterr().out
    finished = timed_outputs / "scores" / "blimp" / "tiny-gpt2"
    for path in finished.glob("*.parquet") if finished.is_dir() else []:
        read_verified(path)  # what it finished is whole
    monkeypatch.setenv(paths.OUTPUTS_ENV, str(tmp_path / "outputs"))
    assert main([*SLURM_SWEEP, "--status"]) == 0
    assert "2 jobs: 1 done, 1 failed" in capsys.readouterr().out
    assert mtimes(store[killed]) == kept

    # the faults gone: a resubmission runs only the unfinished task and recomputes only its missing files
    assert main(SUBMIT) == 0
    out = capsys.readouterr().out
    assert "submitted 1 task(s)" in out and out.count("skip (finished)") == 1
    sweep_slurm.wait_for([sweep_slurm.read_record(killed).job_id], poll_s=1, timeout_s=150)
    assert [r.state for r in sweep_status.status(jobs)] == ["done", "done"]
    after = mtimes(store[killed])
    assert sorted(after) == complete
    assert {name: after[name] for name in kept} == kept  # nothing finished recomputed
    assert no_temp_files(tmp_path / "outputs") and not list((tmp_path / "outputs").rglob("*.running.ipynb"))
