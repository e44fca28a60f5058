#!/usr/bin/env bash
# The Python packages scripts/gpu_check.py needs that a GPU machine's image lacks (or holds in
# another version), as wheels in .whl/ (ignored by git), for a machine that reaches no package
# index: the check installs them from there (pip install --no-index --target) before it starts.
# The image's own list (torch with CUDA, transformers 5.17, pandas, pyarrow, scipy, pytest, ...)
# is in the device notes; these are what the check imports beyond it, at this repository's versions:
# transformers (the engine is tested on 5.24), lm-eval's HFLM (bench_gpu.py's baseline) and its
# dill, and the data loader's pooch, platformdirs and langcodes.
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
ls -la .whl
"$PY" scripts/gpu_pack.py
