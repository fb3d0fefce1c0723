#!/usr/bin/env bash
# Checks the walkthroughs of docs/architecture.md ("Add a token mixer", "Add a task", "Add a
# reader", the input table) against the code: every token mixer, task, reader and input kind lives
# in the files its walkthrough lists plus its one table line, and no other library file names it,
# except the uses listed below, each with its reason. Prints the files of each extension; fails
# (exit 1) on a missing file or a use outside them.
#   bash scripts/check_extensions.sh [SOURCE_DIR]
set -euo pipefail
root="${1:-$(dirname "$0")/..}"
cd "$root"
lib="core layers data experiments app"
bad=0
fail() { echo "$1"; bad=1; }
# Library files (not tests) whose text matches the extended regex $1.
users() { grep -rlE "$1" $lib --include='*.h' --include='*.cpp' | sort || true; }

# Uses of a mixer kind outside its own files that are the model's semantics, not dispatch:
#   Softmax        model_config_json.cpp: the fallback of a layers[] choice; bench_scaling.cpp:
#                  Table 7's softmax rows (the paper's baseline, benched by name)
#   NormAttention  model_config.h: the default token_mixer; bench_scaling.h: a comment;
#                  diag_norm_parallel: its NormAttention branch
#   Diag           model_config_json.cpp: diag_layers (the paper's DiagAttention lower layers);
#                  diag_norm_parallel: its DiagAttention branch
allowed_mixer_use() {
  case "$1:$2" in
    Softmax:layers/config/model_config_json.cpp|Softmax:experiments/bench/bench_scaling.cpp) return 0 ;;
    NormAttention:layers/config/model_config.h|NormAttention:experiments/bench/bench_scaling.h) return 0 ;;
    NormAttention:layers/attention/diag_norm_parallel*|Diag:layers/attention/diag_norm_parallel*) return 0 ;;
    Diag:layers/config/model_config_json.cpp) return 0 ;;
  esac
  return 1
}

echo "token mixers (layers/attention/mixer_table.cpp):"
for m in $(grep -oE '[a-z_]+_mixer_entry\(\)' layers/attention/mixer_table.cpp | sed 's/_mixer_entry()//' | sort -u); do
  entry=layers/attention/${m}_entry.cpp
  [ -f "$entry" ] || { fail "mixer $m: no $entry"; continue; }
  kind=$(grep -oE '\.kind = MixerKind::[A-Za-z]+' "$entry" | head -1 | sed 's/.*://')
  own=$(compgen -G "layers/attention/${m}[._]*"; compgen -G "layers/attention/kernels/${m}[._]*" || true)
  echo "  $m ($kind): $(echo $own | wc -w) files of its own + its line in mixer_table.cpp and its MixerKind value"
  for f in $(users "MixerKind::${kind}\b"); do
    [[ "$f" == layers/attention/${m}[._]* ]] && continue
    allowed_mixer_use "$kind" "$f" || fail "  mixer $m: $f names MixerKind::$kind (dispatch belongs in its table entry)"
  done
done

echo "tasks (experiments/tasks/registry.cpp):"
for f in $(users 'dynamic_cast<[^>]*(Task|Objective)[&*]'); do
  [[ "$f" == experiments/tasks/* ]] || fail "  $f casts to a task type"
done
for c in $(grep -hoE 'class [A-Za-z]+Task final' experiments/tasks/*.h | awk '{print $2}'); do
  for f in $(users "\b$c\b"); do
    [[ "$f" == experiments/tasks/* ]] || fail "  $f names the task class $c"
  done
done
# forward.cpp compares the golden input's "task" field, a file format's key, not a task name.
for t in $(grep -oE '^ +\{"[a-z_]+",' experiments/tasks/registry.cpp | grep -oE '[a-z_]+'); do
  echo "  $t"
  for f in $(users "== \"$t\""); do
    [[ "$f" == experiments/tasks/* || "$f" == experiments/inspection/forward.cpp ]] || fail "  $f compares with the task name $t"
  done
done

# read_lines (wikitext.h) reads a .tokens file, the format eval --checkpoint and analyze take.
echo "readers (data/readers/registry.cpp):"
for r in $(grep -oE '^ +\{"[a-z0-9_]+",' data/readers/registry.cpp | grep -oE '[a-z0-9_]+'); do
  files=""
  for f in data/readers/${r}.h data/readers/${r}.cpp data/readers/${r}_spec.h data/readers/${r}_spec.cpp; do
    [ -f "$f" ] && files="$files $f" || fail "  reader $r: no $f"
  done
  echo "  $r:$(echo $files | wc -w) files + its line in registry.cpp, its fuzz target and corpus"
  for f in $(users "#include \"data/readers/${r}(_spec)?\.h\""); do
    [[ "$f" == data/readers/* ]] && continue
    [[ "$r" == wikitext && ( "$f" == app/verb_analyze.cpp || "$f" == experiments/tasks/language_modeling.cpp ) ]] && continue
    fail "  $f includes reader $r's own header"
  done
done

# model_config.h: the default input kind.
echo "input kinds (layers/inputs/input_table.cpp):"
for i in $(grep -oE '[a-z_]+_input_entry\(\)' layers/inputs/input_table.cpp | sed 's/_input_entry()//' | sort -u); do
  [ -f "layers/inputs/${i}_input.cpp" ] || fail "  input $i: no layers/inputs/${i}_input.cpp"
  kind=$(grep -oE 'InputKind::[A-Za-z]+' "layers/inputs/${i}_input.cpp" | head -1 | cut -d: -f3)
  echo "  $i ($kind): 1 file + its line in input_table.cpp and its InputKind value"
  for f in $(users "InputKind::${kind}\b"); do
    [[ "$f" == layers/inputs/* || "$f" == layers/config/model_config.h ]] ||
      fail "  $f names InputKind::$kind"
  done
done
exit $bad
