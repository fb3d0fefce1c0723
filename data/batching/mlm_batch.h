#pragma once
// A masked-LM batch: samples (data/batching/complete_samples.h) padded to the longest of the
// batch, each corrupted by its own mask (data/batching/mlm_masking.h), with the padding mask and
// the scored positions listed for the head.
#include <cstdint>
#include <vector>

#include "data/batching/complete_samples.h"
#include "data/batching/mlm_masking.h"

namespace tn {

struct MlmBatch {
  int64_t rows = 0, seq_len = 0;
  std::vector<int32_t> inputs;       // [rows · seq_len], corrupted, padded with `pad`
  std::vector<uint8_t> key_valid;    // [rows · seq_len], 1 = a sample's token, 0 = padding
  std::vector<int64_t> masked_rows;  // flattened positions r · seq_len + t of the selected tokens
  std::vector<int32_t> masked_targets;  // their original ids, one per masked row
  int64_t n_targets() const { return static_cast<int64_t>(masked_rows.size()); }
};

/// Fills `batch` (its vectors keep their memory) with the samples `ids`, sample i masked with
/// key mlm_mask_key(seed, epoch, ids[i]) and at least one selected position. Throws ShapeError
/// for an empty `ids` or an id outside the samples.
void make_mlm_batch(const PackedSamples& samples, const std::vector<int64_t>& ids, const MlmMasking& masking,
                    uint64_t seed, uint64_t epoch, int32_t pad, MlmBatch& batch);

}  // namespace tn
