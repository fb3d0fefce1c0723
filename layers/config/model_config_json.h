#pragma once
// ModelConfig <-> JSON, key for key the reference's resolved `model:` dictionary
// (the PyTorch reference's resolve_config, MODEL_DEFAULTS, ATTENTION_DEFAULTS; the golden
// fixtures' case.json holds examples, tests/golden/README.md). Checkpoints store this JSON in
// `__metadata__["transnormer.config"]`, so a model written by either side loads in the other.
// Reads through the checked JSON reader of core/platform/config/json_section.h. The `attention` section is
// read and written by the mixer table (layers/attention/mixer_table.h), one entry per mixer.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/platform/config/json_section.h"
#include "core/error.h"
#include "layers/config/model_config.h"

namespace tn {

/// The resolved model section as the reference stores it in checkpoints
/// (__metadata__["transnormer.config"]): same keys, same spellings, same nesting
/// (attention.{softmax,linear,norm_attention,diag,performer,cosformer}, channel_mixer{type,d_ff,
/// activation}, layers as an explicit list, head, pooling, ...), so the reference's
/// resolve_config accepts it unchanged. Integers are JSON integers, real-valued options
/// (eps, dropout) JSON floats, exactly as the reference writes them. vocab_size is written as
/// is (0 when not yet known). attention.linear.normalize is "scaling" or the norm's name.
nlohmann::json model_config_to_json(const ModelConfig& config);

/// Parses and validates a model section given as JSON (a checkpoint's config, or a partially
/// specified one: missing keys take the reference defaults; a whole spec with a `model:` object
/// is accepted too, as resolve_config does). vocab_size is required. Unknown keys are logged as
/// warnings and ignored, as the reference keeps them (only an unknown mixer name under
/// `attention` is an error). Throws ConfigError naming `where` (e.g. the checkpoint path) and the
/// key, e.g. "ckpt.safetensors: model.d_model: 100 is not divisible by n_heads=3; <fix>".
ModelConfig model_config_from_json(const nlohmann::json& model, const std::string& where);

struct ModelJsonOptions {
  /// Unknown keys: false = warn and ignore (the reference's behaviour, for checkpoints);
  /// true = ConfigIssue with the nearest valid key (specs written by hand).
  bool strict_keys = false;
  /// false: a missing or null vocab_size resolves to 0, to be filled from the data's vocabulary.
  bool require_vocab_size = true;
  /// Prefix of the key paths in issues.
  std::string path = "model";
};

/// Resolves and validates a model section (a JSON object, or null = all defaults) exactly as
/// the reference's resolve_config does, plus range checks the reference leaves to PyTorch
/// (sizes >= 1, dropout in [0, 1), eps > 0) and `batchnorm` as a norm name (a future feature;
/// the reference has none). Throws ConfigIssue (no location prefix).
ModelConfig resolve_model_json(const nlohmann::json& model, const ModelJsonOptions& options);

}  // namespace tn
