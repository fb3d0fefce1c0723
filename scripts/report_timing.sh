#!/usr/bin/env bash
# Times `transnormer report` on 100 real run directories: trains 25 points (d_model x lr) x 4 seeds
# of a tiny model on a made-up corpus with the CLI (each run writes ~20 metrics.jsonl lines), lays
# them out as a sweep folder with its sweep.json, then times report on the sweep folder and on the
# 100 run directories given one by one (docs/performance.md "report").
#   bash scripts/report_timing.sh [BINARY] [FOLDER]   (defaults: build/transnormer, /tmp/transnormer_report_timing)
set -euo pipefail
bin="$(realpath "${1:-build/transnormer}")"
root="${2:-/tmp/transnormer_report_timing}"
# FOLDER is this script's own: new, or made by an earlier run (it holds .report_timing). Anything
# else (a user's folder, a file, a link, a device such as /dev/null) is refused, never deleted.
if [ -e "$root" ] || [ -L "$root" ]; then
  if [ -L "$root" ] || [ ! -d "$root" ] || [ ! -f "$root/.report_timing" ]; then
    echo "report_timing: $root exists and is not a folder this script made (no .report_timing in it);" \
      "give a new FOLDER" >&2
    exit 2
  fi
  rm -rf -- "$root"
fi
mkdir -p "$root/sweep"
touch "$root/.report_timing"
cd "$root"

# A corpus of 400 lines of 20 words over a skewed vocabulary of 300.
awk 'BEGIN { srand(7); for (l = 0; l < 400; l++) { s = ""; for (w = 0; w < 20; w++) s = s " w" int(rand() * rand() * 300); print s } }' > tiny.tokens
cat > tiny.yaml <<YAML
model: {arch: decoder, d_model: 16, n_layers: 2, n_heads: 2, diag_layers: 1, token_mixer: norm_attention}
data: {train: $root/tiny.tokens, split_valid_from_train: 0.1, seq_len: 16}
train: {batch_size: 4, max_steps: 16, log_every: 1, eval_every: 4, seed: 1, schedule: {name: inverse_sqrt, warmup_steps: 4}}
YAML

points=""
for d in 16 24 32 40 48; do
  for lr in 0.0005 0.001 0.002 0.003 0.005; do
    for seed in 1 2 3 4; do
      dir="d_model-${d}_lr-${lr}_seed-${seed}"
      start=$(date +%s.%N)
      "$bin" train tiny.yaml --set model.d_model=$d --set train.optimizer.lr=$lr --set train.seed=$seed \
        --threads 1 --out "sweep/$dir" 2> "sweep/$dir.log"
      wall=$(printf "%.3f" "$(echo "$(date +%s.%N) - $start" | bc)")
      points+="${points:+,}
  {\"name\": \"d_model=$d lr=$lr seed=$seed\", \"dir\": \"$dir\",
   \"overrides\": {\"model.d_model\": $d, \"train.optimizer.lr\": $lr, \"train.seed\": $seed},
   \"state\": \"done\", \"exit_code\": 0, \"wall_s\": $wall, \"error\": \"\"}"
    done
  done
done
cat > sweep/sweep.json <<JSON
{"name": "report_timing", "sweep_file": "scripts/report_timing.sh", "base": "tiny.yaml", "set": {},
 "axes": ["model.d_model", "train.optimizer.lr", "train.seed"],
 "points": [$points]}
JSON
echo "report_timing: $(ls -d sweep/d_model-*/ | wc -l) run directories, $(cat sweep/*/metrics.jsonl | wc -l) metrics lines" >&2

time_report() {
  local label="$1"; shift
  local start end
  start=$(date +%s.%N)
  "$bin" report "$@" 2> report.log || { cat report.log >&2; exit 1; }
  end=$(date +%s.%N)
  printf "report_timing: %s: %.2f s\n" "$label" "$(echo "$end - $start" | bc)" >&2
}
time_report "sweep folder (100 runs)" sweep --by d_model
time_report "100 run directories" sweep/d_model-*/ --out plain
