#!/usr/bin/env bash
# Downloads the datasets from their official sources into the data root (the first argument, else
# $TRANSNORMER_DATA, else ./datasets: the same order as --data-root; see datasets/README.md), skipping each
# part that is already there, and checks every file against the sha256 pinned below:
#   gpt2_bpe/          GPT-2's encoder.json and vocab.bpe, fairseq's dict.txt (fairseq's copies)
#   wikitext-103/      wiki.{train,valid,test}.tokens (wikitext-103-v1.zip, Merity et al. 2016)
#   wikitext-103-raw/  wiki.{train,valid,test}.raw (wikitext-103-raw-v1.zip)
#   wikitext-2-raw/    wiki.{train,valid,test}.raw (wikitext-2-raw-v1.zip)
#   glue/<TASK>/       the nine GLUE tasks as GLUE's download_glue_data.py lays them out (MRPC
#                      built from Microsoft's files by scripts/format_mrpc.sh)
#   lra/imdb/          aclImdb_v1.tar.gz (Maas et al. 2011), LRA's Text task, kept as published
#   lra/cifar10/       cifar-10-binary.tar.gz (Krizhevsky 2009), LRA's Image task, kept as published
#   lra/listops-1000/  with --lra only: LRA ListOps, and
#   lra/aan/           LRA Retrieval, both unpacked from the 8.23 GB LRA release (lra_release.gz);
#                      without it, `transnormer data generate listops` makes ListOps in the same format
# Pins marked "verified" match an independent copy (tiktoken's hashes; the official archive's
# files); a mismatch there stops the script. The other pins are those of the copies this project
# was developed against, not checked against the official archives here: a mismatch is reported
# and the script goes on (the tests then say whether the data still reads as expected).
#
#   scripts/fetch_data.sh [--lra] [DATA_ROOT]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
lra_release=no
args=()
for a in "$@"; do
  if [[ "$a" == --lra ]]; then lra_release=yes; else args+=("$a"); fi
done
root="${args[0]:-${TRANSNORMER_DATA:-datasets}}"
mkdir -p "$root"

download() {  # download URL FILE; a server that stops sending for 60 s counts as failed (no hang)
  if command -v curl >/dev/null; then curl -fL --retry 3 --connect-timeout 30 --speed-limit 1 --speed-time 60 -o "$2" "$1"
  elif command -v wget >/dev/null; then wget --timeout=60 --tries=3 -O "$2" "$1"
  else echo "fetch_data.sh: need curl or wget" >&2; return 1
  fi
}
unpack() {  # unpack ZIP DIR
  if command -v unzip >/dev/null; then unzip -q -o "$1" -d "$2"
  else python3 -m zipfile -e "$1" "$2"
  fi
}
fetch_zip() {  # fetch_zip NAME URL... : downloads the first URL that works into $tmp/NAME
  local name="$1"; shift
  for url in "$@"; do
    echo "downloading $url"
    if download "$url" "$tmp/$name"; then return 0; fi
    rm -f "$tmp/$name"
  done
  echo "fetch_data.sh: could not download $name from any of: $*" >&2
  exit 1
}
check() {  # check DIR STRICT CHECKSUMS
  if (cd "$1" && sha256sum --quiet -c - <<<"$3"); then
    echo "checked $1"
  elif [[ "$2" == strict ]]; then
    echo "fetch_data.sh: checksum mismatch in $1 (a damaged download or another release); delete it and rerun" >&2
    exit 1
  else
    echo "fetch_data.sh: warning: $1 differs from the copy this project was developed against (listed above);" \
      "a newer release of the archive? The tests check its row counts" >&2
  fi
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# GPT-2 BPE (verified: tiktoken pins the same hashes) and fairseq's dictionary.
dest="$root/gpt2_bpe"
if [[ ! -s "$dest/encoder.json" || ! -s "$dest/vocab.bpe" || ! -s "$dest/dict.txt" ]]; then
  mkdir -p "$dest"
  for f in encoder.json vocab.bpe dict.txt; do
    echo "downloading gpt2_bpe/$f"
    download "https://dl.fbaipublicfiles.com/fairseq/gpt2_bpe/$f" "$tmp/$f"
    mv -f "$tmp/$f" "$dest/$f"
  done
fi
check "$dest" strict "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783  encoder.json
1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5  vocab.bpe"
check "$dest" warn "2c31c5b236661067fe8626775eb995ef5fe808ac87d2ad4a6ddbef68550f5cc6  dict.txt"

# WikiText-103, word level (verified: the official archive's valid and test files).
dest="$root/wikitext-103"
if [[ ! -s "$dest/wiki.test.tokens" ]]; then
  fetch_zip wikitext-103-v1.zip "https://wikitext.smerity.com/wikitext-103-v1.zip" \
    "https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-103-v1.zip"
  unpack "$tmp/wikitext-103-v1.zip" "$tmp"
  mkdir -p "$dest"
  for split in train valid test; do mv -f "$tmp/wikitext-103/wiki.$split.tokens" "$dest/"; done
  echo "wiki.train.tokens (no pinned hash; expect 103,227,021 tokens incl. <eos>): $(sha256sum "$dest/wiki.train.tokens")"
fi
check "$dest" strict "9aee9f52d6e77de6c7751fc5e7c44287db3ec0eaf15477098acc6b93c1c4250b  wiki.valid.tokens
56db52eb157b1ab5c89646eef70510c1eca6e12a3bfdb99f0d6b05b4eacb75b9  wiki.test.tokens"

# WikiText raw (character level; the masked-LM text). WikiText-2-raw's valid and test are the
# same articles as WikiText-103-raw's.
raw_valid_test="4cd0f6876d07a413aa911261ff6d363c72d757d47f0fdd6015702014c89cb9c7  wiki.valid.raw
173c87a53759e0201f33e0ccf978e510c2042d7f2cb78229d9a50d79b9e7dd08  wiki.test.raw"
for corpus in wikitext-2-raw wikitext-103-raw; do
  dest="$root/$corpus"
  if [[ ! -s "$dest/wiki.test.raw" ]]; then
    fetch_zip "$corpus-v1.zip" "https://wikitext.smerity.com/$corpus-v1.zip" \
      "https://s3.amazonaws.com/research.metamind.io/wikitext/$corpus-v1.zip"
    unpack "$tmp/$corpus-v1.zip" "$tmp"
    mkdir -p "$dest"
    for split in train valid test; do mv -f "$tmp/$corpus/wiki.$split.raw" "$dest/"; done
  fi
  check "$dest" warn "$raw_valid_test"
done

# GLUE (Wang et al. 2018), from the URLs of GLUE's download_glue_data.py.
glue_zip() {  # glue_zip TASK ZIP [FOLDER IN THE ZIP]
  local dest="$root/glue/$1"
  [[ -s "$dest/dev.tsv" || -s "$dest/dev_matched.tsv" ]] && return 0
  fetch_zip "$2" "https://dl.fbaipublicfiles.com/glue/data/$2"
  unpack "$tmp/$2" "$tmp/glue"
  mkdir -p "$root/glue"
  rm -rf "$dest"
  mv "$tmp/glue/${3:-$1}" "$dest"
}
glue_zip CoLA CoLA.zip
glue_zip SST-2 SST-2.zip
glue_zip QQP QQP-clean.zip QQP
glue_zip STS-B STS-B.zip
glue_zip MNLI MNLI.zip
glue_zip QNLI QNLIv2.zip QNLI
glue_zip RTE RTE.zip
glue_zip WNLI WNLI.zip
if [[ ! -s "$root/glue/MRPC/dev.tsv" ]]; then
  mrpc="$root/glue/MRPC"
  mkdir -p "$mrpc"
  download https://dl.fbaipublicfiles.com/senteval/senteval_data/msr_paraphrase_train.txt "$mrpc/msr_paraphrase_train.txt"
  download https://dl.fbaipublicfiles.com/senteval/senteval_data/msr_paraphrase_test.txt "$mrpc/msr_paraphrase_test.txt"
  download https://dl.fbaipublicfiles.com/glue/data/mrpc_dev_ids.tsv "$mrpc/dev_ids.tsv"
  bash "$here/format_mrpc.sh" "$mrpc" "$mrpc"
fi
check "$root/glue/CoLA" warn "cb368ebeb9f27d7ad03720d27ddc95687a311bdb100781a2fe59a5f5b1bc0624  train.tsv
8c013e21dc39957cac37378d87bebe225b694a0d5fe13eded66c2856628833fd  dev.tsv
3b4df85f7a9a0633574b38d181e18090ac961a24b18fb6bcd74999ddea8ad0b8  test.tsv"
check "$root/glue/SST-2" warn "48eac26399f8456935f81dd9e3a745c1430adb6c62e233ccfe22db4a0d15d1d1  train.tsv
54a9c12c77e402fc14d6a66a506f24d999f596b0176eb777c972cccc2f9cc4b0  dev.tsv
69a938605609b3e6663b4487918fe1565eb293734e6e520d0366d1d412fd2a13  test.tsv"
check "$root/glue/MRPC" warn "122becc469405bc16f9defcb8715d2a4b7ce600e9d9381e6dc42bfdd1494c51d  train.tsv
81c8a1a9e1dfe461dd2c1a4f98f43fe18bece44d2bf9e3d0b245b88e5aa5eaf7  dev.tsv
4ee428d354c01fa35c2f0f6ab835398abb0bec01f17ed68fbcb6c04265505b0a  test.tsv"
check "$root/glue/STS-B" warn "41c4d978b6162abdcada7e49a982211954cca5459c228db478af333124b257a2  train.tsv
fe7dc0632a5033562f3cadff991f6e8d9b9b6311861660e78c3c82eb7db67f59  dev.tsv
16b4223d7d44a644fbc10f1b449472cfe81e1715fb07cf44023b0aa88ce856eb  test.tsv"
check "$root/glue/RTE" warn "41e3a9b063433392343fad9e962cf2f58b681c78d8f71592f4186f0837246c5c  train.tsv
80230dfa1347282e7b532b06a1004a76a710087541189bf874223ddf0e3819fb  dev.tsv
6e33f09b5c2bfd5fd5fde217070f3dd49e484e33b9752b5864cf36fc421a213f  test.tsv"
check "$root/glue/WNLI" warn "9a88e9d54b6861cc796a088e9acf4f5f65064a9ef65ae6fa7a688b28391e5c9a  train.tsv
cba00490596dd14be8cf53b4f53bb744abe3a7b89f81ab210528d80225338ed5  dev.tsv
ff0296817e235bf6f7a230c5f6781bd6ee228a45445f6510831fdef6f2a04766  test.tsv"
check "$root/glue/QNLI" warn "763e95932dd3578251de71582e06829015f9c3815a518c751dc537219b159de4  dev.tsv
6d856264e292fa7a7bc7b8e182efa1454ffd9532733c12ad813017dd5b377a5a  test.tsv"
# LRA Text: the IMDB reviews as published (md5 as pinned by torchtext's IMDB loader), read by the
# imdb reader straight from the archive. A folder that already holds the reviews (the unpacked
# aclImdb/ or archives that split it) is left alone.
dest="$root/lra/imdb"
if [[ ! -s "$dest/aclImdb_v1.tar.gz" && -z "$(ls "$dest" 2>/dev/null | grep -E 'aclImdb|\.tar')" ]]; then
  mkdir -p "$dest"
  echo "downloading aclImdb_v1.tar.gz (84 MB)"
  download http://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz "$tmp/aclImdb_v1.tar.gz"
  if ! (cd "$tmp" && echo "7c2ac02c03563afcf9b574c7e56c153a  aclImdb_v1.tar.gz" | md5sum --quiet -c -); then
    echo "fetch_data.sh: aclImdb_v1.tar.gz does not match its md5 (a damaged download); rerun" >&2
    exit 1
  fi
  mv -f "$tmp/aclImdb_v1.tar.gz" "$dest/"
fi

# LRA Image: CIFAR-10's binary version as published (md5 as the CIFAR page gives it), read by the
# cifar10 reader straight from the archive. A folder that already holds the batches (the unpacked
# cifar-10-batches-bin/, or its files) is left alone.
dest="$root/lra/cifar10"
if [[ ! -s "$dest/cifar-10-binary.tar.gz" && ! -d "$dest/cifar-10-batches-bin" && ! -s "$dest/data_batch_1.bin" ]]; then
  mkdir -p "$dest"
  echo "downloading cifar-10-binary.tar.gz (162 MB)"
  download https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz "$tmp/cifar-10-binary.tar.gz"
  if ! (cd "$tmp" && echo "c32a1d4ab5d03f1284b67883e8d87530  cifar-10-binary.tar.gz" | md5sum --quiet -c -); then
    echo "fetch_data.sh: cifar-10-binary.tar.gz does not match its md5 (a damaged download); rerun" >&2
    exit 1
  fi
  mv -f "$tmp/cifar-10-binary.tar.gz" "$dest/"
fi

# The LRA release (Tay et al. 2021; no official checksum exists), only when asked: 8.23 GB
# downloaded, ListOps and AAN unpacked (Pathfinder and Path-X are not read here).
if [[ "$lra_release" == yes && ( ! -s "$root/lra/listops-1000/basic_train.tsv" || ! -s "$root/lra/aan/new_aan_pairs.train.tsv" ) ]]; then
  echo "downloading lra_release.gz (8.23 GB)"
  download https://storage.googleapis.com/long-range-arena/lra_release.gz "$tmp/lra_release.gz"
  mkdir -p "$tmp/lra" "$root/lra/listops-1000" "$root/lra/aan"
  tar -xzf "$tmp/lra_release.gz" -C "$tmp/lra" --wildcards '*listops-1000/basic_*.tsv' '*tsv_data/new_aan_pairs.*.tsv'
  find "$tmp/lra" -path '*listops-1000/basic_*.tsv' -exec mv -f {} "$root/lra/listops-1000/" \;
  find "$tmp/lra" -path '*tsv_data/new_aan_pairs.*.tsv' -exec mv -f {} "$root/lra/aan/" \;
  rm -f "$tmp/lra_release.gz"
fi
echo "datasets are in $root"
