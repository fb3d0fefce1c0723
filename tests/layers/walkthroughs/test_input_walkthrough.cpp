// The input walkthrough (docs/architecture.md, "Walkthroughs"), followed outside the library:
// frozen_input.cpp (the module and its entry), add_input in place of its line in input_table.cpp.
// A config names it, a model reads token ids through it, and training cannot touch it.
#include <doctest/doctest.h>

#include "core/runtime/ops/cross_entropy.h"
#include "layers/config/model_config_json.h"
#include "layers/inputs/input_table.h"
#include "layers/models/transnormer.h"
#include "tests/layers/small_model.h"

using namespace tn;

TEST_CASE("input walkthrough: a config names the example, a model reads ids through it, no gradient reaches it") {
  const InputEntry* entry = nullptr;
  for (const InputEntry& e : input_table())
    if (e.name == "frozen_tokens") entry = &e;
  REQUIRE(entry != nullptr);
  CHECK(static_cast<int>(entry->kind) >= kFirstAddedInputKind);
  CHECK(&input_table().back() == entry);

  const nlohmann::json json = {{"vocab_size", 12}, {"d_model", 8}, {"n_heads", 2}, {"n_layers", 2},
                               {"arch", "encoder"}, {"head", "classification"}, {"num_classes", 2},
                               {"input", {{"kind", "frozen_tokens"}}}};
  const ModelConfig c = model_config_from_json(json, "spec.yaml");
  CHECK(c.input.kind == entry->kind);
  CHECK(model_config_to_json(c)["input"]["kind"].get<std::string>() == "frozen_tokens");

  ModelConfig tokens = c;
  tokens.input.kind = InputKind::Tokens;
  TransNormerModel frozen(c, 1), learned(tokens, 1);
  // The same model less the learned embedding's 12 × 8 parameters; the table is a buffer.
  CHECK(frozen.params().parameter_count() == learned.params().parameter_count() - 12 * 8);
  REQUIRE(frozen.params().entries().count("embed_tokens_frozen") == 1);
  const Var table = frozen.params().entries().at("embed_tokens_frozen");
  CHECK(frozen.params().is_buffer("embed_tokens_frozen"));

  Tape tape;
  Rng rng(0);
  ForwardContext ctx{tape, true, rng, nullptr};
  const std::vector<int32_t> ids = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0};
  const Var loss = cross_entropy(tape, frozen.classify(ctx, frozen.forward(ctx, ids, 2, 6)), {0, 1}).loss;
  tape.backward(loss);
  CHECK(!table->has_grad());
  int64_t with_grad = 0;
  for (const auto& [name, var] : frozen.params().parameters()) with_grad += var->has_grad();
  CHECK(with_grad > 0);
  // Ids through the table: an id outside the vocabulary is refused, as the learned embedding does.
  Tape eval;
  ForwardContext ectx{eval, false, rng, nullptr};
  CHECK_THROWS_AS(frozen.forward(ectx, {12}, 1, 1), ShapeError);
}
