#include "layers/checkpoint.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/error.h"
#include "layers/inputs/input_table.h"
#include "layers/model_config_json.h"

namespace tn {

void save_checkpoint(const std::string& path, const TransNormerModel& model,
                     const std::vector<std::string>& vocab, int64_t step) {
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, var] : model.params().entries()) tensors[name] = var->value;
  std::map<std::string, std::string> metadata;
  metadata["transnormer.config"] = model_config_to_json(model.config()).dump();
  if (!vocab.empty()) metadata["transnormer.vocab"] = nlohmann::json(vocab).dump();
  if (step >= 0) metadata["transnormer.step"] = std::to_string(step);
  save_safetensors(path, tensors, metadata);
}

void load_weights(TransNormerModel& model, const SafetensorsFile& file, const std::string& where) {
  std::string problems;
  const auto& entries = model.params().entries();
  for (const auto& [name, var] : entries) {
    auto it = file.tensors.find(name);
    if (it == file.tensors.end()) {
      problems += "\n  missing tensor " + name + " " + shape_str(var->value.shape());
    } else if (it->second.shape() != var->value.shape()) {
      problems += "\n  tensor " + name + " has shape " + shape_str(it->second.shape()) +
                  ", the model expects " + shape_str(var->value.shape());
    }
  }
  for (const auto& [name, tensor] : file.tensors)
    if (!entries.count(name)) problems += "\n  unexpected tensor " + name;
  for (const auto& [name, tensor] : file.tensors) {  // NaN or Inf would make every output garbage
    const float* v = tensor.data();
    for (int64_t i = 0; i < tensor.numel(); ++i)
      if (!std::isfinite(v[i])) {
        problems += "\n  tensor " + name + " holds " + (std::isnan(v[i]) ? "NaN" : "Inf") + " (element " +
                    std::to_string(i) + "): the run that wrote it had diverged";
        break;
      }
  }
  for (const auto& [name, dtype] : file.dtypes)  // weights are real numbers: no silent int casts
    if (dtype != "F32" && dtype != "F64" && dtype != "F16" && dtype != "BF16")
      problems += "\n  tensor " + name + " is stored as " + dtype + ", not as floating point";
  if (!problems.empty())
    throw DataError(where + ": tensors do not match the model of its config:" + problems +
                    "\n  (was the file written for another model or edited by hand?)");
  for (const auto& [name, var] : entries) {
    var->value.copy_from(file.tensors.at(name));
    var->values_changed();
  }
}

namespace {

/// A config edited or crafted to describe a far larger model than its file holds (a vocab_size of
/// 10^12, a d_model of 2^20, a million layers) would be allocated before load_weights compared the
/// shapes. This compares first a lower bound of the config's parameter count with the values the
/// file holds: the input's own parameters (the input table's count: vocab_size × d_model for a
/// token embedding), and every layer's token mixer projects q, k and v (3·d_model² weights; the
/// output projection is optional in cosFormer). Throws DataError naming the file.
void check_config_fits_tensors(const ModelConfig& config, const SafetensorsFile& file,
                               const std::string& path) {
  long double held = 0;
  for (const auto& [name, tensor] : file.tensors) held += static_cast<long double>(tensor.numel());
  const long double d = static_cast<long double>(config.d_model);
  const long double at_least = static_cast<long double>(input_entry(config.input.kind).parameters(config)) +
                                static_cast<long double>(config.n_layers) * 3 * d * d;
  if (at_least <= held) return;
  char numbers[160];
  std::snprintf(numbers, sizeof numbers, "at least %.3g parameters (d_model %lld, %lld layers, vocab_size %lld)",
                static_cast<double>(at_least), static_cast<long long>(config.d_model),
                static_cast<long long>(config.n_layers), static_cast<long long>(config.vocab_size));
  char held_text[40];
  std::snprintf(held_text, sizeof held_text, "%.3g", static_cast<double>(held));
  throw DataError(path + ": its \"transnormer.config\" describes a model of " + numbers + " but the file holds " +
                  held_text + " values: the metadata does not belong to these tensors (was the file edited by hand?)");
}

}  // namespace

LoadedCheckpoint load_checkpoint(const std::string& path) {
  SafetensorsFile file = load_safetensors(path);
  auto it = file.metadata.find("transnormer.config");
  if (it == file.metadata.end())
    throw DataError(path + ": no \"transnormer.config\" in the safetensors metadata; "
                    "this is not a transnormer checkpoint");
  nlohmann::json config_json;
  try {
    config_json = nlohmann::json::parse(it->second);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(path + ": \"transnormer.config\" is not valid JSON: " + e.what());
  }
  LoadedCheckpoint out;
  ModelConfig config = model_config_from_json(config_json, path);
  check_config_fits_tensors(config, file, path);  // before building: the config sizes the allocation
  out.model = std::make_unique<TransNormerModel>(std::move(config), 0);
  load_weights(*out.model, file, path);
  if (auto v = file.metadata.find("transnormer.vocab"); v != file.metadata.end()) {
    try {
      out.vocab = nlohmann::json::parse(v->second).get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception& e) {
      throw DataError(path + ": \"transnormer.vocab\" is not a JSON list of strings: " + e.what());
    }
    const int64_t rows = out.model->config().vocab_size;
    if (static_cast<int64_t>(out.vocab.size()) != rows)
      throw DataError(path + ": its \"transnormer.vocab\" has " + std::to_string(out.vocab.size()) +
                      " tokens but the model's vocab_size is " + std::to_string(rows) +
                      ": the vocabulary does not belong to these weights (was the file edited by hand?)");
  }
  return out;
}

std::string checkpoint_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return (std::filesystem::path(path) / "checkpoint.safetensors").string();
  return path;
}

}  // namespace tn
