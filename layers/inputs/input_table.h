#pragma once
// How a model reads its inputs (model.input.kind), one entry each (docs/model.md §1):
//   tokens  a learned embedding [vocab_size, d_model] (× √d_model when embed_scale), shared with
//           the output head when tie_embeddings: the language models, GLUE, ListOps, Text
//   linear  real values through Linear(1 → d_model): LRA Image and Pathfinder (the official LRA
//           encoder). The ids are levels 0..vocab_size−1 (a grayscale byte), each mapped to the
//           value (level − mean) / std of model.input before the projection.
// Either way the positions are then added as the model's `positional` says.
//
// Adding an input kind: its InputKind value (and options in InputOptions) in
// layers/config/model_config.h, a module and an entry beside it (layers/inputs/<kind>_input.cpp), and its
// line in input_table.cpp (an input kept outside the library: add_input below); the config reader and writer, the model, the parameter and FLOP counts
// and the memory estimate pick it up from here.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/runtime/rng.h"
#include "layers/config/model_config.h"
#include "layers/module/module.h"
#include "layers/module/param_store.h"

namespace tn {

/// An input module: ids in, vectors out.
class InputModule {
 public:
  virtual ~InputModule() = default;
  /// [batch, seq_len, d_model] from batch·seq_len ids (row-major), times `scale`. Throws
  /// ShapeError naming the id when one is outside [0, vocab_size).
  virtual Var forward(ForwardContext& ctx, const std::vector<int32_t>& ids, int64_t batch, int64_t seq_len,
                      float scale) = 0;
  /// The matrix [vocab_size, d_model] a tied output head shares; null when the kind has none.
  virtual Var tied_weight() const = 0;
};

struct InputEntry {
  InputKind kind;
  std::string_view name;         // model.input.kind
  std::string_view description;  // one line, for errors and docs
  /// Builds the module, registering its parameters in `store` (checkpoint names fixed per kind).
  std::unique_ptr<InputModule> (*make)(const ModelConfig& config, ParamStore& store, Rng& rng);
  /// Its parameter count.
  double (*parameters)(const ModelConfig& config);
  /// Its forward FLOPs for `positions` positions (0 for a table lookup).
  double (*flops)(const ModelConfig& config, double positions);
  /// Whether a tied output head can share its weight (tie_embeddings with an lm or mlm head).
  bool can_tie;
  /// Whether the ids are levels of a pixel (0..vocab_size−1), which only an image reader yields;
  /// false: token ids from a tokenizer.
  bool reads_levels = false;
};

/// Every input kind, tokens first, then those add_input added.
const std::vector<InputEntry>& input_table();

/// The InputKind values add_input hands out start here; the enum's own stay below.
constexpr int kFirstAddedInputKind = 1000;

/// Adds an input kind that lives outside this library (a program's own, or the test suite's
/// walkthrough example, tests/layers/walkthroughs/) after the table's, and returns the InputKind
/// it is given (entry.kind is ignored). Call it before any config is read (a static initialiser
/// will do), from one thread; the strings must outlive the process. Throws std::invalid_argument
/// for a name already in the table.
InputKind add_input(InputEntry entry);
/// The entry of `kind`. Throws ShapeError for a kind without one.
const InputEntry& input_entry(InputKind kind);

/// The entries (layers/inputs/<kind>_input.cpp).
InputEntry token_input_entry();
InputEntry linear_input_entry();

}  // namespace tn
