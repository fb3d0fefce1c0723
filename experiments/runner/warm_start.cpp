#include "experiments/runner/warm_start.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/platform/io/json_errors.h"

namespace tn {
namespace {

std::string list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

}  // namespace

InitFromReport warm_start(TransNormerModel& model, const std::string& init_from,
                          const std::vector<std::string>& vocabulary) {
  const std::string path = init_from_checkpoint_path(init_from);
  const SafetensorsFile file = load_safetensors(path);
  if (const auto v = file.metadata.find("transnormer.vocab"); v != file.metadata.end() && !vocabulary.empty()) {
    std::vector<std::string> theirs;
    try {
      theirs = nlohmann::json::parse(v->second).get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception& e) {
      throw DataError(path + ": \"transnormer.vocab\" is not a JSON list of strings: " + json_error_message(e));
    }
    if (theirs != vocabulary) {
      size_t first = 0;
      while (first < theirs.size() && first < vocabulary.size() && theirs[first] == vocabulary[first]) ++first;
      throw ConfigError("train.init_from: " + path + " was trained with another vocabulary (" +
                        std::to_string(theirs.size()) + " tokens against this run's " +
                        std::to_string(vocabulary.size()) + ", first difference at id " + std::to_string(first) +
                        "); fine-tune with the tokenizer and dictionary of the pretraining run");
    }
  }
  const InitFromReport r = init_from_weights(model, file, path);
  spdlog::info("init_from {}: {} tensors loaded; new: {}; initialised anew (the checkpoint's head is another): {}; "
               "ignored: {}", path, r.loaded.size(), list(r.created), list(r.replaced), list(r.ignored));
  return r;
}

std::string smoke_init_from(const std::string& init_from) {
  try {
    return init_from_checkpoint_path(init_from);
  } catch (const ConfigError&) {
    spdlog::warn("smoke test: train.init_from {} holds no weights yet (not trained, or a smoke test, which keeps "
                 "none): this smoke test starts from random weights; the real run needs them", init_from);
    return "";
  }
}

}  // namespace tn
