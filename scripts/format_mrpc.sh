#!/usr/bin/env bash
# Builds GLUE's MRPC train.tsv, dev.tsv and test.tsv from Microsoft's msr_paraphrase_{train,test}.txt
# and GLUE's dev_ids.tsv, the way GLUE's download_glue_data.py does (format_mrpc): the train file's
# own header line (BOM included) heads train.tsv and dev.tsv; a train pair listed in dev_ids.tsv
# goes to dev.tsv, every other to train.tsv; test.tsv gets an `index` column. Fields are
# tab-separated with no quoting.
#   scripts/format_mrpc.sh SRC_DIR DEST_DIR     (SRC_DIR holds the three source files)
set -euo pipefail
src="$1"
dest="$2"
mkdir -p "$dest"
awk -F'\t' -v OFS='\t' -v train="$dest/train.tsv" -v dev="$dest/dev.tsv" '
  NR == FNR { gsub(/\r/, ""); dev_ids[$1 "\t" $2] = 1; next }
  FNR == 1 { print > train; print > dev; next }
  { sub(/[ \t\r\n]+$/, ""); sub(/^[ \t\r\n]+/, ""); print $1, $2, $3, $4, $5 > ((($2 "\t" $3) in dev_ids) ? dev : train) }
' "$src/dev_ids.tsv" "$src/msr_paraphrase_train.txt"
awk -F'\t' -v OFS='\t' '
  FNR == 1 { print "index\t#1 ID\t#2 ID\t#1 String\t#2 String"; next }
  { sub(/[ \t\r\n]+$/, ""); sub(/^[ \t\r\n]+/, ""); print FNR - 2, $2, $3, $4, $5 }
' "$src/msr_paraphrase_test.txt" > "$dest/test.tsv"
