#!/usr/bin/env bash
# Debian packages the tests need, installed only when missing (idempotent; root or sudo).
# One line per package group: who needs it is written beside it.
set -euo pipefail
PACKAGES=(
  r-base-core r-cran-lme4   # `r` tests: lme4 is the reference for the mixed-effects regressions
  chromium chromium-driver  # `browser` test (tests/test_browser.py): JupyterLab in headless Chromium via selenium
  slurm-wlm munge           # `slurm` and `faults` tests (tests/slurm/, tests/test_faults.py): single-node Slurm clusters started by tests/slurm/cluster.sh
  fonts-wqy-microhei        # every figure: Chinese characters and Japanese kana (helpers/plots/style.py; tests/test_fonts.py)
  fonts-noto-core           # every figure: the other scripts (Devanagari, Arabic, Hebrew, Armenian, Georgian, Indic, ...; helpers/plots/fonts.py)
)
missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "system packages present: ${PACKAGES[*]}"
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "installing ${missing[*]} needs root: run as root or install sudo" >&2; exit 1; }
  SUDO=sudo
fi
echo "installing: ${missing[*]}"
$SUDO apt-get update -q
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
