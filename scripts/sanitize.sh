#!/usr/bin/env bash
# The sanitizer stage of CI: builds the library tests and the binary with AddressSanitizer,
# LeakSanitizer and UndefinedBehaviorSanitizer (cmake -DTN_SANITIZE=ON, -O1) in build-sanitize/,
# runs the unit tests there (any report fails the test), then a short training run of the
# quickstart model under LeakSanitizer, whose report at exit fails the stage.
#   bash scripts/sanitize.sh            (after scripts/setup.sh; TRANSNORMER_DATA as for ctest)
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-sanitize
cmake -S . -B "$build" -DTN_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" >/dev/null
cmake --build "$build" -j"$(nproc)" --target test_core test_data test_layers test_experiments transnormer
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --test-dir "$build" -L unit -LE slow -j"$(nproc)" --output-on-failure
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$build/transnormer" train configs/quickstart.yaml --set train.max_steps=8 --set train.eval_every=4 \
  --set train.log_every=4 --threads 2 --out "$out/run"
echo "sanitize: unit tests and a training run clean under ASan, LSan and UBSan" >&2
