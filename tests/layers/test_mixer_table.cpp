// The mixer table itself (layers/attention/mixer_table.h): every entry is complete (a unique name
// and kind, every function, at least one test variant, finite-difference probes or the reason for
// having none), lookups by name and kind agree, each variant's options survive to_json → resolve
// (alone and inside a whole model config), the FLOP formulas give the hand-computed counts, and
// a kind without an entry is an error that names it.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "core/error.h"
#include "layers/attention/mixer_table.h"
#include "layers/config/model_config_json.h"
#include "layers/module/registry.h"
#include "tests/layers/mixer_test_cases.h"
#include "tests/layers/small_model.h"

using namespace tn;

namespace {

ModelConfig small_config() {
  return test::small_model_config({.dropout = ModelConfig{}.dropout});
}

}  // namespace

TEST_CASE("mixer table: every entry is complete, with a unique name and kind and at least one variant") {
  REQUIRE_FALSE(mixer_table().empty());
  std::set<std::string_view> names;
  std::set<MixerKind> kinds;
  for (const MixerEntry& entry : mixer_table()) {
    INFO(entry.name);
    CHECK_FALSE(entry.name.empty());
    CHECK(names.insert(entry.name).second);
    CHECK(kinds.insert(entry.kind).second);
    CHECK((entry.resolve != nullptr));
    CHECK((entry.to_json != nullptr));
    CHECK((entry.make != nullptr));
    CHECK((entry.core_flops != nullptr));
    CHECK((entry.projection_flops != nullptr));
    CHECK_FALSE(entry.test_variants.empty());
    std::set<std::string_view> variant_names;
    bool probed = false;
    for (const MixerVariant& variant : entry.test_variants) {
      INFO(variant.name);
      CHECK(variant_names.insert(variant.name).second);
      CHECK((variant.setup != nullptr));
      CHECK(variant.probe_size >= 2);  // lengths C−1 and 3C+5 stay distinct and positive
      probed |= !variant.grad_probes.empty();
      for (const GradProbe& probe : variant.grad_probes) {
        CHECK(probe.batch >= 1);
        CHECK(probe.seq_len >= 1);
        CHECK(probe.eps > 0.0);
      }
    }
    // Finite differences check every mixer's gradients unless the entry says why they cannot.
    CHECK(probed == entry.no_grad_probes_because.empty());
  }
}

TEST_CASE("mixer table: the reference's order, and lookups by name and kind agree with the table") {
  // The library's mixers in the reference's order; those add_mixer added (this binary's
  // walkthrough example, tests/layers/walkthroughs/) come after them.
  const std::vector<std::string> names = mixer_names();
  REQUIRE(names.size() >= 7);
  CHECK(std::vector<std::string>(names.begin(), names.begin() + 7) ==
        std::vector<std::string>{"softmax", "linear", "norm_attention", "diag", "performer", "cosformer",
                                 "diag_norm_parallel"});
  for (size_t i = 7; i < names.size(); ++i)
    CHECK(static_cast<int>(mixer_table()[i].kind) >= kFirstAddedMixerKind);
  for (const MixerEntry& entry : mixer_table()) {
    CHECK(find_mixer(entry.name) == &entry);
    CHECK(find_mixer(entry.kind) == &entry);
    CHECK(&mixer_entry(entry.kind) == &entry);
    CHECK(to_string(entry.kind) == entry.name);
  }
  const NameList<MixerKind> choices = mixer_choices();
  REQUIRE(choices.size() == mixer_table().size());
  for (size_t i = 0; i < choices.size(); ++i) {
    CHECK(choices[i].first == mixer_table()[i].name);
    CHECK(choices[i].second == mixer_table()[i].kind);
  }
  CHECK(find_mixer("flash") == nullptr);
  CHECK(find_mixer("Softmax") == nullptr);
}

TEST_CASE("mixer table: every variant's options round trip through to_json and resolve") {
  for (const mixer_test::MixerCase& mc : mixer_test::mixer_cases()) {
    INFO(mc.name());
    // Reading a variant's section over its options changes nothing (every option the entry owns
    // is written and read back), and into default options gives the same section; read strictly
    // (no key the reader does not know). A variant may also set other entries' options
    // (diag_norm_parallel's branches use diag's and norm_attention's).
    const ModelConfig config = mc.apply(small_config());
    const nlohmann::json section = mc.entry->to_json(config.attention);
    const std::string where = "model.attention." + std::string(mc.entry->name);
    AttentionOptions over = config.attention;
    mc.entry->resolve(JsonSection(section, where), true, over);
    CHECK(over == config.attention);
    AttentionOptions back;
    mc.entry->resolve(JsonSection(section, where), true, back);
    CHECK(mc.entry->to_json(back) == section);
    // In a whole model config: model_config_to_json → resolve_model_json gives the same options.
    const ModelConfig reread = resolve_model_json(model_config_to_json(config), ModelJsonOptions{true});
    CHECK(reread.attention == config.attention);
    CHECK(reread.layers == config.layers);
  }
}

TEST_CASE("mixer table: an empty section gives each mixer's defaults, a stranger key is refused") {
  for (const MixerEntry& entry : mixer_table()) {
    INFO(entry.name);
    AttentionOptions options;
    options.diag.block_size = 3;  // resolve replaces the member with the section's options
    options.linear.eps = 0.5;
    options.performer.features = 5;
    options.cosformer.out_proj = false;
    options.norm_attention.kernel = Kernel::Relu;
    AttentionOptions read = options;
    entry.resolve(JsonSection(nlohmann::json::object(), "model.attention"), true, read);
    CHECK(entry.to_json(read) == entry.to_json(AttentionOptions{}));
    const nlohmann::json stranger = {{"no_such_option", 1}};
    CHECK_THROWS_AS(entry.resolve(JsonSection(stranger, "model.attention"), true, read), ConfigIssue);
  }
  // Under attention:, only mixer names; the error lists them.
  nlohmann::json model = {{"vocab_size", 10}, {"attention", {{"flash", nlohmann::json::object()}}}};
  try {
    resolve_model_json(model, ModelJsonOptions{});
    FAIL("an unknown mixer name under attention was accepted");
  } catch (const ConfigIssue& issue) {
    const std::string message = issue.what();
    INFO(message);
    CHECK(message.find("model.attention.flash") != std::string::npos);
    for (const std::string& name : mixer_names()) CHECK(message.find(name) != std::string::npos);
  }
}

TEST_CASE("mixer table: FLOP counts of every mixer by hand (d_model 8, 2 heads, D = 4, batch 2, T = 6)") {
  ModelConfig c;
  c.d_model = 8;
  c.n_heads = 2;
  c.attention.diag.block_size = 4;
  c.attention.performer.features = 3;
  const auto core = [&c](MixerKind kind, bool causal) { return mixer_entry(kind).core_flops(c, 2, 6, causal); };
  const auto projections = [&c](MixerKind kind) { return mixer_entry(kind).projection_flops(c, 2, 6); };
  // B·H = 4. softmax: 4·4·P·D with P = 21 causal, 36 bidirectional.
  CHECK(core(MixerKind::Softmax, true) == 1344.0);
  CHECK(core(MixerKind::Softmax, false) == 2304.0);
  // diag, blocks of 4 and 2: P = 10 + 3 causal, 16 + 4 bidirectional.
  CHECK(core(MixerKind::Diag, true) == 832.0);
  CHECK(core(MixerKind::Diag, false) == 1280.0);
  // linear family: 4·4·T·K·(D + den), causal or not.
  CHECK(core(MixerKind::Linear, true) == 1920.0);  // K = 4, den 1 (scaling)
  c.attention.linear.scaling = false;
  CHECK(core(MixerKind::Linear, false) == 1536.0);  // den 0 with a norm
  CHECK(core(MixerKind::NormAttention, true) == 1536.0);
  CHECK(core(MixerKind::Performer, false) == 1440.0);  // K = m = 3
  CHECK(core(MixerKind::Cosformer, true) == 3840.0);   // K = 2D = 8
  // diag_norm_parallel: diag + NormAttention, 832 + 1536 causal, 1280 + 1536 bidirectional.
  CHECK(core(MixerKind::DiagNormParallel, true) == 2368.0);
  CHECK(core(MixerKind::DiagNormParallel, false) == 2816.0);
  // q/k/v/out: 4 · 2·N·d² = 6144 (N = 12); Performer adds 2 · 2·N·H·m·D = 1152.
  for (MixerKind kind : {MixerKind::Softmax, MixerKind::Linear, MixerKind::NormAttention, MixerKind::Diag,
                         MixerKind::Cosformer})
    CHECK(projections(kind) == 6144.0);
  CHECK(projections(MixerKind::Performer) == 7296.0);
  CHECK(projections(MixerKind::DiagNormParallel) == 2 * 6144.0);  // both branches' q/k/v/out
  c.attention.cosformer.out_proj = false;
  CHECK(projections(MixerKind::Cosformer) == 4608.0);  // q/k/v only
}

TEST_CASE("a MixerKind without a table entry is an error naming it") {
  const auto unknown = static_cast<MixerKind>(99);
  CHECK(find_mixer(unknown) == nullptr);
  CHECK(to_string(unknown) == "MixerKind(99)");
  ModelConfig config = small_config();
  ParamStore store;
  Rng rng(1);
  try {
    make_token_mixer(config, unknown, store, "layers.1.token_mixer", rng);
    FAIL("make_token_mixer accepted a kind without an entry");
  } catch (const ConfigError& error) {
    const std::string message = error.what();
    INFO(message);
    CHECK(message.find("model.layers") != std::string::npos);
    CHECK(message.find("MixerKind(99)") != std::string::npos);
    CHECK(message.find("layers.1.token_mixer") != std::string::npos);
    CHECK(message.find("norm_attention") != std::string::npos);  // the known names
  }
  CHECK_THROWS_AS(mixer_entry(unknown), ConfigError);
}
