#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine: installs the build dependencies (Debian packages only), builds
# transnormer in ./build (Release), and fetches the datasets (WikiText-103, WikiText raw, GPT-2 BPE,
# GLUE, the IMDB reviews of LRA Text) into ./datasets unless the data root ($TRANSNORMER_DATA, else
# ./datasets) already holds them.
#   bash scripts/setup.sh            (as root, or with sudo available)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake libdnnl-dev ocl-icd-opencl-dev libyaml-cpp-dev libspdlog-dev
          libfmt-dev nlohmann-json3-dev doctest-dev libcli11-dev libplplot-dev libpcre2-dev libarchive-dev libpng-dev libopenmpi-dev openmpi-bin slurm-wlm munge qemu-user curl unzip
          ca-certificates
          groff-base  # the man page's render check (test_cli_docs_cli)
          chromium)  # chromium: the report page's browser test
bash scripts/install_packages.sh "${packages[@]}"

# A unity build (16 files a unit; test files stay apart): about 0.6x the time of one file a unit.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 >/dev/null
cmake --build build -j"$(nproc)"

root="${TRANSNORMER_DATA:-datasets}"
# The files the tests read; scripts/fetch_data.sh fetches everything missing (and skips the rest).
needed=(wikitext-103/wiki.test.tokens wikitext-103/wiki.valid.tokens wikitext-2-raw/wiki.valid.raw
        wikitext-2-raw/wiki.test.raw gpt2_bpe/encoder.json gpt2_bpe/vocab.bpe gpt2_bpe/dict.txt
        glue/CoLA/dev.tsv glue/SST-2/dev.tsv glue/MRPC/dev.tsv glue/STS-B/dev.tsv glue/RTE/dev.tsv
        glue/WNLI/dev.tsv glue/QNLI/dev.tsv lra/imdb)
for f in "${needed[@]}"; do
  if [ ! -e "$root/$f" ]; then
    echo "setup: $root/$f not found; fetching the datasets" >&2
    bash scripts/fetch_data.sh "$root"
    break
  fi
done
echo "setup: done; binary at build/transnormer, data root $root" >&2
