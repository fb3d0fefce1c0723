// Absolute positions (layers/positional/sinusoidal.h): the official LRA encoder's interleaved table
// by hand, the fixed tables a decoder steps through, and the dropout after the embedding and
// positions (model.positional_dropout: its default, its JSON key, and that training applies it).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "layers/config/model_config_json.h"
#include "layers/models/transnormer.h"
#include "layers/positional/sinusoidal.h"
#include "tests/layers/small_model.h"

using namespace tn;

TEST_CASE("positions: the interleaved LRA table, by hand") {
  // d = 4: ω = (1, 10000^(-2/4) = 0.01); row p = [sin p, cos p, sin 0.01p, cos 0.01p], p from 0.
  const Tensor t = interleaved_sinusoidal_table(3, 4);
  REQUIRE(t.shape() == Shape{3, 4});
  const float* r = t.data();
  for (int p = 0; p < 3; ++p) {
    CHECK(r[p * 4 + 0] == doctest::Approx(std::sin(p)).epsilon(1e-7));
    CHECK(r[p * 4 + 1] == doctest::Approx(std::cos(p)).epsilon(1e-7));
    CHECK(r[p * 4 + 2] == doctest::Approx(std::sin(0.01 * p)).epsilon(1e-7));
    CHECK(r[p * 4 + 3] == doctest::Approx(std::cos(0.01 * p)).epsilon(1e-7));
  }
  // An odd width ends with a sine column: d = 3, ω = (1, 10000^(-2/3)).
  const Tensor odd = interleaved_sinusoidal_table(2, 3);
  CHECK(odd.data()[3 + 2] == doctest::Approx(std::sin(std::pow(10000.0, -2.0 / 3.0))).epsilon(1e-7));
}

TEST_CASE("positions: a fixed table's rows from a first position are the whole table's rows") {
  for (Positional kind : {Positional::Sinusoidal, Positional::SinusoidalInterleaved}) {
    INFO(to_string(kind));
    const Tensor whole = fixed_position_table(kind, 9, 6);
    const Tensor tail = fixed_position_table(kind, 4, 6, 5);
    for (int64_t i = 0; i < 4 * 6; ++i) CHECK(tail.data()[i] == whole.data()[5 * 6 + i]);
  }
  // fairseq's table puts token 0 at position 2 (its padding offset).
  const Tensor fairseq = fixed_position_table(Positional::Sinusoidal, 1, 6);
  const Tensor direct = sinusoidal_table(1, 6, 2);
  for (int64_t i = 0; i < 6; ++i) CHECK(fairseq.data()[i] == direct.data()[i]);
  CHECK_THROWS(fixed_position_table(Positional::Learned, 1, 6));
}

namespace {
ModelConfig small_encoder() {
  ModelConfig c = test::small_model_config(
      {.arch = Arch::Encoder, .vocab_size = 20, .d_model = 8, .n_layers = 1, .layers = {MixerKind::NormAttention}});
  c.positional = Positional::SinusoidalInterleaved;
  return c;
}

std::vector<float> hidden(TransNormerModel& model, bool training) {
  Tape tape;
  Rng rng(5);
  ForwardContext ctx{tape, training, rng, nullptr};
  const Var h = model.forward(ctx, {1, 2, 3, 4, 5, 6}, 1, 6);
  return {h->value.data(), h->value.data() + h->value.numel()};
}
}  // namespace

TEST_CASE("positional_dropout: defaults to dropout, is written only when given, and acts in training") {
  ModelConfig c = small_encoder();
  CHECK(c.embedding_dropout() == 0.0);
  c.dropout = 0.3;
  CHECK(c.embedding_dropout() == 0.3);
  CHECK(!model_config_to_json(c).contains("positional_dropout"));  // the reference's keys, unchanged
  c.positional_dropout = 0.1;
  CHECK(c.embedding_dropout() == 0.1);
  const nlohmann::json j = model_config_to_json(c);
  CHECK(j.at("positional_dropout") == 0.1);
  CHECK(model_config_from_json(j, "test") == c);

  // Every other dropout 0: a training forward equals an evaluation forward unless the
  // positional dropout is on.
  ModelConfig off = small_encoder();
  TransNormerModel quiet(off, 3);
  CHECK(hidden(quiet, true) == hidden(quiet, false));
  ModelConfig on = small_encoder();
  on.positional_dropout = 0.5;
  TransNormerModel noisy(on, 3);
  CHECK(hidden(noisy, true) != hidden(noisy, false));
  CHECK(hidden(noisy, false) == hidden(quiet, false));  // same seed, same weights: evaluation ignores it
}
