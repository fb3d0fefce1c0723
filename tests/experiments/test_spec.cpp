#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/readers/wikitext_spec.h"
#include "experiments/spec/spec.h"
#include "layers/config/model_config_json.h"
#include "tests/temp_dir.h"
#include "tests/test_paths.h"

using namespace tn;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// test_spec's scratch folders.
struct TempDir : tn::test::TempDir {
  TempDir() : tn::test::TempDir("spec") {}
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The repository's quickstart spec (the same settings as the PyTorch reference's quickstart).
std::string quickstart_text() { return read_file(test::source_dir() + "/configs/quickstart.yaml"); }

/// The ConfigError message of loading `text` as spec.yaml (with `overrides`); fails the test when
/// it loads.
std::string load_error(const std::string& text, const std::vector<std::string>& overrides = {}) {
  TempDir dir;
  const std::string path = dir.write("spec.yaml", text);
  try {
    load_spec(path, overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("expected a ConfigError for:\n" << text);
  return "";
}

// A minimal valid spec; tests below vary one line of it.
const std::string kModel = "model:\n  d_model: 64\n  n_layers: 2\n  n_heads: 4\n";
const std::string kData = "data:\n  train: train.tokens\n  seq_len: 32\n";
const std::string kTrain = "train:\n  max_steps: 10\n  optimizer: {lr: 1e-3}\n";

/// Checks that `message` names spec.yaml at `line` and contains every one of `parts`.
void check_error(const std::string& message, int line, const std::vector<std::string>& parts) {
  INFO("message: " << message);
  CHECK(message.find("spec.yaml:" + std::to_string(line) + ":") != std::string::npos);
  for (const std::string& part : parts) CHECK(message.find(part) != std::string::npos);
  CHECK(message.find('\n') == std::string::npos);
}

}  // namespace

TEST_CASE("spec: configs/quickstart.yaml loads with the reference quickstart's resolved values") {
  TempDir dir;
  const std::string path = dir.write("quickstart.yaml", quickstart_text());
  const ExperimentSpec spec = load_spec(path);
  CHECK(spec.path == path);
  CHECK(spec.name == "quickstart");
  const ModelConfig& m = spec.model;
  CHECK_FALSE(spec.vocab_size_given);
  CHECK(m.vocab_size == 0);
  CHECK(m.arch == Arch::Decoder);
  CHECK(m.d_model == 128);
  CHECK(m.n_layers == 4);
  CHECK(m.n_heads == 4);
  CHECK(m.channel_mixer.type == ChannelMixerKind::GLU);
  CHECK(m.channel_mixer.d_ff == 341);
  CHECK(m.channel_mixer.activation == Activation::SiLU);
  CHECK(m.layers ==
        std::vector<MixerKind>{MixerKind::Diag, MixerKind::Diag, MixerKind::NormAttention, MixerKind::NormAttention});
  CHECK(m.attention.norm_attention.kernel == Kernel::Elu);
  CHECK(m.attention.norm_attention.norm == NormKind::SRMSNorm);
  CHECK(m.attention.diag.block_size == 64);
  CHECK(m.attention.diag.inner == DiagInner::Relu);
  CHECK(m.relative == Relative::URPE);
  CHECK(m.dropout == 0.1);
  CHECK(m.head == HeadKind::LM);

  CHECK(spec.task == "language_modeling");
  REQUIRE(spec.data->reader() == "wikitext");
  const auto& data = dynamic_cast<const WikitextSpec&>(*spec.data);
  CHECK(data.train == "wikitext-103/wiki.valid.tokens");
  CHECK(data.valid.empty());
  CHECK(data.test == "wikitext-103/wiki.test.tokens");
  CHECK(data.split_valid_from_train == 0.1);
  CHECK(data.seq_len == 256);
  CHECK(spec.data->tokens_per_sample() == 256);

  const TrainSpec& t = spec.train;
  CHECK(t.batch_size == 8);
  CHECK(t.max_steps == 450);
  CHECK(t.seed == 1);
  CHECK(t.optimizer.name == "adamw");
  CHECK(t.optimizer.lr == 3e-3);  // "3e-3" parses as a double
  CHECK(t.optimizer.beta1 == 0.9);
  CHECK(t.optimizer.beta2 == 0.98);
  CHECK(t.optimizer.eps == 1e-8);
  CHECK(t.optimizer.weight_decay == 0.01);
  CHECK(t.schedule.kind == ScheduleKind::InverseSqrt);
  CHECK(t.schedule.warmup_steps == 100);
  CHECK(t.schedule.warmup_init_lr == 1e-7);
  CHECK(t.clip_norm == 0);
  CHECK(t.eval_every == 50);
  CHECK(t.test_every == 225);
  CHECK(t.log_every == 25);
  CHECK(t.eval_batch_size == 16);
  CHECK(t.update_freq == 1);
  CHECK(t.precision == Precision::F32);

  const LrSchedule schedule = make_schedule(t.schedule, t.optimizer.lr, t.max_steps);
  CHECK(schedule.kind == ScheduleKind::InverseSqrt);
  CHECK(schedule.lr(0) == 1e-7);
  CHECK(schedule.lr(100) == doctest::Approx(3e-3).epsilon(1e-12));
  CHECK(schedule.lr(400) == doctest::Approx(1.5e-3).epsilon(1e-12));
}

TEST_CASE("model_config_json: every golden case's resolved_model round-trips, and its model resolves to it") {
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(test::golden_root())) {
    const fs::path case_file = entry.path() / "case.json";
    if (!entry.is_directory() || !fs::exists(case_file)) continue;
    ++cases;
    const json golden = json::parse(read_file(case_file.string()));
    const json& resolved = golden.at("resolved_model");
    INFO("case " << entry.path().filename().string());
    const ModelConfig config = model_config_from_json(resolved, case_file.string());
    const json out = model_config_to_json(config);
    CHECK(out == resolved);
    CHECK(out.dump() == resolved.dump());  // same types too: 64 stays an integer, 0.0 a float
    // The unresolved model of the case resolves as the reference's resolve_config did.
    CHECK(model_config_to_json(model_config_from_json(golden.at("model"), case_file.string())).dump() ==
          resolved.dump());
    // A whole case (a mapping with a `model:` key) is accepted as well, as resolve_config does.
    CHECK(model_config_to_json(model_config_from_json(golden, case_file.string())) == resolved);
  }
  CHECK(cases == 22);  // tests/golden/README.md: 16 cases of make_golden.py, 6 of make_lra_golden.py
}

TEST_CASE("model_config_json: defaults, batchnorm, and errors naming `where` and the key") {
  const ModelConfig defaults = model_config_from_json(json{{"vocab_size", 1000}}, "x.json");
  CHECK(defaults.d_model == 512);
  CHECK(defaults.channel_mixer.d_ff == 1365);
  CHECK(defaults.layers.size() == 6);
  CHECK(defaults.head == HeadKind::LM);
  const ModelConfig encoder =
      model_config_from_json(json{{"vocab_size", 10}, {"arch", "encoder"}, {"channel_mixer", {{"type", "ffn"}}}}, "x");
  CHECK(encoder.head == HeadKind::MLM);
  CHECK(encoder.channel_mixer.d_ff == 2048);
  CHECK(encoder.channel_mixer.activation == Activation::GELU);

  const ModelConfig bn = model_config_from_json(
      json{{"vocab_size", 10}, {"attention", {{"norm_attention", {{"norm", "batchnorm"}}}}}, {"norm", nullptr}}, "x");
  CHECK(bn.attention.norm_attention.norm == NormKind::BatchNorm);
  CHECK(bn.norm == NormKind::None);  // null means none, as _norm_name
  CHECK(model_config_to_json(bn)["attention"]["norm_attention"]["norm"] == "batchnorm");

  auto error = [](const json& model) -> std::string {
    try {
      model_config_from_json(model, "ckpt.safetensors");
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(error(json{{"vocab_size", 10}, {"d_model", 100}, {"n_heads", 3}})
            .starts_with("ckpt.safetensors: model.d_model: 100 is not divisible by n_heads=3; choose n_heads"));
  CHECK(error(json::object()).starts_with("ckpt.safetensors: model.vocab_size: is required"));
  CHECK(error(json{{"vocab_size", 10}, {"d_model", 12}, {"n_heads", 4}}).find("model.relative") != std::string::npos);
  CHECK(error(json{{"vocab_size", 10}, {"diag_layers", 7}}).find("model.diag_layers: 7 must lie in [0, n_layers=6]") !=
        std::string::npos);
  CHECK(error(json{{"vocab_size", 10}, {"layers", {"diag"}}}).find("model.layers: has 1 entries, n_layers is 6") !=
        std::string::npos);
  CHECK(error(json{{"vocab_size", 10}, {"n_layers", 1}, {"layers", {"diagonal"}}})
            .find("model.layers[0]: expected one of") != std::string::npos);
  CHECK(error(json{{"vocab_size", 10}, {"attention", {{"lineer", json::object()}}}})
            .find("did you mean `linear`?") != std::string::npos);
  CHECK(error(json{{"vocab_size", 10}, {"attention", {{"linear", {{"normalize", "scale"}}}}}})
            .find("did you mean `scaling`?") != std::string::npos);
  // Unknown keys in a checkpoint's config are ignored with a warning, as the reference keeps them.
  CHECK(model_config_from_json(json{{"vocab_size", 10}, {"future_key", 1}}, "x").vocab_size == 10);

  // classifier: RoBERTa's dense + tanh by default (not written), the official LRA decoder's single
  // Linear when asked (written), and only for the classification head.
  const json cls = {{"vocab_size", 10}, {"arch", "encoder"}, {"head", "classification"}};
  CHECK(model_config_from_json(cls, "x").classifier == Classifier::DenseTanh);
  CHECK_FALSE(model_config_to_json(model_config_from_json(cls, "x")).contains("classifier"));
  json linear = cls;
  linear["classifier"] = "linear";
  CHECK(model_config_from_json(linear, "x").classifier == Classifier::Linear);
  CHECK(model_config_to_json(model_config_from_json(linear, "x"))["classifier"] == "linear");
  linear["head"] = "retrieval";
  CHECK(error(linear).find("model.classifier: applies to the classification head only, and model.head is retrieval") !=
        std::string::npos);
}

TEST_CASE("spec: each kind of bad input names the file, the line and a fix") {
  SUBCASE("malformed YAML") {
    check_error(load_error("model:\n  d_model: 64\n   n_heads: 4\n"), 3, {"malformed YAML", "spec.yaml:3:11:", "fix"});
  }
  SUBCASE("unknown keys at every level, with the nearest valid key") {
    check_error(load_error("model:\n  d_model: 64\n  n_layers: 2\n  n_heads: 4\n  d_modle: 64\n" + kData + kTrain), 5,
                {"model.d_modle: unknown key; did you mean `d_model`?"});
    check_error(load_error(kModel + kData + "train:\n  max_steps: 10\n  batchsize: 8\n"), 10,
                {"train.batchsize: unknown key; did you mean `batch_size`?"});
    check_error(load_error(kModel + "  attention:\n    diag: {blocksize: 32}\n" + kData + kTrain), 6,
                {"model.attention.diag.blocksize: unknown key; did you mean `block_size`?"});
    check_error(load_error(kModel + kData + "trian:\n  max_steps: 10\n"), 8, {"trian: unknown key; did you mean `train`?"});
    check_error(load_error(kModel + kData + kTrain + "  optimizer2: {lr: 1}\n"), 11,
                {"train.optimizer2: unknown key; did you mean `optimizer`?"});
    check_error(load_error(kModel + kData + "train:\n  max_steps: 10\n  schedule: {name: constant, warmup_steps: 5}\n"),
                10, {"train.schedule.warmup_steps: is not a key of schedule constant",
                     "constant takes no keys; warmup_steps belongs to inverse_sqrt, polynomial_decay, cosine"});
    check_error(load_error(kModel + kData + "train:\n  max_steps: 10\n  schedule: {warmup_step: 5}\n"), 10,
                {"train.schedule.warmup_step: unknown key; did you mean `warmup_steps`?"});
  }
  SUBCASE("wrong types") {
    check_error(load_error("model:\n  d_model: abc\n" + kData + kTrain), 2,
                {"model.d_model: expected an integer, got \"abc\"; write a whole number"});
    check_error(load_error(kModel + "  prenorm: maybe\n" + kData + kTrain), 5,
                {"model.prenorm: expected true or false, got \"maybe\"; write true or false"});
    check_error(load_error(kModel + kData + "train:\n  max_steps: 10\n  optimizer: {lr: fast}\n"), 10,
                {"train.optimizer.lr: expected a number, got \"fast\""});
    check_error(load_error(kModel + "  norm: srms\n" + kData + kTrain), 5,
                {"model.norm: expected one of layernorm, rmsnorm, srmsnorm, batchnorm, none, got \"srms\"",
                 "did you mean `srmsnorm`?"});
    check_error(load_error(kModel + "  layers: [diag, diagonal]\n" + kData + kTrain), 5,
                {"model.layers[1]: expected one of", "did you mean `diag`?"});
    check_error(load_error("model: 5\n" + kData + kTrain), 1, {"model: expected a mapping, got 5"});
    check_error(load_error(kModel + kData + "train:\n  max_steps: 10\n  optimizer: {lr: .inf}\n"), 10,
                {"train.optimizer.lr: expected a number, got inf"});
    check_error(load_error(kModel + kData + "train:\n  max_steps: 10\n  optimizer: {betas: [0.9]}\n"), 10,
                {"train.optimizer.betas: expected [beta1, beta2], got [0.9]"});
  }
  SUBCASE("a second YAML document is refused at its line, not dropped") {
    const std::string first = kModel + kData + kTrain + "---\n";
    const int line = 1 + static_cast<int>(std::count(first.begin(), first.end(), '\n'));
    check_error(load_error(first + "model: {}\n"), line - 1, {"a second YAML document", "remove the marker"});  // the `---`
    // A first `---` (an explicit start), comments and a `...` end with nothing after are one document.
    CHECK_NOTHROW(load_spec(TempDir().write("spec.yaml", "# c\n---\n" + kModel + kData + kTrain + "...\n# end\n")));
    // Content after a `...` end marker is a second document too.
    const std::string ended = kModel + kData + kTrain + "...\n";
    check_error(load_error(ended + "model: {}\n"), line, {"a second YAML document"});
  }
  SUBCASE("out-of-range values") {
    check_error(load_error("model:\n  d_model: 100\n  n_heads: 3\n" + kData + kTrain), 2,
                {"model.d_model: 100 is not divisible by n_heads=3; choose n_heads dividing 100 (1, 2, 4, 5, 10, 20, 25, 50)",
                 "(99 or 102)"});
    // Below the minimum, odd or negative: the minimum is named, not a divisor of a negative width.
    check_error(load_error("model:\n  d_model: -1\n  n_heads: 2\n" + kData + kTrain), 2,
                {"model.d_model: must be >= 4, got -1"});
    check_error(load_error("model:\n  d_model: 3\n  n_heads: 2\n" + kData + kTrain), 2,
                {"model.d_model: must be >= 4, got 3"});
    check_error(load_error("model:\n  d_model: 5\n  n_heads: 2\n" + kData + kTrain), 2,
                {"divisible by 2 (4 or 6)"});
    check_error(load_error("model:\n  d_model: 5\n  n_heads: 3\n" + kData + kTrain), 2,
                {"divisible by 3 (6)"});  // 3 is below the minimum: not offered
    // d_model left at its default: the error points at n_heads.
    check_error(load_error("model:\n  n_layers: 2\n  n_heads: 7\n" + kData + kTrain), 3, {"not divisible by n_heads=7"});
    check_error(load_error("model:\n  d_model: 12\n  n_heads: 4\n" + kData + kTrain), 3,
                {"model.relative: urpe rotates pairs of coordinates", "or set relative: none"});
    check_error(load_error("model:\n  d_model: 64\n  n_layers: 0\n" + kData + kTrain), 3,
                {"model.n_layers: must be >= 1, got 0"});
    check_error(load_error(kModel + "  attention:\n    diag: {block_size: -4}\n" + kData + kTrain), 6,
                {"model.attention.diag.block_size: must be >= 1, got -4"});
    check_error(load_error(kModel + "  dropout: 1.5\n" + kData + kTrain), 5,
                {"model.dropout: must lie in [0, 1), got 1.5; use a probability"});
    check_error(load_error(kModel + "  diag_layers: 3\n" + kData + kTrain), 5,
                {"model.diag_layers: 3 must lie in [0, n_layers=2]; use 0..2"});
    check_error(load_error(kModel + "  layers: [diag]\n" + kData + kTrain), 5,
                {"model.layers: has 1 entries, n_layers is 2; give one mixer per layer"});
    check_error(load_error(kModel + kData + "train:\n  max_steps: 10\n  optimizer: {lr: 0}\n"), 10,
                {"train.optimizer.lr: must be > 0, got 0.0; use a positive peak learning rate"});
    check_error(load_error(kModel + "data:\n  train: t.tokens\n  seq_len: 0\n" + kTrain), 7,
                {"data.seq_len: must be >= 1, got 0; use a positive length"});
    check_error(load_error(kModel + kData + "train:\n  max_steps: 10\n  batch_size: 0\n"), 10,
                {"train.batch_size: must be >= 1, got 0"});
    check_error(load_error(kModel + kData + "train:\n  batch_size: 4\n"), 8,
                {"train.max_steps: is required; add train.max_steps: N"});
    check_error(load_error(kModel + kData + "train:\n  max_steps: 0\n"), 9, {"train.max_steps: must be >= 1, got 0"});
    check_error(load_error(kModel + kData + "train:\n  max_steps: 10\n  schedule: {name: inverse_sqrt, warmup_steps: 0}\n"),
                10, {"train.schedule.warmup_steps: must be >= 1 for inverse_sqrt, got 0", "use e.g. 4000"});
    check_error(load_error(kModel + "  positional: learned\n  max_positions: 16\n" + kData + kTrain), 9,
                {"data.seq_len: 32 exceeds model.max_positions=16"});
    // Each reader names its own length key (ListOps: data.max_length).
    check_error(load_error(kModel + "  positional: learned\n  max_positions: 16\n" +
                           "data:\n  reader: listops\n  dir: ops\n  max_length: 32\n" + kTrain),
                10, {"data.max_length: 32 exceeds model.max_positions=16", "lower data.max_length"});
  }
  SUBCASE("data.valid and split_valid_from_train together") {
    check_error(load_error(kModel + "data:\n  train: t.tokens\n  valid: v.tokens\n  split_valid_from_train: 0.1\n" +
                           kTrain),
                8, {"data.split_valid_from_train: cannot be combined with data.valid", "not both"});
  }
  SUBCASE("missing data.train, duplicate keys, empty file") {
    check_error(load_error(kModel + "data:\n  seq_len: 32\n" + kTrain), 5, {"data.train: is required"});
    check_error(load_error("model:\n  d_model: 64\n  d_model: 32\n" + kData + kTrain), 3,
                {"model.d_model: duplicate key (first on line 2)"});
    const std::string empty = load_error("");
    CHECK(empty.find("spec.yaml: model: is required") != std::string::npos);
  }
  SUBCASE("a malformed --set") {
    const std::string text = kModel + kData + kTrain;
    for (const std::string bad : {"train.seed", "=3", "train..seed=2", "train.=2"}) {
      const std::string message = load_error(text, {bad});
      INFO(message);
      CHECK(message.find("--set " + bad + ": expected key.path=value; write e.g. --set train.seed=2") !=
            std::string::npos);
    }
    const std::string scalar = load_error(text, {"train.max_steps.x=1"});
    CHECK(scalar.find("train.max_steps is 10, not a mapping") != std::string::npos);
    const std::string yaml = load_error(text, {"train.seed=[1"});
    CHECK(yaml.find("--set train.seed=[1:1:") != std::string::npos);
    CHECK(yaml.find("malformed YAML") != std::string::npos);
  }
  SUBCASE("an unreadable file") {
    try {
      load_spec("/nonexistent/spec.yaml");
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()).starts_with("/nonexistent/spec.yaml: cannot read the spec file"));
    }
  }
  SUBCASE("a device or a file past 16 MiB: refused before it fills the memory") {
    // /dev/zero was read without end (the process grew until killed).
    CHECK_THROWS_WITH_AS(load_spec("/dev/zero"), doctest::Contains("it is a device"), ConfigError);
    TempDir dir;
    const std::string big = dir.write("big.yaml", "# " + std::string((16 << 20) + 10, 'x') + "\n");
    CHECK_THROWS_WITH_AS(load_spec(big), doctest::Contains("a YAML spec"), ConfigError);
  }
  SUBCASE("a FIFO whose writer never stops: cut off at 16 MiB") {
    TempDir dir;
    const std::string fifo = dir.file("endless.yaml");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const pid_t writer = ::fork();
    REQUIRE(writer >= 0);
    if (writer == 0) {  // `yes > endless.yaml`, until the reader closes its end
      std::signal(SIGPIPE, SIG_DFL);
      const int fd = ::open(fifo.c_str(), O_WRONLY);
      const std::string chunk(1 << 16, '#');
      while (fd >= 0 && ::write(fd, chunk.data(), chunk.size()) > 0) {
      }
      ::_exit(0);
    }
    CHECK_THROWS_WITH_AS(load_spec(fifo), doctest::Contains("a YAML spec"), ConfigError);
    ::kill(writer, SIGKILL);
    ::waitpid(writer, nullptr, 0);
  }
}

TEST_CASE("spec: --set overrides apply before validation") {
  TempDir dir;
  const std::string path = dir.write("quickstart.yaml", quickstart_text());
  const ExperimentSpec spec =
      load_spec(path, {"train.seed=2", "model.d_model=64", "model.attention.diag.block_size=32",
                       "train.schedule={name: cosine}", "model.vocab_size=17488", "data.test="});
  CHECK(spec.train.seed == 2);
  CHECK(spec.model.d_model == 64);
  CHECK(spec.model.channel_mixer.d_ff == 170);  // resolved after the override
  CHECK(spec.model.attention.diag.block_size == 32);
  CHECK(spec.model.attention.diag.inner == DiagInner::Relu);  // the rest of the mapping is kept
  CHECK(spec.train.schedule.kind == ScheduleKind::Cosine);
  CHECK(spec.train.schedule.warmup_steps == 0);
  CHECK(spec.train.schedule.total_steps == 450);  // max_steps
  CHECK(spec.vocab_size_given);
  CHECK(spec.model.vocab_size == 17488);
  CHECK(dynamic_cast<const WikitextSpec&>(*spec.data).test.empty());

  auto error = [&](const std::string& assignment) -> std::string {
    try {
      load_spec(path, {assignment});
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string unknown = error("train.sed=2");
  INFO(unknown);
  CHECK(unknown.starts_with(path + ": --set train.sed=2: train.sed: unknown key; did you mean `seed`?"));
  CHECK(error("model.n_heads=3").find("--set model.n_heads=3: model.d_model: 128 is not divisible by n_heads=3") !=
        std::string::npos);
  CHECK(error("model.d_model=abc").find("--set model.d_model=abc: model.d_model: expected an integer, got \"abc\"") !=
        std::string::npos);
  CHECK(error("data.valid=v.tokens").find("cannot be combined with data.valid") != std::string::npos);
}

TEST_CASE("spec: spec_to_yaml then load_spec gives the same spec") {
  TempDir dir;
  const std::string quickstart = dir.write("quickstart.yaml", quickstart_text());
  const std::vector<std::vector<std::string>> variants = {
      {},
      {"model.vocab_size=17488", "train.schedule={name: polynomial_decay, warmup_steps: 10, end_lr: 1e-5, power: 2}",
       "data.train=my data/1e5", "data.split_valid_from_train=0", "data.valid=null", "train.seed=18446744073709551615"},
      {"train.schedule={name: constant}", "model.layers=[softmax, linear, performer, cosformer]",
       "model.attention.linear.normalize=srmsnorm", "model.relative=rope", "model.norm=batchnorm",
       "train.precision=bf16", "train.update_freq=4", "train.threads=2", "train.clip_norm=1.0"},
  };
  for (const auto& overrides : variants) {
    const ExperimentSpec spec = load_spec(quickstart, overrides);
    const std::string yaml = spec_to_yaml(spec);
    INFO(yaml);
    const ExperimentSpec again = load_spec(dir.write("resolved.yaml", yaml));
    CHECK(model_config_to_json(again.model) == model_config_to_json(spec.model));
    CHECK(again.vocab_size_given == spec.vocab_size_given);
    CHECK(again.data->equals(*spec.data));
    CHECK(again.train == spec.train);
    CHECK(again.model == spec.model);
    CHECK(same_experiment(again, spec));
    CHECK(again.name == "resolved");
    // Writing it again gives the same text (apart from the comment naming the source file).
    const std::string yaml_again = spec_to_yaml(again);
    CHECK(yaml_again.substr(yaml_again.find('\n')) == yaml.substr(yaml.find('\n')));
  }
  const ExperimentSpec odd = load_spec(quickstart, variants[1]);
  CHECK(dynamic_cast<const WikitextSpec&>(*odd.data).train == "my data/1e5");
  CHECK(odd.train.seed == 18446744073709551615ull);
  CHECK(odd.train.schedule.total_steps == 450);
  CHECK(spec_to_yaml(odd).find("train: \"my data/1e5\"") != std::string::npos);
}

TEST_CASE("spec: load_model_only takes a model section, a bare model mapping or a golden case.json") {
  TempDir dir;
  const ModelConfig from_spec = load_model_only(dir.write("quickstart.yaml", quickstart_text()));
  CHECK(from_spec.d_model == 128);
  CHECK(from_spec.vocab_size == 0);

  const ModelConfig bare = load_model_only(dir.write("bare.yaml", "vocab_size: 1000\nd_model: 128\nn_heads: 4\n"),
                                           {"model.n_layers=3"});
  CHECK(bare.vocab_size == 1000);
  CHECK(bare.n_layers == 3);
  try {
    load_model_only(dir.write("bad.yaml", "vocab_size: 1000\nd_model: 128\nn_head: 4\n"));
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("bad.yaml:3: model.n_head: unknown key; did you mean `n_heads`?") !=
          std::string::npos);
  }

  const std::string case_json = test::golden_root() + "/dec_t1/case.json";
  const json golden = json::parse(read_file(case_json));
  CHECK(model_config_to_json(load_model_only(case_json)) == golden.at("resolved_model"));
}

TEST_CASE("model_config_json: nearest_key suggests likely misspellings only") {
  const std::vector<std::string> model_keys = {"d_model", "n_layers", "n_heads", "norm", "embed_norm"};
  CHECK(nearest_key("d_modle", model_keys) == "d_model");
  CHECK(nearest_key("D_Model", model_keys) == "d_model");
  CHECK(nearest_key("n_head", model_keys) == "n_heads");
  CHECK(nearest_key("nlayers", model_keys) == "n_layers");
  CHECK(nearest_key("xyz", model_keys).empty());
  CHECK(nearest_key("x", {"lr"}).empty());
  CHECK(nearest_key("srms", {"layernorm", "rmsnorm", "srmsnorm", "none"}) == "srmsnorm");
  CHECK(nearest_key("norm_att", {"norm", "norm_attention"}) == "norm_attention");
  CHECK(nearest_key("sed", {"batch_size", "seed", "max_steps"}) == "seed");
}

TEST_CASE("spec: make_schedule converts each schedule") {
  ScheduleSpec cosine{ScheduleKind::Cosine, 100, 1e-7, 0, 0.0, 1.0};
  const LrSchedule c = make_schedule(cosine, 1e-3, 1000);
  CHECK(c.kind == ScheduleKind::Cosine);
  CHECK(c.total_steps == 1000);
  CHECK(c.lr(100) == 1e-3);
  CHECK(c.lr(1000) == 0.0);
  CHECK(make_schedule(ScheduleSpec{ScheduleKind::Constant}, 2e-3, 10).lr(5) == 2e-3);
  CHECK(make_schedule(ScheduleSpec{ScheduleKind::PolynomialDecay, 0, 1e-7, 0, 0.0, 1.0}, 1e-3, 10).lr(5) ==
        doctest::Approx(5e-4));
  CHECK_THROWS_AS(make_schedule(ScheduleSpec{ScheduleKind::InverseSqrt, 0}, 1e-3, 10), ConfigError);
  CHECK(to_string(ScheduleKind::PolynomialDecay) == "polynomial_decay");
}

TEST_CASE("spec: schedule warnings say what the lr does past the schedule's end") {
  TrainSpec t;
  t.max_steps = 10;
  t.optimizer.lr = 1e-3;
  t.schedule.kind = ScheduleKind::Cosine;
  t.schedule.warmup_steps = 2;
  t.schedule.total_steps = 7;
  // The official LRA cosine is not clamped: step 10 trains at lr(9), progress (9 - 2) / (7 - 2) = 1.4,
  // lr = 1e-3 · 0.5 · (1 + cos(1.4 π)) = 3.455e-4, rising again after 0 at lr(7).
  const std::vector<std::string> w = schedule_warnings(t);
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("lr rises again") != std::string::npos);
  CHECK(w[0].find("lr 0.000345 at step 10") != std::string::npos);
  t.schedule.kind = ScheduleKind::PolynomialDecay;  // clamped at end_lr: stays there
  const std::vector<std::string> p = schedule_warnings(t);
  REQUIRE(p.size() == 1);
  CHECK(p[0].find("the last 3 steps run at the final lr 0") != std::string::npos);
}
