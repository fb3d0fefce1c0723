#include "experiments/tasks/lra_tasks.h"

#include "core/error.h"
#include "experiments/tasks/classification_options.h"
#include "data/encoding/image_encoding.h"
#include "experiments/tasks/sequence_classification.h"
#include "experiments/tasks/task_factory.h"
#include "data/encoding/symbol_encoding.h"

namespace tn {

namespace {
/// Learned positions must cover the longest sequence.
void check_positions(const ExperimentSpec& spec, int64_t max_length, const std::string& key) {
  if (spec.model.positional == Positional::Learned && max_length > spec.model.max_positions)
    throw ConfigError(spec.path + ": " + key + ": " + std::to_string(max_length) + " exceeds model.max_positions " +
                      std::to_string(spec.model.max_positions) + "; lower " + key + " or raise model.max_positions");
}

/// LRA Image and Pathfinder: each image a sequence of pixel levels (image_encoding.h).
std::unique_ptr<Task> make_image_task(const ExperimentSpec& spec, const std::string& data_root, const ImageSource& source) {
  check_positions(spec, source.width() * source.height(), "data (" + std::to_string(source.width()) + "x" +
                                                              std::to_string(source.height()) + " pixels)");
  return make_classification_task(spec, encode_images(source.read_images(data_root), source));
}

std::unique_ptr<Task> make_lra_task(const ExperimentSpec& spec, const std::string& data_root, bool retrieval) {
  const std::string name = retrieval ? "retrieval" : "sequence_classification";
  require_model(spec, name, Arch::Encoder, retrieval ? HeadKind::Retrieval : HeadKind::Classification);
  if (const auto* images = dynamic_cast<const ImageSource*>(spec.data.get()); images && !retrieval)
    return make_image_task(spec, data_root, *images);
  const SentenceSource* source = &require_source<SentenceSource>(
      spec, name, "labelled sequences", retrieval ? "aan" : "listops, imdb, aan, cifar10 or pathfinder");
  const TokenizerSpec tok = source->text_tokenizer();
  if (tok.kind != TokenizerSpec::Kind::Char && tok.kind != TokenizerSpec::Kind::ListOps)
    throw ConfigError(spec.path + ": data.reader: " + spec.data->reader() + " is tokenized by RoBERTa's BPE; use " +
                      "task: sentence_prediction");
  if (source->pairs() != retrieval)
    throw ConfigError(spec.path + ": task: " + name + (retrieval ? " needs pairs of documents (reader aan)" :
                      " takes one sequence per example, but " + spec.data->reader() +
                      " yields pairs; use task: retrieval"));
  const int64_t max_length = spec.data->tokens_per_sample();
  check_positions(spec, max_length, "data.max_length");
  EncodedData data = encode_symbols(source->read_sentences(data_root), tok, max_length);
  data.dataset = sentence_dataset_info(*source);
  return make_classification_task(spec, std::move(data));
}
}  // namespace

std::unique_ptr<Task> make_sequence_classification(const ExperimentSpec& spec, const std::string& data_root) {
  return make_lra_task(spec, data_root, false);
}

std::unique_ptr<Task> make_retrieval(const ExperimentSpec& spec, const std::string& data_root) {
  return make_lra_task(spec, data_root, true);
}

std::shared_ptr<const TaskOptions> lra_task_options(const JsonSection& section) {
  ClassificationOptions defaults;
  defaults.batching = ClassificationOptions::Batching::Shuffled;
  return resolve_classification_options(section, defaults);
}

BenchWork sequence_classification_bench_work(const ModelConfig& config, int64_t rows, int64_t seq_len,
                                             uint64_t seed) {
  if (config.head != HeadKind::Classification) return {};
  return {std::make_unique<SequenceClassificationObjective>(), random_sequence_batch(config, rows, seq_len, seed)};
}

BenchWork retrieval_bench_work(const ModelConfig& config, int64_t rows, int64_t seq_len, uint64_t seed) {
  if (config.head != HeadKind::Retrieval) return {};
  return {std::make_unique<SequenceClassificationObjective>(), random_sequence_batch(config, rows, seq_len, seed)};
}

}  // namespace tn
