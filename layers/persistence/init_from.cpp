#include "layers/persistence/init_from.h"

#include <filesystem>

#include "core/error.h"
#include "layers/config/model_config_json.h"

namespace tn {

namespace {

/// The checkpoint model's head ("mlm", "classification", ...), or "" when it has no readable config.
std::string checkpoint_head(const SafetensorsFile& file) {
  const auto it = file.metadata.find("transnormer.config");
  if (it == file.metadata.end()) return "";
  try {
    return nlohmann::json::parse(it->second).value("head", "");
  } catch (const nlohmann::json::exception&) {
    return "";
  }
}

bool is_head(const std::string& name) { return name.rfind("head.", 0) == 0; }

}  // namespace

InitFromReport init_from_weights(TransNormerModel& model, const SafetensorsFile& file, const std::string& where) {
  InitFromReport report;
  const std::string ours = model_config_to_json(model.config()).value("head", "");
  const bool same_head = !ours.empty() && checkpoint_head(file) == ours;
  const auto& entries = model.params().entries();
  for (const auto& [name, var] : entries) {
    const auto it = file.tensors.find(name);
    if (it == file.tensors.end()) {
      report.created.push_back(name);
      continue;
    }
    if (is_head(name) && !same_head) {
      report.replaced.push_back(name);
      continue;
    }
    if (it->second.shape() != var->value.shape())
      throw ConfigError(where + ": parameter " + name + " has shape " + shape_str(it->second.shape()) +
                        " in the checkpoint but " + shape_str(var->value.shape()) +
                        " in this model; train.init_from needs the pretrained model's sizes (d_model, n_layers, "
                        "vocabulary, max_positions): copy its model section");
    report.loaded.push_back(name);
  }
  for (const auto& [name, tensor] : file.tensors)
    if (!entries.count(name)) report.ignored.push_back(name);  // the model's own are loaded or replaced
  for (const std::string& name : report.loaded) {
    entries.at(name)->value.copy_from(file.tensors.at(name));
    entries.at(name)->values_changed();
  }
  return report;
}

std::string init_from_checkpoint_path(const std::string& init_from) {
  std::error_code ec;
  if (std::filesystem::is_directory(init_from, ec)) {
    const std::string path = (std::filesystem::path(init_from) / "checkpoint.safetensors").string();
    if (!std::filesystem::exists(path, ec) && std::filesystem::exists(std::filesystem::path(init_from) / "summary.json", ec))
      throw ConfigError("train.init_from: " + init_from + " is a finished run that kept no checkpoint.safetensors (a "
                        "smoke test, train --smoke, writes its records only); pretrain without --smoke, or train from "
                        "random weights with --set train.init_from=null");
    if (!std::filesystem::exists(path, ec))
      throw ConfigError("train.init_from: " + init_from +
                        " has no checkpoint.safetensors; has the pretraining run finished its first evaluation? "
                        "(to train from random weights instead: --set train.init_from=null)");
    return path;
  }
  if (!std::filesystem::exists(init_from, ec))
    throw ConfigError("train.init_from: " + init_from +
                      ": no such run directory or checkpoint (relative paths are taken from the current directory); "
                      "pretrain it first, or train from random weights with --set train.init_from=null");
  return init_from;
}

}  // namespace tn
