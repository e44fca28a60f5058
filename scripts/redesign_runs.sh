#!/usr/bin/env bash
# The runs a redesign is checked with (issue 56): notebooks 02, 03, 06 and 07 on demo-en with small
# limits, once unsharded (OUT/whole) and once in two shards and the run that gathers them (OUT/sharded).
# Run it on the code before and after, then compare each pair of folders:
#   python scripts/compare_stores.py BEFORE/whole AFTER/whole && diff -r BEFORE/whole/tables AFTER/whole/tables
#   (the same for sharded)
#   usage: bash scripts/redesign_runs.sh OUT   (ONLY="02_readout 07_separability": just those notebooks)
set -euo pipefail
out=$(realpath -m "${1:?give the output folder}")
python=${PYTHON:-.venv/bin/python}
export HF_HUB_OFFLINE=1 PYTHONHASHSEED=0

run() {  # notebook, folder, papermill parameters...
    local notebook=$1 folder=$2; shift 2
    mkdir -p "$out/$folder"
    HELPERS_OUTPUTS_DIR="$out/$folder" "$python" -m papermill --cwd notebooks -k python3 --no-progress-bar \
        "notebooks/$notebook.ipynb" "$out/$folder/$notebook.ipynb" "$@" > "$out/$folder/$notebook.log" 2>&1 \
        || { echo "$notebook ($folder $*) failed: $out/$folder/$notebook.log"; exit 1; }
}

each() {  # notebook, parameters...: unsharded, then shard 1, shard 2 and the gathering run
    local notebook=$1; shift
    [[ -z "${ONLY:-}" || " $ONLY " == *" $notebook "* ]] || return 0  # ONLY="06_context_priming ...": just those
    run "$notebook" whole "$@"
    run "$notebook" sharded "$@" -p shards 2 -p shard 1
    run "$notebook" sharded "$@" -p shards 2 -p shard 2
    run "$notebook" sharded "$@" -p shards 2
    echo "$notebook done"
}

each 02_readout -p model demo-en -p limit 1 -y "templates: [1, 2]"
each 03_prompting -p model demo-en -p limit 1 -y "templates: [1]" -p hu_levy_sets hl_blimp,hl_dtfit \
    -p hu_levy_limit 2 -y "fewshot_ks: [0, 2]" -p outlines_sample 2
each 06_context_priming -p model demo-en -p limit 3 -p paradigms 6 -y "lengths: [0, 25]" -p phenomenon_sentences 2 \
    -p parser none  # a shard's regressions need both outcomes among its judgments
[[ -z "${ONLY:-}" || " $ONLY " == *" 07_separability "* ]] && "$python" -c "
from helpers.data import load_processed
for name in ('blimp_hu2025', 'syntaxgym'):
    load_processed(name)  # 07 reads prepared tables only"
each 07_separability -p model demo-en -p datasets blimp_hu2025,syntaxgym -p limit 2
