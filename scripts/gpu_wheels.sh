#!/usr/bin/env bash
# The Python packages scripts/gpu_check.py needs that a GPU machine's image lacks (or holds in
# another version), as wheels in .whl/ (ignored by git), for a machine that reaches no package
# index: the check installs them from there (pip install --no-index --target) before it starts.
# The image's own list (torch with CUDA, transformers 5.17, pandas, pyarrow, scipy, pytest, ...)
# is in the device notes; these are what the check imports beyond it, at this repository's versions:
# transformers (the engine is tested on 5.24), lm-eval's HFLM (bench_gpu.py's baseline) and its
# dill, the data loader's pooch, platformdirs and langcodes, and bitsandbytes (NF4: the gpu tests
# and bench_gpu's NF4 rows), its wheel slimmed to the CUDA 13 and CPU libraries (the image's
# CUDA; the whole wheel, 41 MB, would not fit the 64 MiB a device call carries).
#
# It then packs the data the check reads (scripts/gpu_pack.py: data/processed and .gpu_mirror).
#
#   bash scripts/gpu_wheels.sh            # then carry .whl, .gpu_mirror and data/processed
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
PYTHON_VERSION=${GPU_PYTHON_VERSION:-3.12}
mkdir -p .whl
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version "$PYTHON_VERSION" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .whl transformers==5.24.0 lm_eval==0.4.13 dill==0.4.1 pooch==1.9.0 platformdirs==4.14.8 langcodes==3.5.1
FULL=$(mktemp -d)
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version "$PYTHON_VERSION" --implementation cp \
    --platform manylinux_2_24_x86_64 -d "$FULL" bitsandbytes==0.50.0
# the same wheel without the libraries of other CUDA versions, ROCm and XPU (RECORD rewritten to match)
"$PY" - "$FULL"/bitsandbytes-*.whl .whl <<'SLIM'
import re, sys, zipfile
from pathlib import Path
source, target = Path(sys.argv[1]), Path(sys.argv[2]) / Path(sys.argv[1]).name
dropped = re.compile(r"bitsandbytes/libbitsandbytes_(cuda1[12]\d|rocm\d+|xpu\d+)\.so$")
with zipfile.ZipFile(source) as whole, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as slim:
    for item in whole.infolist():
        if dropped.search(item.filename):
            continue
        data = whole.read(item)
        if item.filename.endswith(".dist-info/RECORD"):
            data = "".join(line for line in data.decode().splitlines(keepends=True)
                           if not dropped.search(line.split(",")[0])).encode()
        slim.writestr(item, data)
SLIM
rm -rf "$FULL"
ls -la .whl
"$PY" scripts/gpu_pack.py
