"""scripts/gpu_check.py: it refuses to start without CUDA, and its dry run (the same steps on the CPU,
tiny sizes) passes every check and writes the results file."""
from __future__ import annotations

import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import gpu_check  # noqa: E402
import gpu_pack  # noqa: E402


def test_it_refuses_to_start_without_cuda(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(gpu_check.torch.cuda, "is_available", lambda: False)
    assert gpu_check.main(["--out", str(tmp_path / "check.txt")]) == 2
    assert "no CUDA device is visible" in capsys.readouterr().err and not (tmp_path / "check.txt").exists()


def test_the_dry_run_passes_and_writes_its_results(tmp_path, monkeypatch):
    # with only what travels to a GPU machine: the packed mirror files and processed table
    monkeypatch.setenv("HELPERS_PROCESSED_DIR", str(tmp_path / "processed"))
    gpu_pack.pack(tmp_path / "mirror")
    monkeypatch.setenv("MINIMAL_PAIRS_DATA", str(tmp_path / "mirror"))
    out = tmp_path / "check.txt"
    start = time.time()
    assert gpu_check.main(["--dry-run", "--out", str(out)]) == 0
    text = out.read_text()
    for name in gpu_check.ARCHITECTURES:
        rows = re.findall(rf"^  {name}\s+(float32|bfloat16)\s+none ([\d.e+-]+)", text, re.M)
        assert [dtype for dtype, _ in rows] == ["float32", "bfloat16"], text
        assert float(rows[0][1]) < gpu_check.FLOAT32_TOLERANCE
        head = re.search(rf"^  {name}\s+head\s+bf16 head ([\d.e+-]+)\s+float32 head ([\d.e+-]+)", text, re.M)
        assert head, text
        assert re.search(rf"^  {name}\s+float32 .* tree/flex ([\d.e+-]+)  tree/dense ([\d.e+-]+)$", text, re.M), text
        split = re.search(rf"^  {name}\s+split\s+cpu/disk: none ([\d.e+-]+) .* tree ([\d.e+-]+)", text, re.M)
        assert split and max(map(float, split.groups())) < gpu_check.FLOAT32_TOLERANCE, text  # offloaded by hooks
    agree = re.search(r"^  demo-en bfloat16 on (\d+) BLiMP pairs: .* on ([\d.]+)%", text, re.M)
    assert agree and int(agree.group(1)) == 134 and float(agree.group(2)) >= 99.5, text
    assert "auto->" in text and text.rstrip().endswith("s") and "0 failure(s)" in text, text
    # step 3: the gpu tests, skipped here
    assert re.search(r"^  \d+ skipped in", text, re.M) and "needs a CUDA GPU" in text
    assert re.search(r"DeviceCosts\(layer=[\d.e+-]+, .*key_byte=[\d.e+-]+\)", text), text  # step 4: the line to paste
    # the plan, printed first: on one H100 within the 8 minutes, by its own estimate
    total = re.search(r"^  total (\d+) s: within 8 minutes \(480 s\)$", text, re.M)
    assert total and int(total.group(1)) <= 480 and text.index("plan on one H100") < text.index("1. conformance"), text
    # step 5: each target row as 5 interleaved runs, the ratios the targets read, the end of the 8 minutes less its exit
    until = re.search(r"bench_gpu_targets\.py .* --until (\d+)$", text, re.M)
    assert until and start < int(until.group(1)) <= start + 8 * 60 - gpu_check.BENCH_EXIT + 1, text
    rows = re.findall(r"^    (loop|lm-eval|none|default) +[\d.]+ s \([\d.]+-[\d.]+, 5 runs\)", text, re.M)
    assert rows == ["loop", "lm-eval", "default", "none", "default", "loop", "default", "none", "default"], text
    for section in gpu_plan_sections():
        assert re.search(rf"^  {re.escape(section)}: .* planned \d+ s$", text, re.M), section
    assert "default vs lm-eval" in text and "the time budget is spent" not in text, text


def gpu_plan_sections() -> list[str]:
    return list(gpu_check.gpu_plan.SECTIONS.values())


def test_without_a_mirror_the_packed_one_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIMAL_PAIRS_DATA", "")  # unset as mirror() reads it, and restored after the test
    monkeypatch.setattr(gpu_pack.paths, "DEFAULT_MIRROR", tmp_path / "none")  # a GPU machine: nothing beside
    gpu_pack.use_packed(tmp_path / "packed")
    assert gpu_pack.paths.mirror() is None  # nothing packed either
    (tmp_path / "packed").mkdir()
    gpu_pack.use_packed(tmp_path / "packed")
    assert gpu_pack.paths.mirror() == tmp_path / "packed"
