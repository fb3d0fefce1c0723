#pragma once
// The sentence_prediction task: an encoder with the classification head fine-tuned on one GLUE
// dataset (paper §3.2, Table 5), as fairseq's sentence_prediction task does it: the texts in
// RoBERTa's layout (roberta_encoding.h), then the classification core (sequence_classification.h)
// with length batching by default.
#include <memory>
#include <string>

#include "experiments/spec/spec.h"
#include "experiments/tasks/task.h"
#include "experiments/spec/task_options.h"

namespace tn {

/// The registry's factory: checks the model (arch encoder, head classification) and the reader
/// (a SentenceSource), loads the BPE and dictionary, reads and encodes the splits. Throws
/// ConfigError / DataError naming the key or file and the fix.
std::unique_ptr<Task> make_sentence_prediction(const ExperimentSpec& spec, const std::string& data_root);

/// The task's options: classification_options.h with batching by_length.
std::shared_ptr<const TaskOptions> sentence_prediction_options(const JsonSection& section);

}  // namespace tn
