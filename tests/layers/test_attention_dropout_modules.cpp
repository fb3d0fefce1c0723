// Attention dropout through the DiagAttention and SoftmaxAttention modules
// (model.attention_dropout, nn.Dropout on the probabilities as in the reference): active in training only, one mask key drawn from ctx.rng per
// forward, gradients consistent with the mask (finite differences with the key held fixed).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <memory>

#include "core/runtime/autograd/grad_check.h"
#include "layers/attention/diag_attention.h"
#include "layers/attention/softmax_attention.h"
#include "tests/layers/small_model.h"

using namespace tn;

namespace {

ModelConfig dropout_config(double attention_dropout) {
  ModelConfig c = test::small_model_config({.vocab_size = 50, .n_layers = 1, .layers = {MixerKind::Diag}});
  c.attention_dropout = attention_dropout;
  return c;
}

Tensor randn(const Shape& shape, Rng& rng) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(rng.normal());
  return t;
}

struct Mixer {
  std::string name;
  std::function<std::unique_ptr<TokenMixer>(const ModelConfig&, ParamStore&)> make;
};

std::vector<Mixer> mixers() {
  std::vector<Mixer> all;
  for (DiagInner inner : {DiagInner::Relu, DiagInner::Softmax})
    all.push_back({inner == DiagInner::Relu ? "diag relu" : "diag softmax",
                   [inner](const ModelConfig& c, ParamStore& store) {
                     DiagOptions options;
                     options.block_size = 4;
                     options.inner = inner;
                     options.norm = NormKind::None;
                     Rng rng(7);
                     return std::unique_ptr<TokenMixer>(
                         new DiagAttention(c, options, store, "m", rng));
                   }});
  for (Arch arch : {Arch::Decoder, Arch::Encoder})
    all.push_back({arch == Arch::Decoder ? "softmax decoder" : "softmax encoder",
                   [arch](const ModelConfig& c0, ParamStore& store) {
                     ModelConfig c = c0;
                     c.arch = arch;
                     Rng rng(8);
                     return std::unique_ptr<TokenMixer>(new SoftmaxAttention(c, store, "m", rng));
                   }});
  return all;
}

Tensor run(TokenMixer& mixer, const Var& x, bool training, Rng& rng) {
  Tape tape;
  tape.set_enabled(false);
  ForwardContext ctx{tape, training, rng, nullptr};
  return mixer.forward(ctx, x)->value.clone();
}

bool equal(const Tensor& a, const Tensor& b) {
  if (a.numel() != b.numel()) return false;
  for (int64_t i = 0; i < a.numel(); ++i)
    if (a.data()[i] != b.data()[i]) return false;
  return true;
}

}  // namespace

TEST_CASE("attention dropout modules: training only, one key per forward, eval unchanged") {
  for (const Mixer& m : mixers()) {
    INFO(m.name);
    ParamStore store, store0;
    auto mixer = m.make(dropout_config(0.3), store);
    auto plain = m.make(dropout_config(0.0), store0);  // same seeds: same weights
    Rng data_rng(3);
    const Var x = make_var(randn({2, 11, 16}, data_rng));

    Rng eval_rng(1), eval_rng0(1);
    const Tensor eval = run(*mixer, x, false, eval_rng);
    CHECK(equal(eval, run(*plain, x, false, eval_rng0)));
    CHECK(eval_rng.next_u64() == Rng(1).next_u64());  // eval draws nothing

    Rng train_rng(1);
    const Tensor train = run(*mixer, x, true, train_rng);  // used to throw ConfigError
    CHECK(!equal(train, eval));
    Rng expected(1);
    expected.key();
    CHECK(train_rng.next_u64() == expected.next_u64());  // exactly one key drawn
    Rng again(1);
    CHECK(equal(run(*mixer, x, true, again), train));  // same rng state: same mask
    Rng other(2);
    CHECK(!equal(run(*mixer, x, true, other), train));
    // Without attention dropout, training is eval and draws nothing.
    Rng plain_rng(1);
    CHECK(equal(run(*plain, x, true, plain_rng), eval));
    CHECK(plain_rng.next_u64() == Rng(1).next_u64());
  }
}

TEST_CASE("attention dropout modules: FD gradients in training with the mask key held fixed") {
  for (const Mixer& m : mixers()) {
    INFO(m.name);
    ParamStore store;
    auto mixer = m.make(dropout_config(0.3), store);
    Rng rng(11);
    Var x = make_var(randn({1, 9, 16}, rng), true);
    const Tensor r = randn({1, 9, 16}, rng);
    const bool relu = m.name == "diag relu";
    std::vector<Var> inputs = {x};
    for (const auto& [name, var] : store.parameters())  // theta moves every relu score at once
      if (!relu || name.find("urpe.theta") == std::string::npos) inputs.push_back(var);
    const double eps = relu ? 1e-3 : 1e-2;  // stay off ReLU's kink (test_attention_modules.cpp)
    auto res = grad_check(
        [&](Tape& tape) {
          Rng dropout_rng(5);  // the same key on every call: the same mask
          ForwardContext ctx{tape, true, dropout_rng, nullptr};
          return weighted_sum(tape, mixer->forward(ctx, x), r);
        },
        inputs, eps, 12, 5e-2);
    INFO(res.worst);
    CHECK(res.max_rel_error < (eps < 1e-2 ? 8e-2 : 3e-2));
  }
}
