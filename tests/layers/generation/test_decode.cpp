// Incremental decoding (TokenMixer::decode_step, TransNormerModel::decode_step) against the
// whole-sequence forward, for every test variant of every entry of the mixer table
// (layers/attention/mixer_table.h) by its decode form: with a recurrent state or a cache, the
// logits decoded token by token equal, at every position, the logits of forward() + token_logits()
// over the whole sequence (also for mixed T1/T2 stacks); without an incremental form
// (RecomputePrefix) the model recomputes each prefix and equals the forward over it. Recurrent
// states do not grow with the position; caches do.
//
// Tolerance: max |decoded − forward| over a position's logits ≤ kRelTol · max |forward| there.
// Both sides are float; they differ in summation order only (chunked vs recurrent sums, oneDNN
// matmul on 40 rows vs on 1 row).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>

#include "layers/persistence/checkpoint.h"
#include "layers/models/transnormer.h"
#include "layers/module/registry.h"
#include "tests/layers/mixer_test_cases.h"
#include "tests/test_paths.h"
#include "tests/layers/small_model.h"

using namespace tn;

namespace {

constexpr double kRelTol = 1e-4;

using mixer_test::MixerCase;
using mixer_test::mixer_cases;

bool incremental(const MixerEntry& entry) { return entry.decode != DecodeForm::RecomputePrefix; }
bool recomputes_prefix(const MixerEntry& entry) { return entry.decode == DecodeForm::RecomputePrefix; }

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct DecodeCase {
  std::string name;
  void (*setup)(ModelConfig&);
};

ModelConfig small_decoder() {
  return test::small_model_config({.arch = Arch::Decoder});  // max_positions: the default 512
}

/// The multi-mixer stacks; single-mixer models come from the table (mixer_test::mixer_cases).
std::vector<DecodeCase> stack_cases() {
  return {
      {"T1 stack (diag relu block 8, norm_attention elu)",
       [](ModelConfig& c) {
         c.layers = {MixerKind::Diag, MixerKind::NormAttention};
         c.attention.diag.block_size = 8;
       }},
      {"T2 stack (diag softmax block 8, norm_attention 1+elu)",
       [](ModelConfig& c) {
         c.layers = {MixerKind::Diag, MixerKind::NormAttention};
         c.attention.diag = {8, DiagInner::Softmax, NormKind::None};
         c.attention.norm_attention.kernel = Kernel::OnePlusElu;
       }},
      {"T1 stack, post-norm layernorm, learned positions, embed_norm, untied, no relative PE",
       [](ModelConfig& c) {
         c.layers = {MixerKind::Diag, MixerKind::NormAttention};
         c.attention.diag.block_size = 8;
         c.prenorm = false;
         c.final_norm = false;
         c.norm = NormKind::LayerNorm;
         c.embed_norm = NormKind::LayerNorm;
         c.positional = Positional::Learned;
         c.max_positions = 64;
         c.tie_embeddings = false;
         c.embed_scale = false;
         c.relative = Relative::None;
       }},
      {"mixed stack of every recurrent or cached mixer (4 layers)",
       [](ModelConfig& c) {
         c.n_layers = 4;
         c.layers = {MixerKind::Diag, MixerKind::Softmax, MixerKind::Performer, MixerKind::Linear};
         c.attention.diag.block_size = 8;
         c.attention.performer.features = 8;
       }},
  };
}

std::vector<int32_t> random_tokens(int64_t n, int32_t vocab, Rng& rng) {
  std::vector<int32_t> out(static_cast<size_t>(n));
  for (auto& t : out) t = 1 + static_cast<int32_t>(rng.next_u64() % static_cast<uint64_t>(vocab - 1));
  return out;
}

/// Logits [seq_len, vocab] of the whole-sequence forward, every row.
Tensor forward_logits(TransNormerModel& model, ForwardContext& ctx, const std::vector<int32_t>& tokens) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  const Var hidden = model.forward(ctx, tokens, 1, n);
  std::vector<int64_t> rows(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) rows[static_cast<size_t>(i)] = i;
  return model.token_logits(ctx, hidden, rows);
}

/// max |a − b| / max |b| over one row of `vocab` logits.
double relative_error(const float* a, const float* b, int64_t vocab) {
  double diff = 0.0, scale = 0.0;
  for (int64_t v = 0; v < vocab; ++v) {
    diff = std::max(diff, std::abs(double(a[v]) - double(b[v])));
    scale = std::max(scale, std::abs(double(b[v])));
  }
  return diff / std::max(scale, 1e-30);
}

/// Decodes `tokens` one by one and returns the worst relative error against the forward's rows.
double worst_decode_error(TransNormerModel& model, const std::vector<int32_t>& tokens) {
  Tape tape;
  tape.set_enabled(false);
  Rng rng(1);
  ForwardContext ctx{tape, false, rng, nullptr};
  const Tensor reference = forward_logits(model, ctx, tokens);
  const int64_t vocab = model.config().vocab_size;
  ModelDecodeState state = model.start_decode();
  double worst = 0.0;
  for (size_t t = 0; t < tokens.size(); ++t) {
    const Tensor logits = model.decode_step(ctx, state, tokens[t], static_cast<int64_t>(t));
    REQUIRE(logits.numel() == vocab);
    worst = std::max(worst, relative_error(logits.data(), reference.data() + t * vocab, vocab));
  }
  return worst;
}

}  // namespace

TEST_CASE("decode_step: logits at every position equal the whole-sequence forward's") {
  // Every variant of every mixer with a recurrent state or a cache, two layers of it.
  for (const MixerCase& mc : mixer_cases(incremental)) {
    TransNormerModel model(mc.apply(small_decoder()), 7);
    CHECK(model.decodes_incrementally());
    Rng rng(11);
    const std::vector<int32_t> tokens = random_tokens(40, 40, rng);
    const double worst = worst_decode_error(model, tokens);
    MESSAGE(mc.name() << ": worst relative error " << worst);
    CHECK(worst <= kRelTol);
  }
  for (const DecodeCase& dc : stack_cases()) {
    ModelConfig config = small_decoder();
    dc.setup(config);
    TransNormerModel model(config, 7);
    Rng rng(11);
    const std::vector<int32_t> tokens = random_tokens(40, 40, rng);
    const double worst = worst_decode_error(model, tokens);
    MESSAGE(dc.name << ": worst relative error " << worst);
    CHECK(worst <= kRelTol);
  }
}

TEST_CASE("decode_step on the golden decoders (reference weights): equals the forward") {
  // The PyTorch reference's weights, 200 tokens (3+ diag blocks of 64), d_model 64, 4 heads.
  for (const char* name : {"dec_t1", "dec_t2", "dec_norm_attention", "dec_diag_relu", "dec_softmax",
                           "dec_performer", "dec_linear_scaling", "dec_linear_srmsnorm"}) {
    const std::string dir = test::golden_root() + "/" + name;
    LoadedCheckpoint ckpt = load_checkpoint(dir + "/model.safetensors");
    const nlohmann::json input = nlohmann::json::parse(read_text(dir + "/input.json"));
    const std::vector<int32_t> tokens = input["tokens"][0].get<std::vector<int32_t>>();
    const double worst = worst_decode_error(*ckpt.model, tokens);
    MESSAGE(std::string(name) << ": " << tokens.size() << " tokens, worst relative error " << worst);
    CHECK(worst <= kRelTol);
  }
}

TEST_CASE("a model with a mixer without incremental form (cosformer) recomputes the prefix: equals forward on each prefix") {
  // Exact equality is not a property: both sides run forward() on the same prefix, but decode_step
  // takes the logits of the last row alone (a product of M = 1 row with the output matrix) and
  // forward_logits those of all t + 1 rows at once, and oneDNN may block a product differently for
  // different M, summing in another order (seen on AVX2: 2.9e-7 relative). 1e-5 is still 10x
  // below the incremental decoding's tolerance.
  constexpr double kPrefixRelTol = 1e-5;
  for (const MixerCase& mc : mixer_cases(recomputes_prefix)) {
    // One such layer is enough to make the whole model recompute: the second layer could decode
    // incrementally on its own.
    ModelConfig config = mc.apply(small_decoder());
    config.layers[1] = MixerKind::NormAttention;
    TransNormerModel model(config, 8);
    CHECK_FALSE(model.decodes_incrementally());
    CHECK(model.prefix_recomputing_mixers() == std::vector<std::string>{std::string(mc.entry->name)});
    Rng rng(12);
    const std::vector<int32_t> tokens = random_tokens(20, 40, rng);
    Tape tape;
    tape.set_enabled(false);
    ForwardContext ctx{tape, false, rng, nullptr};
    ModelDecodeState state = model.start_decode();
    CHECK(state.recompute_prefix);
    double worst = 0.0;
    for (size_t t = 0; t < tokens.size(); ++t) {
      const Tensor logits = model.decode_step(ctx, state, tokens[t], static_cast<int64_t>(t));
      const std::vector<int32_t> prefix(tokens.begin(), tokens.begin() + t + 1);
      const Tensor reference = forward_logits(model, ctx, prefix);
      worst = std::max(worst, relative_error(logits.data(), reference.data() + t * 40, 40));
    }
    INFO(mc.name() << ": worst relative error " << worst);
    CHECK(worst <= kPrefixRelTol);
    // The mixer itself has no incremental form.
    ParamStore store;
    Rng init(1);
    CHECK_THROWS_AS(mc.entry->make(config, store, "m", init)->start_decode(), ConfigError);
  }
}

TEST_CASE("decode states: recurrent states (NormAttention, linear, Performer, DiagAttention) do not grow, caches do") {
  Tape tape;
  tape.set_enabled(false);
  Rng rng(5);
  ForwardContext ctx{tape, false, rng, nullptr};
  for (const MixerCase& mc : mixer_cases(incremental)) {
    const ModelConfig config = mc.apply(small_decoder());  // 300 steps cross many diag block starts
    ParamStore store;
    Rng init(3);
    std::unique_ptr<TokenMixer> mixer = mc.entry->make(config, store, "m", init);
    std::unique_ptr<DecodeState> state = mixer->start_decode();
    const int64_t empty = state->size_bytes();
    int64_t after_10 = 0;
    for (int64_t t = 0; t < 300; ++t) {
      Tensor row = Tensor::empty({1, 1, 16});
      for (int64_t i = 0; i < 16; ++i) row.data()[i] = static_cast<float>(rng.normal());
      const Var y = mixer->decode_step(ctx, *state, make_var(std::move(row)), t);
      REQUIRE(y->value.shape() == Shape{1, 1, 16});
      if (t == 9) after_10 = state->size_bytes();
    }
    const int64_t after_300 = state->size_bytes();
    INFO(mc.name() << ": " << empty << " bytes empty, " << after_10 << " after 10, " << after_300
                   << " after 300");
    CHECK(state->next_position() == 300);
    if (mc.entry->decode == DecodeForm::RecurrentState) {
      CHECK(after_10 == empty);
      CHECK(after_300 == after_10);
    } else {
      CHECK(after_300 > after_10);
    }
  }
  // The T1 state: n_heads · d_head² (+ nothing else) for NormAttention, block_size rows for Diag.
  ModelConfig t1 = small_decoder();
  t1.layers = {MixerKind::Diag, MixerKind::NormAttention};
  t1.attention.diag.block_size = 8;
  TransNormerModel model(t1, 2);
  ModelDecodeState state = model.start_decode();
  int64_t after_10 = 0;
  for (int64_t t = 0; t < 300; ++t) {
    model.decode_step(ctx, state, static_cast<int32_t>(3 + t % 30), t);
    if (t == 9) after_10 = state.size_bytes();
  }
  CHECK(state.size_bytes() == after_10);
}

TEST_CASE("decoding refuses what it cannot do") {
  Tape tape;
  tape.set_enabled(false);
  Rng rng(1);
  ForwardContext ctx{tape, false, rng, nullptr};
  ModelConfig config = small_decoder();
  config.layers = {MixerKind::Diag, MixerKind::NormAttention};
  TransNormerModel model(config, 1);
  ModelDecodeState state = model.start_decode();
  model.decode_step(ctx, state, 5, 0);
  CHECK_THROWS_AS(model.decode_step(ctx, state, 5, 2), ShapeError);   // position out of order
  CHECK_THROWS_AS(model.decode_step(ctx, state, 40, 1), ShapeError);  // token outside the vocab
  Tape recording;  // enabled: decoding would record a backward per step
  ForwardContext recording_ctx{recording, false, rng, nullptr};
  CHECK_THROWS_AS(model.decode_step(recording_ctx, state, 5, 1), ShapeError);

  ModelConfig encoder = config;
  encoder.arch = Arch::Encoder;
  CHECK_THROWS_AS(TransNormerModel(encoder, 1).start_decode(), ConfigError);
  ModelConfig mlm = config;
  mlm.head = HeadKind::MLM;
  CHECK_THROWS_AS(TransNormerModel(mlm, 1).start_decode(), ConfigError);

  ModelConfig learned = config;
  learned.positional = Positional::Learned;
  learned.max_positions = 3;
  TransNormerModel short_model(learned, 1);
  ModelDecodeState short_state = short_model.start_decode();
  for (int64_t t = 0; t < 3; ++t) short_model.decode_step(ctx, short_state, 4, t);
  CHECK_THROWS_AS(short_model.decode_step(ctx, short_state, 4, 3), ConfigError);

  // A mixer's state belongs to that kind of mixer.
  ParamStore store;
  Rng init(1);
  auto diag = make_token_mixer(config, MixerKind::Diag, store, "a", init);
  auto norm = make_token_mixer(config, MixerKind::NormAttention, store, "b", init);
  auto diag_state = diag->start_decode();
  CHECK_THROWS_AS(norm->decode_step(ctx, *diag_state, make_var(Tensor::zeros({1, 1, 16})), 0),
                  ShapeError);
  CHECK_THROWS_AS(diag->decode_step(ctx, *diag_state, make_var(Tensor::zeros({1, 2, 16})), 0),
                  ShapeError);
}
