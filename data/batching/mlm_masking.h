#pragma once
// Masked-LM corruption of one sample, as RoBERTa pretrains (Devlin et al. 2019 §3.1; fairseq's
// MaskTokensDataset): a share of the positions is selected; a selected position becomes <mask>,
// a random token, or stays as it is; the loss is taken on the selected positions only.
#include <cstdint>

namespace tn {

/// The corruption's settings. Ids below `n_special` (<s>, <pad>, </s>, <unk>) are never selected;
/// random replacements are uniform over [n_special, mask_id): every dictionary symbol, but no
/// special and not <mask> itself (fairseq's weights exclude only the specials).
struct MlmMasking {
  double mask_prob = 0.15;            // share of the selectable positions selected
  double leave_unmasked_prob = 0.1;   // of the selected: kept as they are
  double random_token_prob = 0.1;     // of the selected: replaced by a random token
  int32_t mask_id = 0;                // <mask>
  int32_t n_special = 4;
};

/// The key of one sample's mask: a hash of (seed, epoch, sample index), so the same sample is
/// masked differently in each epoch and identically on a rerun or a resume. Validation uses a
/// fixed epoch (kValidMaskEpoch) for a mask that never changes.
uint64_t mlm_mask_key(uint64_t seed, uint64_t epoch, uint64_t sample);
inline constexpr uint64_t kValidMaskEpoch = ~uint64_t{0};

/// Corrupts tokens[0, n) into inputs and targets (each n entries, caller-owned). Of the m
/// selectable positions (id >= n_special), floor(mask_prob·m + u) are selected without
/// replacement (u uniform in [0, 1): fairseq's probabilistic rounding, so 15 % holds on average
/// even for short samples). Each selected position draws v uniform in [0, 1): v < leave → kept,
/// v < leave + random → a random token, else <mask>. targets[i] = tokens[i] at the selected
/// positions and kIgnoreIndex elsewhere. At least min(min_selected, m) positions are selected
/// (the masked_lm task asks for 1, so that no sample, however short, goes unscored). Returns the
/// number selected. Deterministic in `key`.
int64_t mask_sample(const MlmMasking& masking, const int32_t* tokens, int64_t n, uint64_t key, int32_t* inputs,
                    int32_t* targets, int64_t min_selected = 0);

}  // namespace tn
