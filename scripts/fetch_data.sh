#!/usr/bin/env bash
# Downloads WikiText-103 (word level, v1; Merity et al. 2016, CC BY-SA) and extracts
# wiki.{train,valid,test}.tokens into <data root>/wikitext-103/, then checks valid/test against the
# sha256 values pinned below (those of the official archive's files). The data root is the first argument, else
# $TRANSNORMER_DATA, else ./data (the same order as --data-root; see data/README.md).
#
# It first fetches GPT-2's BPE (encoder.json, vocab.bpe) and fairseq's dict.txt into
# <data root>/gpt2_bpe/ (for `transnormer tokenize`) unless they are there, checking their sha256.
#
#   scripts/fetch_data.sh [DATA_ROOT]
set -euo pipefail

root="${1:-${TRANSNORMER_DATA:-data}}"
dest="$root/wikitext-103"
# Smerity's mirror serves the official archive; the original Salesforce S3 link is the fallback.
urls=(
  "https://wikitext.smerity.com/wikitext-103-v1.zip"
  "https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-103-v1.zip"
)
checksums="9aee9f52d6e77de6c7751fc5e7c44287db3ec0eaf15477098acc6b93c1c4250b  wiki.valid.tokens
56db52eb157b1ab5c89646eef70510c1eca6e12a3bfdb99f0d6b05b4eacb75b9  wiki.test.tokens"

download() {  # download URL FILE
  if command -v curl >/dev/null; then curl -fL --retry 3 -o "$2" "$1"
  elif command -v wget >/dev/null; then wget -O "$2" "$1"
  else echo "fetch_data.sh: need curl or wget" >&2; return 1
  fi
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# GPT-2 BPE and the fairseq dictionary, from fairseq's public copies (the same bytes as OpenAI's).
bpe_dest="$root/gpt2_bpe"
bpe_checksums="196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783  encoder.json
1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5  vocab.bpe
2c31c5b236661067fe8626775eb995ef5fe808ac87d2ad4a6ddbef68550f5cc6  dict.txt"
mkdir -p "$bpe_dest"
for f in encoder.json vocab.bpe dict.txt; do
  if [[ ! -s "$bpe_dest/$f" ]]; then
    echo "downloading gpt2_bpe/$f"
    download "https://dl.fbaipublicfiles.com/fairseq/gpt2_bpe/$f" "$tmp/$f" && mv -f "$tmp/$f" "$bpe_dest/$f"
  fi
done
if ! (cd "$bpe_dest" && sha256sum -c - <<<"$bpe_checksums"); then
  echo "fetch_data.sh: checksum mismatch in $bpe_dest; delete the files and rerun" >&2
  exit 1
fi
zip="$tmp/wikitext-103-v1.zip"
for url in "${urls[@]}"; do
  echo "downloading $url"
  if download "$url" "$zip"; then break; fi
  rm -f "$zip"
done
if [[ ! -s "$zip" ]]; then
  echo "fetch_data.sh: could not download wikitext-103-v1.zip from any of: ${urls[*]}" >&2
  exit 1
fi

if command -v unzip >/dev/null; then unzip -q "$zip" -d "$tmp"
else python3 -m zipfile -e "$zip" "$tmp"
fi
mkdir -p "$dest"
for split in train valid test; do
  mv -f "$tmp/wikitext-103/wiki.$split.tokens" "$dest/"
done

if ! (cd "$dest" && sha256sum -c - <<<"$checksums"); then
  echo "fetch_data.sh: checksum mismatch in $dest (damaged download or a different release);" \
    "delete the files and rerun" >&2
  exit 1
fi
echo "wiki.train.tokens (no pinned hash here; expect 103,227,021 tokens incl. <eos>):"
(cd "$dest" && sha256sum wiki.train.tokens)
echo "WikiText-103 is in $dest"
