#!/usr/bin/env bash
# Runs the fuzz targets of the fuzz build (build-fuzz, made by scripts/sanitize.sh) for SECONDS
# each (default 8), as many at a time as there are cores, each from a copy of its seed corpus
# (tests/fuzz/corpus/<target>) plus its kept regressions, so what it discovers stays out of the
# repo. A crash, leak, sanitizer report, refusal by exception other than ConfigError/DataError,
# allocation over 2 GB or input slower than 10 s fails the run; libFuzzer leaves the input in
# build-fuzz/fuzz-crashes/<target>/. Once the defect is fixed, keep that input in
# tests/fuzz/regressions/<target>/: test_fuzz replays it in the normal test suite for good.
# Prints one line per target: executions, coverage (libFuzzer's cov:), corpus size, outcome.
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-8}"
shift || true
build=build-fuzz
targets=("$@")
if ((${#targets[@]} == 0)); then
  for d in tests/fuzz/corpus/*/; do targets+=("$(basename "$d")"); done
fi
work="$build/fuzz-work"
rm -rf "$work"
mkdir -p "$work"

run_one() {  # target: fuzz it, then print its summary line; exit status 1 on a finding
  local t="$1" dir="$work/$1"
  mkdir -p "$dir/corpus" "$build/fuzz-crashes/$t"
  cp tests/fuzz/corpus/"$t"/* "$dir/corpus/"
  local extra=()
  [ -d "tests/fuzz/regressions/$t" ] && extra+=("tests/fuzz/regressions/$t")
  local status=0
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=0" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    "$build/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-crashes/$t/" "$dir/corpus" "${extra[@]}" > "$dir/log" 2>&1 || status=$?
  local execs cov units
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$dir/log" | tail -1 | grep -o '[0-9]*$' || echo "?")
  units=$(ls "$dir/corpus" | wc -l)
  if ((status == 0)); then
    printf '%-16s %9s executions  cov %6s  corpus %5s  clean\n' "$t" "$execs" "$cov" "$units"
  else
    printf '%-16s %9s executions  cov %6s  corpus %5s  FOUND A DEFECT (exit %s): see %s/log\n' \
      "$t" "$execs" "$cov" "$units" "$status" "$dir"
    grep -m1 -E 'ERROR: |SUMMARY: |runtime error|an exception that is not|==[0-9]+== ?ERROR' "$dir/log" >&2 || true
    return 1
  fi
}
export -f run_one
export build work seconds

echo "fuzz: ${#targets[@]} targets, ${seconds} s each, $(nproc) at a time" >&2
if printf '%s\n' "${targets[@]}" | xargs -P "$(nproc)" -I{} bash -c 'run_one {}'; then
  echo "fuzz: every target clean" >&2
else
  echo "fuzz: a target found a defect (above); its input is in $build/fuzz-crashes/" >&2
  exit 1
fi
