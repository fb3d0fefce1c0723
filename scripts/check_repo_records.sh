#!/usr/bin/env bash
# Keeps the repository small to clone: fails (exit 1, naming the files) when a tracked file
#   - outside tests/ is over 1 MiB (1,048,576 bytes);
#   - outside tests/ is a checkpoint or train state (*.safetensors, train_state*) or a prediction
#     file (anything under a predictions/ folder): run records keep config.yaml, metrics.jsonl,
#     summary.json and train.log (scripts/keep_run_records.sh), never these;
# or when the tracked files under docs/results/ together exceed its budget, 9,500,000 bytes (they
# were 6.18 MB when it was set; docs/results/README.md). tests/ is exempt: its fixtures are
# checkpoints on purpose. Sizes are those of the files as staged (git's index), so the check reads
# a fresh clone as it reads a working copy. Run by ctest; exits 77 (skipped) outside a git checkout.
#   bash scripts/check_repo_records.sh [SOURCE_DIR]
set -euo pipefail
readonly max_file_bytes=1048576
readonly results_budget_bytes=9500000
src="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
command -v git > /dev/null || { echo "check_repo_records: git not found (apt-get install git)" >&2; exit 2; }
if ! git -C "$src" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  echo "check_repo_records: $src is not a git checkout: nothing to check (skipped)" >&2
  exit 77
fi
# "<sha>\t<path>" per staged file, then "<size>\t<path>" (submodules, mode 160000, have no blob
# here and are passed over; an object git lacks, such as an intent-to-add entry's, counts 0).
list=$(git -C "$src" ls-files -s | awk -F'\t' '$1 !~ /^160000 / { split($1, a, " "); print a[2] "\t" $2 }')
sizes=$(paste <(cut -f1 <<< "$list" | git -C "$src" cat-file --batch-check='%(objectsize)') <(cut -f2- <<< "$list"))
echo "$sizes" | awk -F'\t' -v max="$max_file_bytes" -v budget="$results_budget_bytes" '
  function base(p) { sub(/.*\//, "", p); return p }
  { $1 = ($1 ~ /^[0-9]+$/) ? $1 + 0 : 0 }
  $2 ~ /^docs\/results\// { results += $1 }
  $2 ~ /^tests\// || $2 == "" { next }
  $1 > max { big[++nbig] = sprintf("%s (%d bytes)", $2, $1) }
  base($2) ~ /\.safetensors$/ || (base($2) ~ /^train_state/ && base($2) !~ /\.(cpp|h)$/) || $2 ~ /(^|\/)predictions\// {
    heavy[++nheavy] = $2
  }
  END {
    if (nbig) { printf "check_repo_records: %d tracked file(s) outside tests/ over %d bytes:\n", nbig, max
                for (i = 1; i <= nbig; i++) printf "  %s\n", big[i] }
    if (nheavy) { printf "check_repo_records: %d tracked checkpoint, train state or prediction file(s); run records keep config, metrics, summary and train.log only (git rm them):\n", nheavy
                  for (i = 1; i <= nheavy; i++) printf "  %s\n", heavy[i] }
    if (results > budget) printf "check_repo_records: docs/results/ holds %d bytes, over its budget of %d (docs/results/README.md): keep fewer or smaller records, or raise the budget there and in scripts/check_repo_records.sh with a reason\n", results, budget
    if (nbig || nheavy || results > budget) exit 1
    printf "check_repo_records: no file outside tests/ over %d bytes, no checkpoints, train states or predictions; docs/results/ %d of %d bytes\n", max, results, budget
  }'
