// Sizes in a checkpoint's stored config (hostile-input campaign, class 1). A config that says
// channel_mixer.d_ff, num_classes or attention.performer.features is 2^62 (or d_ff 2^59 + 12345,
// or 10^7 in a 600 KB file) is refused, naming the file and the sizes, before the model it
// describes is built or any tensor read: those values once wrapped a weight's size (SIGSEGV,
// malloc(): invalid size) or took 3 GB. A block_size beyond the sequence sizes nothing: its block
// is the whole sequence.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/runtime/autograd/tape.h"
#include "core/error.h"
#include "core/platform/io/safetensors.h"
#include "core/runtime/rng.h"
#include "layers/attention/attention_ops.h"
#include "layers/attention/kv_cache.h"
#include "layers/persistence/checkpoint.h"
#include "layers/config/model_config_json.h"
#include "layers/config/parameter_floor.h"
#include "tests/temp_dir.h"
#include "tests/test_paths.h"

using namespace tn;
using nlohmann::json;

namespace {

constexpr int64_t k2to62 = int64_t{1} << 62;

/// The peak resident memory of this process so far, in bytes.
int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

/// dec_t1's tensors with its stored config changed by `edit`, written to `path`.
void write_crafted(const std::string& path, const std::function<void(json&)>& edit) {
  const SafetensorsFile file = load_safetensors(test::golden_root() + "/dec_t1/model.safetensors");
  json config = json::parse(file.metadata.at("transnormer.config"));
  edit(config);
  std::map<std::string, std::string> metadata = file.metadata;
  metadata["transnormer.config"] = config.dump();
  save_safetensors(path, file.tensors, metadata);
}

/// What loading `path` throws: the message of a DataError or ConfigError (a refusal), or FAIL.
std::string refusal(const std::string& path) {
  try {
    (void)load_checkpoint(path);
  } catch (const DataError& e) {
    return e.what();
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("the crafted checkpoint was accepted");
  return "";
}

Tensor randn(const Shape& shape, Rng& rng) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(rng.normal());
  return t;
}

}  // namespace

TEST_CASE("checkpoint sizes: a stored config whose sizes overflow or exceed the file is refused before the model is built") {
  const test::TempDir tmp("hostile_checkpoint_sizes");
  const std::string path = tmp.file("checkpoint.safetensors");
  struct Case {
    const char* name;
    std::function<void(json&)> edit;
    const char* key;  // named in the message
  };
  const std::vector<Case> cases = {
      {"d_ff 2^62", [](json& c) { c["channel_mixer"]["d_ff"] = k2to62; }, "d_ff"},
      {"d_ff 2^59 + 12345", [](json& c) { c["channel_mixer"]["d_ff"] = (int64_t{1} << 59) + 12345; }, "d_ff"},
      {"d_ff 10^7", [](json& c) { c["channel_mixer"]["d_ff"] = 10000000; }, "d_ff"},
      {"num_classes 2^62",
       [](json& c) {
         c["head"] = "classification";
         c["num_classes"] = k2to62;
       },
       "num_classes"},
      {"num_classes 10^8",
       [](json& c) {
         c["head"] = "classification";
         c["num_classes"] = 100000000;
       },
       "num_classes"},
      {"performer features 2^62",
       [](json& c) {
         c["layers"][0] = "performer";
         c["attention"]["performer"]["features"] = k2to62;
       },
       "features"},
      {"performer features 10^7",
       [](json& c) {
         c["layers"][0] = "performer";
         c["attention"]["performer"]["features"] = 10000000;
       },
       "features"},
  };
  const int64_t rss_before = peak_rss_bytes();
  for (const Case& c : cases) {
    INFO(c.name);
    write_crafted(path, c.edit);
    const std::string message = refusal(path);
    INFO(message);
    CHECK(message.find(path) != std::string::npos);
    CHECK(message.find(c.key) != std::string::npos);
    CHECK(message.find("lower the batch") == std::string::npos);
  }
  // Nothing the crafted sizes ask for was allocated (d_ff 10^7 once took 2.6-3.3 GB).
  CHECK(peak_rss_bytes() - rss_before < (int64_t{256} << 20));
}

TEST_CASE("checkpoint sizes: the parameter floor never exceeds a real model's values") {
  for (const char* name : {"dec_t1", "dec_performer", "dec_softmax", "enc_cosformer", "enc_t1_cls"}) {
    INFO(name);
    const std::string file = test::golden_root() + "/" + name + "/model.safetensors";
    const SafetensorsHeader header = read_safetensors_header(file);
    const LoadedCheckpoint ckpt = load_checkpoint(file);
    CHECK(parameter_floor(ckpt.model->config()) <= static_cast<long double>(header.values()));
    CHECK(parameter_floor(ckpt.model->config()) > 0.5L * static_cast<long double>(header.values()));
  }
}

TEST_CASE("checkpoint sizes: a diag block longer than the sequence is the whole sequence, and sizes nothing") {
  Rng rng(5);
  const int64_t B = 2, T = 9, H = 2, D = 8;
  const Var q = make_var(randn({B, T, H * D}, rng)), k = make_var(randn({B, T, H * D}, rng)),
            v = make_var(randn({B, T, H * D}, rng));
  Tape tape;
  tape.set_enabled(false);
  const Tensor whole = diag_attention(tape, q, k, v, H, T, DiagInnerKind::Softmax, true, nullptr)->value;
  // A block of 2^40 (or 2^62) positions kept [B, H, T, 2^40] probabilities: 2^45 floats.
  for (const int64_t block : {int64_t{1} << 40, k2to62, int64_t{1000000}}) {
    INFO(block);
    const Tensor big = diag_attention(tape, q, k, v, H, block, DiagInnerKind::Softmax, true, nullptr)->value;
    CHECK(big.to_vector() == whole.to_vector());
  }
  // Decoding reserves a cache of at most KvCache::kMaxReservedRows rows, whatever the block.
  KvCache cache(H, D, k2to62);
  CHECK(cache.size_bytes() <= static_cast<int64_t>(KvCache::kMaxReservedRows * 2 * H * D * sizeof(float) + 4096 * 16));
}
