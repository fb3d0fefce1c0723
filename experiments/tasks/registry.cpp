#include "experiments/tasks/registry.h"
#include "core/platform/config/registry_table.h"

#include <stdexcept>

#include "core/error.h"
#include "layers/inputs/input_table.h"
#include "layers/config/model_config_json.h"
#include "experiments/tasks/language_modeling.h"
#include "experiments/tasks/lra_tasks.h"
#include "experiments/tasks/masked_lm.h"
#include "experiments/tasks/sentence_prediction.h"

namespace tn {

namespace {
std::vector<TaskEntry>& table_of_tasks() {
  static std::vector<TaskEntry> table = {
      {"language_modeling", "causal LM: next-token cross-entropy (loss, ppl, tokens)", &make_language_modeling,
       nullptr, &language_modeling_for_checkpoint, &language_modeling_bench_work},
      {"masked_lm", "RoBERTa masked LM: 15 % of the tokens masked, cross-entropy on them (loss, ppl, tokens)",
       &make_masked_lm, nullptr, nullptr, &masked_lm_bench_work},
      {"sentence_prediction",
       "sentence-level classification or regression (GLUE): cross-entropy or MSE (loss, accuracy, f1, mcc, pearson, "
       "spearman)",
       &make_sentence_prediction, &sentence_prediction_options},
      {"sequence_classification",
       "one sequence per example, classified (LRA ListOps, Text): cross-entropy (loss, accuracy)",
       &make_sequence_classification, &lra_task_options, nullptr, &sequence_classification_bench_work},
      {"retrieval", "pairs of documents through one encoder, dual-encoder head (LRA Retrieval): cross-entropy "
       "(loss, accuracy)", &make_retrieval, &lra_task_options, nullptr, &retrieval_bench_work},
  };
  return table;
}
}  // namespace

const std::vector<TaskEntry>& task_table() { return table_of_tasks(); }

void add_task(const TaskEntry& entry) { append_named(table_of_tasks(), entry, "add_task", "a task"); }

const std::vector<TaskSchema>& task_schemas() {
  static std::vector<TaskSchema> schemas;
  if (schemas.size() != task_table().size()) {  // built on first use, and again after add_task
    schemas.clear();
    for (const TaskEntry& entry : task_table()) schemas.push_back({entry.name, entry.options});
  }
  return schemas;
}

std::unique_ptr<Task> make_task(const ExperimentSpec& spec, const std::string& data_root) {
  // An input that reads pixel levels needs an image reader (InputEntry::reads_levels).
  if (input_entry(spec.model.input.kind).reads_levels && !dynamic_cast<const ImageSource*>(spec.data.get()))
    throw ConfigError(spec.path + ": model.input.kind: " + std::string(input_entry(spec.model.input.kind).name) +
                      " reads pixel levels, but data.reader " + spec.data->reader() +
                      " yields token ids; use kind: tokens, or an image reader (cifar10, pathfinder)");
  for (const TaskEntry& entry : task_table())
    if (entry.name == spec.task) return entry.make(spec, data_root);
  std::string names;
  for (const TaskEntry& entry : task_table()) names += (names.empty() ? "" : ", ") + std::string(entry.name);
  throw ConfigError(spec.path + ": task: unknown task \"" + spec.task + "\"; use one of " + names);
}

BenchWork make_bench_work(const ModelConfig& config, int64_t rows, int64_t seq_len, uint64_t seed) {
  for (const TaskEntry& entry : task_table())
    if (entry.bench_work)
      if (BenchWork work = entry.bench_work(config, rows, seq_len, seed); work.objective) return work;
  throw ConfigError("model.head: " + model_config_to_json(config)["head"].get<std::string>() +
                    ": no task benches a model with this head");
}

std::unique_ptr<Task> make_checkpoint_task(const LoadedCheckpoint& checkpoint, const std::string& checkpoint_path,
                                           const std::string& data_file, int64_t seq_len, int64_t batch_size) {
  for (const TaskEntry& entry : task_table())
    if (entry.checkpoint_task)
      if (std::unique_ptr<Task> task = entry.checkpoint_task(checkpoint, checkpoint_path, data_file, seq_len, batch_size))
        return task;
  throw ConfigError(checkpoint_path + ": a model with the " +
                    model_config_to_json(checkpoint.model->config())["head"].get<std::string>() +
                    " head; eval --checkpoint scores language models on a .tokens file. Evaluate it through its "
                    "run: `transnormer eval RUN_DIR [--best] [--split valid|test]`, or `transnormer predict RUN_DIR`");
}

}  // namespace tn
