#include "layers/config/model_config_json.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "layers/attention/mixer_table.h"
#include "layers/config/config_names.h"
#include "layers/inputs/input_table.h"
#include "layers/config/model_limits.h"

namespace tn {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Names: the YAML/JSON spellings of the model section's choices are the tables of
// layers/config/config_names.h (the mixers' names and options are the mixer table's,
// layers/attention/mixer_table.h).
// ---------------------------------------------------------------------------------------------
namespace {

template <class E>
using Names = NameList<E>;

const std::vector<std::string> kModelKeys = {
    "arch",     "vocab_size",    "d_model",     "n_layers",     "n_heads",        "max_positions",
    "token_mixer", "diag_layers", "layers",     "attention",    "channel_mixer",  "norm",
    "prenorm",  "final_norm",    "positional",  "relative",     "embed_scale",    "embed_norm",
    "tie_embeddings", "dropout", "attention_dropout", "head",   "pooling",        "num_classes",
    "pooler_dropout", "input", "positional_dropout", "classifier"};

std::string join(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The model section
// ---------------------------------------------------------------------------------------------
namespace {

std::string divisor_hint(int64_t d_model, int64_t n_heads) {
  std::vector<std::string> divisors;
  for (int64_t h = 1; h <= std::min<int64_t>(d_model, 64); ++h)
    if (d_model % h == 0) divisors.push_back(std::to_string(h));
  const int64_t below = d_model - d_model % n_heads;
  std::string alternatives = std::to_string(below + n_heads);
  if (below >= 4) alternatives = std::to_string(below) + " or " + alternatives;
  return "choose n_heads dividing " + std::to_string(d_model) + " (" + join(divisors) +
         ") or a d_model divisible by " + std::to_string(n_heads) + " (" + alternatives + ")";
}

/// The sizes of the model section, each within its bounds (layers/config/model_limits.h), read before
/// anything is computed from them (the default d_ff is 8 d_model / 3; n_layers sizes a list).
void read_sizes(const JsonSection& s, bool require_vocab_size, ModelConfig& c) {
  if (s.has("vocab_size")) {
    c.vocab_size = s.at_least("vocab_size", s.integer("vocab_size", 0), 1, "use the vocabulary size, e.g. 50000");
    s.at_most("vocab_size", c.vocab_size, kMaxVocabSize, "token ids are 32-bit: use the vocabulary size, e.g. 50000");
  } else if (require_vocab_size) {
    s.fail("vocab_size", "is required", "add vocab_size: N (the number of token ids)");
  }
  c.d_model = s.integer("d_model", c.d_model);
  // The minimum first: a divisor hint for a negative or tiny d_model would suggest sizes below it.
  if (c.d_model < 4) s.fail("d_model", "must be >= 4, got " + std::to_string(c.d_model), "use e.g. 512");
  s.at_most("d_model", c.d_model, kMaxModelWidth, "use a width such as 512 (at most 2^30)");
  c.n_layers = s.at_least("n_layers", s.integer("n_layers", c.n_layers), 1, "use at least one layer");
  s.at_most("n_layers", c.n_layers, kMaxModelLayers, "use a depth such as 6 (at most 4096 layers)");
  c.n_heads = s.at_least("n_heads", s.integer("n_heads", c.n_heads), 1, "use at least one head, e.g. 8");
  c.max_positions = s.at_least("max_positions", s.integer("max_positions", c.max_positions), 1,
                               "use the longest sequence length the model must take, e.g. 512");
  s.at_most("max_positions", c.max_positions, kMaxModelPositions,
            "use the longest sequence length the model must take, e.g. 512 (at most 2^20)");
  c.diag_layers = s.integer("diag_layers", c.diag_layers);
  c.num_classes = s.at_least("num_classes", s.integer("num_classes", c.num_classes), 1,
                             "use the number of labels of the task");
  s.at_most("num_classes", c.num_classes, kMaxModelWidth, "use the number of labels of the task (at most 2^30)");
}

/// `token_mixer` and `layers` (one mixer per layer) or `diag_layers` (the first k layers diag).
void read_layers(const JsonSection& s, ModelConfig& c) {
  const Names<MixerKind> mixers = mixer_choices();
  c.token_mixer = s.choice("token_mixer", c.token_mixer, mixers);
  if (const json* layers = s.get("layers")) {
    if (!layers->is_array())
      s.fail("layers", "expected a list of mixer names, got " + describe_json(*layers),
             "write e.g. [diag, diag, norm_attention, norm_attention], or leave it out and use diag_layers");
    if (static_cast<int64_t>(layers->size()) != c.n_layers)
      s.fail("layers",
             "has " + std::to_string(layers->size()) + " entries, n_layers is " + std::to_string(c.n_layers),
             "give one mixer per layer, or set n_layers: " + std::to_string(layers->size()), {"n_layers"});
    // Paths "model.layers[2]": a section whose path is "model.layers" would add a dot, so the
    // entries are read from a section at the parent path with keys "layers[i]".
    json wrapped = json::object();
    for (size_t i = 0; i < layers->size(); ++i) wrapped["layers[" + std::to_string(i) + "]"] = (*layers)[i];
    const JsonSection entries(wrapped, s.path());
    for (size_t i = 0; i < layers->size(); ++i)
      c.layers.push_back(entries.choice("layers[" + std::to_string(i) + "]", MixerKind::Softmax, mixers));
  } else {
    if (c.diag_layers < 0 || c.diag_layers > c.n_layers)
      s.fail("diag_layers",
             std::to_string(c.diag_layers) + " must lie in [0, n_layers=" + std::to_string(c.n_layers) + "]",
             "use 0.." + std::to_string(c.n_layers) + " (the first k layers are diag)", {"n_layers"});
    c.layers.assign(static_cast<size_t>(c.diag_layers), MixerKind::Diag);
    c.layers.resize(static_cast<size_t>(c.n_layers), c.token_mixer);
  }
}

/// `input: {kind: tokens | linear, mean: 0, std: 1}` (layers/inputs/input_table.h).
InputOptions read_input(const JsonSection& model, const ModelConfig& c, bool strict) {
  InputOptions in;
  if (!model.has("input")) return in;
  const JsonSection s = model.section("input");
  s.check_keys({"kind", "mean", "std"}, strict);
  Names<InputKind> kinds;
  for (const InputEntry& e : input_table()) kinds.push_back({std::string(e.name), e.kind});
  in.kind = s.choice("kind", in.kind, kinds);
  in.mean = s.number("mean", in.mean);
  in.std = s.number("std", in.std);
  // The values are float32 in the model: keep 1/std and (level − mean)/std well inside its range.
  if (!(in.std >= 1e-6 && in.std <= 1e6))
    s.fail("std", "must lie in [1e-6, 1e6]", "use the data's scale, e.g. std: 61.0 for CIFAR-10 levels");
  if (!(std::abs(in.mean) <= 1e6)) s.fail("mean", "must lie in [-1e6, 1e6]", "use the data's centre, e.g. mean: 122.6");
  const bool token_head = c.head == HeadKind::LM || c.head == HeadKind::MLM;
  if (!input_entry(in.kind).can_tie && token_head && c.tie_embeddings)
    s.fail("kind", std::string(input_entry(in.kind).name) + " input has no embedding matrix for the tied output head",
           "set model.tie_embeddings: false, or use a classification or retrieval head");
  return in;
}

}  // namespace

ModelConfig resolve_model_json(const json& model, const ModelJsonOptions& options) {
  const JsonSection s(model, options.path);
  const bool strict = options.strict_keys;
  s.check_keys(kModelKeys, strict);
  ModelConfig c;
  read_sizes(s, options.require_vocab_size, c);
  c.dropout = s.probability("dropout", s.number("dropout", c.dropout));
  if (s.has("positional_dropout"))
    c.positional_dropout = s.probability("positional_dropout", s.number("positional_dropout", c.dropout));
  c.attention_dropout = s.probability("attention_dropout", s.number("attention_dropout", c.attention_dropout));
  c.pooler_dropout = s.probability("pooler_dropout", s.number("pooler_dropout", c.pooler_dropout));
  c.prenorm = s.boolean("prenorm", c.prenorm);
  c.final_norm = s.boolean("final_norm", c.final_norm);
  c.embed_scale = s.boolean("embed_scale", c.embed_scale);
  c.tie_embeddings = s.boolean("tie_embeddings", c.tie_embeddings);
  c.arch = s.choice("arch", c.arch, arch_names());

  if (c.d_model % c.n_heads != 0)
    s.fail("d_model",
           std::to_string(c.d_model) + " is not divisible by n_heads=" + std::to_string(c.n_heads),
           divisor_hint(c.d_model, c.n_heads), {"n_heads"});

  read_layers(s, c);

  c.attention = resolve_attention_json(s.section("attention"), strict);
  if (const int64_t h = c.attention.diag.n_heads; h > 0 && (c.d_model % h != 0 ||
                                                           (c.relative != Relative::None && (c.d_model / h) % 2)))
    s.section("attention").section("diag").fail(
        "n_heads", std::to_string(h) + " heads do not split d_model " + std::to_string(c.d_model) + " into " +
                       (c.d_model % h ? "equal" : "even (relative positions rotate pairs)") + " widths",
        divisor_hint(c.d_model, h));

  const JsonSection cm = s.section("channel_mixer");
  cm.check_keys({"type", "d_ff", "activation"}, strict);
  c.channel_mixer.type = cm.choice("type", ChannelMixerKind::GLU, channel_mixer_names());
  const bool glu = c.channel_mixer.type == ChannelMixerKind::GLU;
  c.channel_mixer.d_ff = cm.has("d_ff") ? cm.integer("d_ff", 0) : glu ? 8 * c.d_model / 3 : 4 * c.d_model;
  cm.at_least("d_ff", c.channel_mixer.d_ff, 1, "use a positive hidden width, or leave it out for the default");
  cm.at_most("d_ff", c.channel_mixer.d_ff, kMaxModelWidth, "use a hidden width such as 4 d_model (at most 2^30)");
  c.channel_mixer.activation = cm.has("activation") ? cm.choice("activation", Activation::SiLU, activation_names())
                               : glu                ? Activation::SiLU
                                                    : Activation::GELU;

  c.norm = read_norm(s, "norm", c.norm);
  c.embed_norm = read_norm(s, "embed_norm", c.embed_norm);
  c.positional = s.choice("positional", c.positional, positional_names());
  if (const json* r = s.find("relative"); r && (r->is_null() || (r->is_boolean() && !r->get<bool>())))
    c.relative = Relative::None;
  else
    c.relative = s.choice("relative", c.relative, relative_names());
  if (c.relative != Relative::None && c.d_head() % 2 != 0)
    s.fail("relative",
           to_string(c.relative) + " rotates pairs of coordinates and needs an even head width, but d_model/n_heads = " +
               std::to_string(c.d_model) + "/" + std::to_string(c.n_heads) + " = " + std::to_string(c.d_head()),
           "choose d_model and n_heads with an even quotient, or set relative: none", {"n_heads", "d_model"});

  c.head = s.has("head") ? s.choice("head", HeadKind::LM, head_names())
                         : c.arch == Arch::Decoder ? HeadKind::LM
                                                   : HeadKind::MLM;
  c.pooling = s.choice("pooling", c.pooling, pooling_names());
  c.classifier = s.choice("classifier", c.classifier, classifier_names());
  if (c.classifier != Classifier::DenseTanh && c.head != HeadKind::Classification)
    s.fail("classifier", "applies to the classification head only, and model.head is " + name_of(c.head, head_names()),
           "leave classifier out, or set head: classification", {"head"});
  c.input = read_input(s, c, strict);
  return c;
}

ModelConfig model_config_from_json(const json& model, const std::string& where) {
  const json& section = model.is_object() && model.contains("model") && model["model"].is_object() ? model["model"] : model;
  try {
    return resolve_model_json(section, ModelJsonOptions{});
  } catch (const ConfigIssue& issue) {
    throw ConfigError(where + ": " + issue.what());
  }
}

nlohmann::json model_config_to_json(const ModelConfig& c) {
  json layers = json::array();
  for (MixerKind m : c.layers) layers.push_back(to_string(m));
  json out{
      {"arch", name_of(c.arch, arch_names())},
      {"vocab_size", c.vocab_size},
      {"d_model", c.d_model},
      {"n_layers", c.n_layers},
      {"n_heads", c.n_heads},
      {"max_positions", c.max_positions},
      {"token_mixer", to_string(c.token_mixer)},
      {"diag_layers", c.diag_layers},
      {"layers", layers},
      {"attention", attention_to_json(c.attention, c.layers)},
      {"channel_mixer", {{"type", name_of(c.channel_mixer.type, channel_mixer_names())},
                         {"d_ff", c.channel_mixer.d_ff},
                         {"activation", to_string(c.channel_mixer.activation)}}},
      {"norm", to_string(c.norm)},
      {"prenorm", c.prenorm},
      {"final_norm", c.final_norm},
      {"positional", to_string(c.positional)},
      {"relative", to_string(c.relative)},
      {"embed_scale", c.embed_scale},
      {"embed_norm", to_string(c.embed_norm)},
      {"tie_embeddings", c.tie_embeddings},
      {"dropout", c.dropout},
      {"attention_dropout", c.attention_dropout},
      {"head", name_of(c.head, head_names())},
      {"pooling", name_of(c.pooling, pooling_names())},
      {"num_classes", c.num_classes},
      {"pooler_dropout", c.pooler_dropout},
  };
  // Written only when given, so that the models of the reference keep its keys exactly.
  if (c.positional_dropout) out["positional_dropout"] = *c.positional_dropout;
  if (c.classifier != Classifier::DenseTanh) out["classifier"] = name_of(c.classifier, classifier_names());  // likewise
  if (c.input != InputOptions{})  // token models keep the reference's keys exactly
    out["input"] = {{"kind", std::string(input_entry(c.input.kind).name)}, {"mean", c.input.mean}, {"std", c.input.std}};
  return out;
}

}  // namespace tn
