// The classification core on LRA-shaped inputs: the dual-encoder batch layout by hand, the symbol
// encoding (truncation to max_length - 1 plus <eos>, the vocabulary from train, <unk>), and the
// logits of a BatchNorm model (BatchNorm in the blocks and inside the attention, training mode, so
// batch statistics) unchanged when a batch is padded further, for mean and last pooling.
#include <doctest/doctest.h>

#include <cmath>

#include "core/error.h"
#include "experiments/tasks/sequence_classification.h"
#include "data/encoding/symbol_encoding.h"
#include "layers/models/transnormer.h"
#include "tests/layers/small_model.h"

using namespace tn;

namespace {

SentenceSplit split_of(std::vector<std::pair<std::string, int32_t>> rows, SentenceSplit::Role role, bool pairs = false) {
  SentenceSplit s;
  s.name = role == SentenceSplit::Role::Train ? "train" : "test";
  s.role = role;
  s.file = s.name + ".tsv";
  int64_t line = 1;
  for (auto& [text, label] : rows) {
    SentenceExample e;
    e.a = text;
    if (pairs) {
      e.b = text + "!";
      e.has_b = true;
    }
    e.label = label;
    e.id = std::to_string(line);
    e.line = ++line;
    s.rows.push_back(e);
  }
  return s;
}

ModelConfig batchnorm_model(Pooling pooling) {
  ModelConfig c = test::small_model_config(
      {.arch = Arch::Encoder, .vocab_size = 12, .d_model = 8, .layers = {MixerKind::Diag, MixerKind::NormAttention}});
  c.attention.diag = {.block_size = 4, .inner = DiagInner::Relu, .norm = NormKind::BatchNorm};
  c.attention.norm_attention = {.kernel = Kernel::Elu, .norm = NormKind::BatchNorm};
  c.norm = NormKind::BatchNorm;
  c.relative = Relative::None;
  c.channel_mixer = {.type = ChannelMixerKind::FFN, .d_ff = 16, .activation = Activation::GELU};
  c.head = HeadKind::Classification;
  c.pooling = pooling;
  c.num_classes = 3;
  return c;
}

}  // namespace

TEST_CASE("symbol encoding: cut to max_length - 1, <eos> appended, vocabulary from train, <unk>") {
  TokenizerSpec chars;
  chars.kind = TokenizerSpec::Kind::Char;
  const EncodedData d = encode_symbols(
      {split_of({{"abca", 0}, {"bb", 1}}, SentenceSplit::Role::Train), split_of({{"abz", 1}}, SentenceSplit::Role::Test)},
      chars, 4);
  // train symbols after the cut to 3: "abc" and "bb": b 3, a 1, c 1 -> b, a, c.
  CHECK(d.vocabulary == std::vector<std::string>{"<pad>", "<unk>", "<eos>", "b", "a", "c"});
  CHECK(d.splits[0].inputs[0] == std::vector<int32_t>{4, 3, 5, 2});  // a b c <eos>: the last a is cut
  CHECK(d.splits[0].truncated == 1);
  CHECK(d.splits[0].source_lengths == std::vector<int64_t>{4, 2});
  CHECK(d.splits[1].inputs[0] == std::vector<int32_t>{4, 3, 1, 2});  // z is <unk>
  CHECK(d.splits[1].unknown == 1);
  CHECK(d.splits[1].symbols == 3);
}

TEST_CASE("sequence batch: a dual batch holds the first documents, then the second ones, padded to one length") {
  TokenizerSpec chars;
  chars.kind = TokenizerSpec::Kind::Char;
  const EncodedData d = encode_symbols({split_of({{"ab", 1}, {"a", 0}}, SentenceSplit::Role::Train, true)}, chars, 10);
  const LabelledSequences& s = d.splits[0];
  REQUIRE(s.dual());
  CHECK(s.lengths == std::vector<int64_t>{4, 3});  // "ab!" + <eos> is the longer document
  SequenceBatch b;
  make_sequence_batch(s, {1, 0}, false, 0, b);
  CHECK(b.rows == 2);
  CHECK(b.seq_len == 4);
  // train symbols: a 4, b 2, ! 2 (ties in code-point order: ! before b).
  REQUIRE(d.vocabulary == std::vector<std::string>{"<pad>", "<unk>", "<eos>", "a", "!", "b"});
  const int32_t a = 3, bang = 4, bb = 5;
  // rows: "a"+eos, "ab"+eos, then "a!"+eos, "ab!"+eos.
  CHECK(b.inputs == std::vector<int32_t>{a, 2, 0, 0, a, bb, 2, 0, a, bang, 2, 0, a, bb, bang, 2});
  CHECK(b.key_valid == std::vector<uint8_t>{1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1});
  CHECK(b.labels == std::vector<int32_t>{0, 1});
  CHECK(b.tokens == 12);
  CHECK_THROWS_AS(make_sequence_batch(s, {2}, false, 0, b), ShapeError);
}

TEST_CASE("sequence logits: BatchNorm in training mode, mean and last pooling, padding changes nothing") {
  for (Pooling pooling : {Pooling::Mean, Pooling::Last}) {
    CAPTURE(static_cast<int>(pooling));
    TransNormerModel model(batchnorm_model(pooling), 7);
    LabelledSequences s;
    s.inputs = {{3, 4, 5, 6, 7, 2}, {8, 9, 2}, {10, 11, 3, 2}};
    s.lengths = {6, 3, 4};
    s.labels = {0, 1, 2};
    s.targets = {NAN, NAN, NAN};
    SequenceBatch tight, loose;
    make_sequence_batch(s, {0, 1, 2}, false, 0, tight);
    s.lengths[2] = 9;  // pads the batch to 9 positions instead of 6
    make_sequence_batch(s, {0, 1, 2}, false, 0, loose);
    REQUIRE(loose.seq_len == 9);
    Tape tape;
    Rng rng(0);
    ForwardContext ctx{tape, true, rng, nullptr};
    const Tensor a = sequence_logits(ctx, model, tight)->value.clone();
    const Tensor b = sequence_logits(ctx, model, loose)->value.clone();
    for (int64_t i = 0; i < 9; ++i) CHECK(b.data()[i] == doctest::Approx(a.data()[i]).epsilon(1e-4));
  }
}
