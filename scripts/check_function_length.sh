#!/usr/bin/env bash
# Lists the functions of the library and app sources (not tests) longer than 80 lines, and fails
# when there is one: one concern per function. Kernels (layers/attention/kernels/, whose loops
# are tuned as a whole) are exempt.
#   bash scripts/check_function_length.sh [SOURCE_DIR]
set -euo pipefail
root="${1:-$(dirname "$0")/..}"
cd "$root"
exempt='^layers/attention/kernels/'
files=$(find app core data experiments layers -name '*.cpp' | sort | grep -Ev "$exempt" || true)
# A definition starts at column 0 with '(' on its line and opens its body with a line ending in
# '{' within 8 lines; it ends at the next line starting with '}'.
long=$(awk -v max=80 '
  FNR == 1 { state = 0 }
  state == 0 && /^[A-Za-z_]/ && /\(/ && !/^(namespace|struct|class|enum|extern|static_assert|using|template|typedef)/ {
    sig = FNR; state = 1
  }
  state == 1 {
    if ($0 ~ /\{[ \t]*$/) { start = sig; state = 2; next }
    if ($0 ~ /[;}][ \t]*$/ || FNR - sig > 8) state = 0
    next
  }
  state == 2 && /^}/ {
    n = FNR - start + 1
    if (n > max) printf "%s:%d: a function of %d lines (at most %d outside kernels)\n", FILENAME, start, n, max
    state = 0
  }' $files)
if [ -n "$long" ]; then
  echo "$long" >&2
  echo "check_function_length: split these into functions of one job each" >&2
  exit 1
fi
echo "check_function_length: every function of $(echo "$files" | wc -l) files is at most 80 lines"
