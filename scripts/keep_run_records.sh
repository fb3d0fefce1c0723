#!/usr/bin/env bash
# Copies the records of a sweep folder (sweep.json, and each run's config.yaml, metrics.jsonl,
# summary.json, train.log, locality.json, predictions/; not the checkpoints or train states) into
# DEST, so that a report's links resolve in the repository and `transnormer report DEST` rebuilds
# it. A rerun of the sweep into a folder restored from DEST skips the points that are done.
# Paths of this machine are replaced in the copies: the data root ($TRANSNORMER_DATA, else ./datasets)
# by "<data root>", and the binary's path in recorded command lines by "transnormer".
# With --resume-state, a run that has not finished (no summary.json) also keeps its
# checkpoint.safetensors, checkpoint_best.safetensors, train_state.safetensors and run.json (about
# 14 MB for an LRA point), so that a sweep restored from DEST on a machine that lost its runs/
# resumes it where it stopped.
# A run that has finished never keeps them: a copy kept while it was unfinished is removed.
#   bash scripts/keep_run_records.sh runs/ablations/t1_design docs/results/t1_design/runs
#   bash scripts/keep_run_records.sh --resume-state runs/small/lra docs/results/lra/runs
set -euo pipefail
resume_state=0
if [ "${1:-}" = --resume-state ]; then
  resume_state=1
  shift
fi
if [ $# -ne 2 ]; then
  echo "usage: $0 [--resume-state] SWEEP_DIR DEST" >&2
  exit 2
fi
src=$1 dest=$2
if [ ! -f "$src/sweep.json" ]; then
  echo "$src: no sweep.json: not a sweep folder (give the folder of transnormer sweep --out)" >&2
  exit 2
fi
mkdir -p "$dest"
(cd "$src" && find . -type f \( -name sweep.json -o -name config.yaml -o -name metrics.jsonl -o \
    -name summary.json -o -name diverged.json -o -name train.log -o -name locality.json -o \
    -path '*/predictions/*.jsonl' \) -print0) |
  while IFS= read -r -d '' f; do
    mkdir -p "$dest/$(dirname "$f")"
    cp -p "$src/$f" "$dest/$f"
  done
if [ "$resume_state" = 1 ]; then  # unfinished runs: the files a resume reads
  (cd "$src" && find . -name train_state.safetensors -print0) |
    while IFS= read -r -d '' f; do
      run=$(dirname "$f")
      if [ -f "$src/$run/summary.json" ]; then continue; fi
      mkdir -p "$dest/$run"
      for g in checkpoint.safetensors checkpoint_best.safetensors train_state.safetensors run.json; do
        # an if, not `[ ] && cp`: a missing last file must not fail the loop under pipefail
        if [ -f "$src/$run/$g" ]; then cp -p "$src/$run/$g" "$dest/$run/$g"; fi
      done
    done
fi
(cd "$src" && find . -name summary.json -print0) |  # finished runs: no resume state in DEST
  while IFS= read -r -d '' f; do
    rm -f "$dest/$(dirname "$f")"/{checkpoint,checkpoint_best,train_state}.safetensors
  done
root=${TRANSNORMER_DATA:-datasets}
roots=()  # absolute spellings only: a relative "datasets" would match inside other paths
[[ "$root" == /* ]] && roots+=("$root")
[ -d "$root" ] && roots+=("$(cd "$root" && pwd -P)" "$(cd "$root" && pwd)")
find "$dest" -type f \( -name '*.json' -o -name '*.jsonl' -o -name '*.yaml' -o -name '*.log' \) -print0 |
  while IFS= read -r -d '' f; do
    for r in "${roots[@]}"; do
      [ "${#r}" -gt 1 ] && sed -i "s#${r%/}/#<data root>/#g; s#${r%/}\([\" ]\)#<data root>\1#g; s#${r%/}\$#<data root>#" "$f"
    done
    sed -i -E 's#(\"command\": \"|^\# transnormer sweep [^:]*: )[^" ]*/transnormer #\1transnormer #' "$f"
  done
echo "kept the records of $src in $dest ($(du -sh "$dest" | cut -f1))" >&2
