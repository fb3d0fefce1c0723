#!/usr/bin/env bash
# Checks that a transnormer binary from the default (portable) build starts on any x86-64 CPU: no
# AVX or AVX-512 instruction (VEX/EVEX-encoded, ymm/zmm/mask registers) outside the functions
# compiled per instruction set (GCC's "[clone .arch_x86_64_v3]" / "[clone .arch_x86_64_v4]", and
# run_at_width's tn::isa_detail::run_v3 / run_v4; chosen at run time: core/runtime/math/isa_clones.h) and
# the functions named *_avx512bf16 (called only where the CPU has AVX512_BF16: core/runtime/dnnl/bf16.cpp),
# and such clones present. Run by ctest.
#   bash scripts/check_portable.sh build/transnormer
set -euo pipefail
bin="${1:?usage: check_portable.sh BINARY}"
command -v objdump > /dev/null || { echo "check_portable: objdump not found (apt-get install binutils)" >&2; exit 2; }
objdump -d --no-show-raw-insn -C "$bin" | awk '
  /^[0-9a-f]+ <.*>:$/ { fn = $0; clone = ($0 ~ /clone \.arch_x86_64_v[34]\]/ || $0 ~ /<[^ ]* tn::isa_detail::run_v[34]</); if (clone) clones++; else clone = ($0 ~ /::[a-z0-9_]+_avx512bf16[<(]/); next }
  !clone && (/:\t+v[a-z0-9]+[ \t]/ || /%[yz]mm[0-9]/ || /%k[0-7]/) {
    if (!(fn in bad)) { bad[fn] = $0; n++ }
  }
  END {
    if (n) {
      printf "check_portable: %d function(s) outside the per-ISA clones use AVX or AVX-512, so the binary may die with an illegal instruction on an older CPU:\n", n
      shown = 0
      for (f in bad) { if (shown++ < 10) printf "  %s\n    %s\n", f, bad[f] }
      exit 1
    }
    if (clones < 1) { print "check_portable: no per-ISA clones found: the hot loops would run without AVX"; exit 1 }
    printf "check_portable: %d per-ISA clones; no AVX outside them\n", clones
  }'
