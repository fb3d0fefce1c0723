#include "experiments/tasks/sentence_prediction.h"

#include "core/error.h"
#include "data/data_root.h"
#include "data/tokenizers/gpt2_codec.h"
#include "experiments/tasks/classification_options.h"
#include "data/encoding/roberta_encoding.h"
#include "experiments/tasks/sequence_classification.h"
#include "experiments/tasks/task_factory.h"

namespace tn {

std::shared_ptr<const TaskOptions> sentence_prediction_options(const JsonSection& section) {
  return resolve_classification_options(section, ClassificationOptions{});
}

std::unique_ptr<Task> make_sentence_prediction(const ExperimentSpec& spec, const std::string& data_root) {
  require_model(spec, "sentence_prediction", Arch::Encoder, HeadKind::Classification);
  const SentenceSource* source =
      &require_source<SentenceSource>(spec, "sentence_prediction", "labelled sentences", "a reader such as glue");
  const TokenizerSpec tok = source->text_tokenizer();
  if (tok.kind != TokenizerSpec::Kind::Gpt2)
    throw ConfigError(spec.path + ": data.reader: " + spec.data->reader() +
                      " is tokenized by symbols, not RoBERTa's BPE; use task: sequence_classification (or retrieval)");
  const int64_t max_positions = spec.data->tokens_per_sample();
  if (spec.model.positional == Positional::Learned && max_positions > spec.model.max_positions)
    throw ConfigError(spec.path + ": data.max_positions: " + std::to_string(max_positions) +
                      " exceeds model.max_positions " + std::to_string(spec.model.max_positions) +
                      "; lower data.max_positions or raise model.max_positions");
  const Gpt2Codec codec = Gpt2Codec::load(data_path(data_root, tok.bpe_dir), data_path(data_root, tok.dict));
  EncodedData data;
  data.splits = encode_roberta(source->read_sentences(data_root), codec, max_positions);
  data.vocabulary = codec.dict.symbols();
  data.pad = codec.dict.pad();
  data.dataset = sentence_dataset_info(*source);
  if (data.splits.empty() || data.splits.front().role != SentenceSplit::Role::Train || data.splits.front().size() == 0)
    throw ConfigError(spec.path + ": data.train: sentence_prediction trains on a labelled train split; give data.train");
  return make_classification_task(spec, std::move(data));
}

}  // namespace tn
