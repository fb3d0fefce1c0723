#!/usr/bin/env bash
# Checks that includes point down only (docs/architecture.md, "Layers"): between the layers
# (core < layers, data < experiments < app; layers and data never include each other) and between
# the folders of experiments/ (outputs, plots < spec < tasks < analysis < runner < sweeps <
# reports < bench, inspection). Lists every include that points up or across, and fails when
# there is one.
#   bash scripts/check_layers.sh [SOURCE_DIR]
set -euo pipefail
root="${1:-$(dirname "$0")/..}"
cd "$root"
# rank of a folder: an include from rank a of path p to rank b must have b < a, or the same folder.
rank() {
  case "$1" in
    core/*) echo 0 ;;
    layers/*|data/*) echo 1 ;;
    experiments/outputs/*|experiments/plots/*) echo 2 ;;
    experiments/spec/*) echo 3 ;;
    experiments/tasks/*) echo 4 ;;
    experiments/analysis/*) echo 5 ;;
    experiments/runner/*) echo 6 ;;
    experiments/sweeps/*) echo 7 ;;
    experiments/reports/*) echo 8 ;;
    experiments/bench/*|experiments/inspection/*) echo 9 ;;
    app/*) echo 10 ;;
    *) echo "?" ;;
  esac
}
folder() { if [[ "$1" == experiments/* ]]; then echo "$1" | cut -d/ -f1-2; else echo "$1" | cut -d/ -f1; fi; }
bad=0
while IFS= read -r file; do
  from=$(rank "$file")
  if [ "$from" = "?" ]; then echo "$file: a file outside the known folders (give experiments/ files a folder)"; bad=1; continue; fi
  while IFS= read -r inc; do
    [ -z "$inc" ] && continue
    to=$(rank "$inc")
    [ "$to" = "?" ] && continue
    [ "$(folder "$file")" = "$(folder "$inc")" ] && continue
    if [ "$to" -ge "$from" ]; then echo "$file includes $inc: it points up or across"; bad=1; fi
  done < <(grep -o '^#include "[a-z_]*/[^"]*"' "$file" | sed 's/^#include "//;s/"$//')
done < <(find core layers data experiments app -name '*.h' -o -name '*.cpp' | sort)
exit $bad
