#pragma once
// Typed `model:` section of a spec, fully resolved: every default of the PyTorch reference's
// resolve_config filled in (docs/attention.md lists them per mixer). experiments/spec/spec fills it
// from YAML; layers/config/model_config_json converts it to and from the JSON stored in checkpoints
// (`__metadata__["transnormer.config"]`), key for key the reference's resolved dictionary.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tn {

enum class Arch { Decoder, Encoder };
/// Token mixers (docs/model.md §6–8): vanilla softmax, kernel linear attention, NormAttention,
/// DiagAttention, Performer (FAVOR+), cosFormer, and DiagAttention + NormAttention in parallel
/// (the paper's Table 12). Each has one entry in the mixer table (layers/attention/mixer_table.h:
/// name, options, module, FLOPs, decoding); its options struct, if it has options, is its member
/// of AttentionOptions below.
enum class MixerKind { Softmax, Linear, NormAttention, Diag, Performer, Cosformer, DiagNormParallel };
/// Feature map φ (docs/model.md §6): T1 uses elu, T2 1+elu.
enum class Kernel { OnePlusElu, Elu, Relu };
enum class NormKind { None, LayerNorm, RMSNorm, SRMSNorm, BatchNorm };
enum class Activation { SiLU, GELU, ReLU, Identity };
enum class ChannelMixerKind { GLU, FFN };
/// Absolute positions (docs/model.md §1): fairseq's sinusoidal table, the official LRA encoder's
/// interleaved one, learned rows, or none.
enum class Positional { Sinusoidal, Learned, None, SinusoidalInterleaved };
enum class Relative { URPE, RoPE, None };
/// Output heads: lm (h Eᵀ), mlm (RoBERTa LM head), classification (pooled, one sequence), retrieval
/// (the LRA retrieval dual encoder, docs/model.md §10: two sequences through one encoder, mean-pooled,
/// [a, b, a⊙b, a−b] → Linear(4d, d) + GELU → Linear(d, num_classes)).
enum class HeadKind { LM, MLM, Classification, Retrieval };
enum class Pooling { Mean, Cls, Last };
/// What the classification head does after pooling (docs/model.md §10): dense_tanh is RoBERTa's
/// (dropout, Linear(d, d), tanh, dropout, Linear(d, classes); fairseq's GLUE head), linear the
/// official LRA decoder's single Linear(d, classes) (OpenNLPLab/lra SequenceDecoder).
enum class Classifier { DenseTanh, Linear };
/// How the model reads its ids (layers/inputs/input_table.h): a token embedding, or levels mapped
/// to values through Linear(1 → d_model) (LRA's image tasks).
enum class InputKind { Tokens, Linear };
enum class DiagInner { Relu, Softmax };

struct LinearOptions {
  Kernel kernel = Kernel::OnePlusElu;
  bool scaling = true;              // normalize: scaling (row-sum denominator) ...
  NormKind norm = NormKind::None;   // ... or a norm over d after the product (when !scaling)
  double eps = 1e-6;                // denominator clamp for scaling
  bool operator==(const LinearOptions&) const = default;
};
struct NormAttentionOptions {
  Kernel kernel = Kernel::Elu;
  NormKind norm = NormKind::SRMSNorm;
  bool operator==(const NormAttentionOptions&) const = default;
};
struct DiagOptions {
  int64_t block_size = 64;
  DiagInner inner = DiagInner::Relu;
  NormKind norm = NormKind::SRMSNorm;
  int64_t n_heads = 0;  // its own head count (the official LRA Image and Retrieval: 4); 0: the model's
  bool operator==(const DiagOptions&) const = default;
};
struct PerformerOptions {
  int64_t features = 64;
  double eps = 1e-2;
  double feature_eps = 1e-4;
  bool operator==(const PerformerOptions&) const = default;
};
struct CosformerOptions {
  double eps = 1e-4;
  bool out_proj = true;
  bool operator==(const CosformerOptions&) const = default;
};
struct AttentionOptions {
  LinearOptions linear;
  NormAttentionOptions norm_attention;
  DiagOptions diag;
  PerformerOptions performer;
  CosformerOptions cosformer;
  bool operator==(const AttentionOptions&) const = default;
};
struct ChannelMixerOptions {
  ChannelMixerKind type = ChannelMixerKind::GLU;
  int64_t d_ff = 0;  // resolved: int(8 d / 3) for glu, 4 d for ffn
  Activation activation = Activation::SiLU;
  bool operator==(const ChannelMixerOptions&) const = default;
};

struct InputOptions {
  InputKind kind = InputKind::Tokens;
  double mean = 0.0;  // linear: value = (level − mean) / std
  double std = 1.0;
  bool operator==(const InputOptions&) const = default;
};

struct ModelConfig {
  Arch arch = Arch::Decoder;
  int64_t vocab_size = 0;  // required (may be filled from the data's vocabulary)
  int64_t d_model = 512;
  int64_t n_layers = 6;
  int64_t n_heads = 8;
  int64_t max_positions = 512;
  InputOptions input;
  MixerKind token_mixer = MixerKind::NormAttention;
  int64_t diag_layers = 0;
  std::vector<MixerKind> layers;  // resolved: always n_layers entries
  AttentionOptions attention;
  ChannelMixerOptions channel_mixer;
  NormKind norm = NormKind::SRMSNorm;
  bool prenorm = true;
  bool final_norm = true;
  Positional positional = Positional::Sinusoidal;
  Relative relative = Relative::URPE;
  bool embed_scale = true;
  NormKind embed_norm = NormKind::None;
  bool tie_embeddings = true;
  double dropout = 0.1;
  /// Dropout on the input embedding plus the absolute positions, before the first layer: the
  /// official LRA encoder's positional encoder (`encoder: {_name_: position, dropout: 0.1}`).
  /// Unset, it is `dropout`, as fairseq's models apply it there (embedding_dropout()).
  std::optional<double> positional_dropout;
  double attention_dropout = 0.0;
  HeadKind head = HeadKind::LM;
  Pooling pooling = Pooling::Mean;
  Classifier classifier = Classifier::DenseTanh;  // head: classification only
  int64_t num_classes = 2;
  double pooler_dropout = 0.0;

  bool operator==(const ModelConfig&) const = default;

  int64_t d_head() const { return d_model / n_heads; }
  /// The rate applied after the input embedding and positions: positional_dropout, else dropout.
  double embedding_dropout() const { return positional_dropout.value_or(dropout); }
  bool causal() const { return arch == Arch::Decoder; }
};

/// YAML/JSON spellings of the enums, as in the reference ("1+elu", "srmsnorm", "norm_attention").
/// A mixer's is its mixer-table name ("MixerKind(7)" for a kind without an entry).
std::string to_string(MixerKind v);
std::string to_string(Kernel v);
std::string to_string(NormKind v);
std::string to_string(Activation v);
std::string to_string(Positional v);
std::string to_string(Relative v);

}  // namespace tn
