#pragma once
// The largest value each size of the model section may take (listed in docs/cli/spec.md, "Limits"),
// checked where the section is read (layers/config/model_config_json.cpp, the mixers' option readers)
// with the usual `key: problem; fix` message. They keep every size computed from a config inside
// 64 bits (a product of two widths below 2^60 elements) and each value below what any run here can
// use; whether a model that fits them also fits in memory is the memory check's question
// (experiments/runner/memory_check.h) and, for a checkpoint, parameter_floor's.
#include <cstdint>
#include <limits>

namespace tn {

/// d_model, channel_mixer.d_ff, attention.performer.features, num_classes: 2^30 (1,073,741,824).
inline constexpr int64_t kMaxModelWidth = int64_t{1} << 30;
/// max_positions and attention.diag.block_size: 2^20 (1,048,576) positions, 64 times LRA's longest
/// sequence (Path-X, 16,384).
inline constexpr int64_t kMaxModelPositions = int64_t{1} << 20;
/// n_layers: 4,096 (the paper's deepest model has 24).
inline constexpr int64_t kMaxModelLayers = 4096;
/// vocab_size: token ids are int32.
inline constexpr int64_t kMaxVocabSize = std::numeric_limits<int32_t>::max();

}  // namespace tn
