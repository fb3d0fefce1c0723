#!/usr/bin/env bash
# Copies the records of a sweep folder into DEST: sweep.json, and each run's config.yaml,
# metrics.jsonl, summary.json, diverged.json, train.log and locality.json: what a reader of the
# results needs and what `transnormer report DEST` reads, so that a report's links resolve in the
# repository and the report rebuilds from DEST. A rerun of the sweep into a folder restored from
# DEST skips the points that are done.
# Never copied: checkpoints (*.safetensors), train states and predictions/ (large, and no report
# reads them). A DEST that already holds any of them is refused (exit 2): delete them first.
# Paths of this machine are replaced in the copies: the data root ($TRANSNORMER_DATA, else ./datasets)
# by "<data root>", and the binary's path in recorded command lines by "transnormer".
#   bash scripts/keep_run_records.sh runs/ablations/t1_design docs/results/t1_design/runs
set -euo pipefail
usage="usage: $0 SWEEP_DIR DEST"
for a in "$@"; do
  if [[ "$a" == -* ]]; then
    echo "$0: unknown option $a (it takes none); $usage" >&2
    exit 2
  fi
done
if [ $# -ne 2 ]; then
  echo "$usage" >&2
  exit 2
fi
src=$1 dest=$2
if [ ! -f "$src/sweep.json" ]; then
  echo "$src: no sweep.json: not a sweep folder (give the folder of transnormer sweep --out)" >&2
  exit 2
fi
# Files that must never be kept, already in DEST (from an older copy): refused, not deleted here.
if [ -d "$dest" ]; then
  mapfile -d '' heavy < <(find "$dest" \( -type f -o -type l \) \( -name '*.safetensors' -o -name 'train_state*' \
      -o -path '*/predictions/*' \) -print0)
  if [ "${#heavy[@]}" -gt 0 ]; then
    {
      echo "$dest holds ${#heavy[@]} file(s) that run records must not keep (checkpoints, train state, predictions):"
      printf '  %s\n' "${heavy[@]:0:10}"
      [ "${#heavy[@]}" -le 10 ] || echo "  ... and $((${#heavy[@]} - 10)) more"
      echo "delete them (git rm them if they are tracked), then run this again"
    } >&2
    exit 2
  fi
fi
# DEST holds only folders and regular files: a symbolic link, FIFO or device there (even /dev/null
# reached through a link) would be written through by cp, and cp -p would give it the copy's owner
# and mode. Refused, not touched.
if [ -e "$dest" ] || [ -L "$dest" ]; then
  mapfile -d '' odd < <(find "$dest/" ! -type f ! -type d -print0)
  if [ "${#odd[@]}" -gt 0 ]; then
    {
      echo "$dest holds ${#odd[@]} entr(y/ies) that are neither files nor folders (symbolic links, FIFOs, devices):"
      printf '  %s\n' "${odd[@]:0:10}"
      echo "records are copied only into regular files: move them away, then run this again"
    } >&2
    exit 2
  fi
fi
mkdir -p "$dest"
(cd "$src" && find . -type f \( -name sweep.json -o -name config.yaml -o -name metrics.jsonl -o \
    -name summary.json -o -name diverged.json -o -name train.log -o -name locality.json \) \
    ! -path '*/predictions/*' -print0) |
  while IFS= read -r -d '' f; do
    mkdir -p "$dest/$(dirname "$f")"
    cp -p "$src/$f" "$dest/$f"
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
