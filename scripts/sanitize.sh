#!/usr/bin/env bash
# The sanitizer and fuzz stage of CI (docs/testing.md). One clang build in build-fuzz
# (-DTN_FUZZ=ON: every file instrumented for AddressSanitizer with LeakSanitizer,
# UndefinedBehaviorSanitizer and libFuzzer's coverage; -O1, a unity build to keep it short) of the
# library tests, the binary and the fuzz targets, then:
#   1. the unit tests (ctest -L unit, without the slow QEMU runs), any sanitizer report fatal;
#   2. a short training run of the quickstart model under LeakSanitizer (a report fails it);
#   3. scripts/fuzz.sh: every fuzz target for FUZZ_SECONDS (default 8) seconds.
#   bash scripts/sanitize.sh            (after scripts/setup.sh; TRANSNORMER_DATA as for ctest)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_packages.sh clang libomp-dev
build=build-fuzz
start=$SECONDS
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DTN_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 >/dev/null
cmake --build "$build" -j"$(nproc)" --target test_core test_data test_layers test_experiments test_fuzz \
  transnormer fuzz_targets
echo "sanitize: built in $((SECONDS - start)) s" >&2
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
start=$SECONDS
ctest --test-dir "$build" -L unit -LE slow -j"$(nproc)" --output-on-failure
echo "sanitize: unit tests clean in $((SECONDS - start)) s" >&2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# (the validation split cut to 2 % and no test split: evaluation under ASan runs about 10x slower)
"$build/transnormer" train configs/quickstart.yaml --set train.max_steps=8 --set train.eval_every=4 \
  --set train.log_every=4 --set data.split_valid_from_train=0.02 --set data.test=null --threads 2 --out "$out/run"
echo "sanitize: a training run clean under ASan, LSan and UBSan" >&2
bash scripts/fuzz.sh "${FUZZ_SECONDS:-8}"
