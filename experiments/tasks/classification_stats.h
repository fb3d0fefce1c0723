#pragma once
// `data stats` of a classification task's encoded splits: per split its file, examples, labels,
// lengths before and after truncation (percentiles 0, 50, 90, 99, 100), truncations, the share of
// unknown symbols, and the accuracy of always answering the training split's majority class.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

#include "data/encoding/labelled_sequences.h"

namespace tn {

/// The statistics of `splits` (train first) of the dataset `dataset`, with a vocabulary of
/// `vocab_size` ids; a regression target has no labels nor majority class.
nlohmann::ordered_json classification_statistics(const std::vector<LabelledSequences>& splits,
                                                 const DatasetInfo& dataset, int64_t vocab_size);

}  // namespace tn
