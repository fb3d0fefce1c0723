#include "layers/persistence/checkpoint.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/error.h"
#include "core/platform/io/json_errors.h"
#include "layers/attention/mixer_table.h"
#include "layers/config/model_config_json.h"
#include "layers/config/parameter_floor.h"

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

/// The sizes of `config` that set how much a model allocates, for messages:
/// "d_model 64, 4 layers, vocab_size 100, channel_mixer.d_ff 170".
std::string size_keys(const ModelConfig& c) {
  std::string out = "d_model " + std::to_string(c.d_model) + ", " + std::to_string(c.n_layers) + " layers, vocab_size " +
                    std::to_string(c.vocab_size) + ", channel_mixer.d_ff " + std::to_string(c.channel_mixer.d_ff);
  if (c.head == HeadKind::Classification || c.head == HeadKind::Retrieval)
    out += ", num_classes " + std::to_string(c.num_classes);
  for (const MixerEntry& entry : mixer_table())  // the options that size a mixer's buffers
    if (entry.buffer_option && std::find(c.layers.begin(), c.layers.end(), entry.kind) != c.layers.end())
      out += ", " + entry.buffer_option(c);
  if (c.positional == Positional::Learned) out += ", max_positions " + std::to_string(c.max_positions);
  return out;
}

/// A config edited or crafted to describe a far larger model than its file holds (a vocab_size of
/// 10^12, a d_ff of 10^7 or 2^62, a million layers) would be allocated before load_weights compared
/// the shapes. This compares first the fewest values the config's model holds (parameter_floor)
/// with the values the file's header lists. Throws DataError naming the file and the sizes.
void check_config_fits_tensors(const ModelConfig& config, const SafetensorsHeader& header, const std::string& path) {
  const long double held = static_cast<long double>(header.values());
  const long double at_least = parameter_floor(config);
  if (at_least <= held) return;
  char numbers[96];
  std::snprintf(numbers, sizeof numbers, "at least %.3Lg values but the file holds %.3Lg", at_least, held);
  throw DataError(path + ": its \"transnormer.config\" describes a model of " + numbers + " (" + size_keys(config) +
                  "): the metadata does not belong to these tensors (was the file edited by hand?); use the "
                  "checkpoint the run wrote, or restore its config");
}

/// The "transnormer.config" of a checkpoint's metadata, resolved; DataError when absent or not
/// JSON, ConfigError (naming the file and key) when invalid.
ModelConfig stored_config(const SafetensorsHeader& header, const std::string& path) {
  auto it = header.metadata.find("transnormer.config");
  if (it == header.metadata.end())
    throw DataError(path + ": no \"transnormer.config\" in the safetensors metadata; "
                    "this is not a transnormer checkpoint");
  nlohmann::json config_json;
  try {
    config_json = nlohmann::json::parse(it->second);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(path + ": \"transnormer.config\" in the safetensors metadata is " + json_error_message(e) +
                    "; the file is damaged or was not written by transnormer");
  }
  return model_config_from_json(config_json, path);
}

}  // namespace

LoadedCheckpoint load_checkpoint(const std::string& path) {
  // The header first: the config is checked against the tensors it lists before the model it
  // sizes is built, and before any tensor is read.
  const SafetensorsHeader header = read_safetensors_header(path);
  ModelConfig config = stored_config(header, path);
  check_config_fits_tensors(config, header, path);
  LoadedCheckpoint out;
  out.model = std::make_unique<TransNormerModel>(std::move(config), 0);
  const SafetensorsFile file = load_safetensors(path);
  load_weights(*out.model, file, path);
  if (auto s = file.metadata.find("transnormer.step"); s != file.metadata.end()) {
    const std::string& text = s->second;
    if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos && text.size() < 19)
      out.step = std::stoll(text);
  }
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
  if (!std::filesystem::is_directory(path, ec)) return path;
  const std::filesystem::path dir(path);
  const std::string file = (dir / "checkpoint.safetensors").string();
  if (std::filesystem::exists(file, ec)) return file;
  if (std::filesystem::exists(dir / "sweep.json", ec))
    throw DataError(path + ": a sweep folder; give one of its points' run directories (" + path +
                    "/<point>), or report it with `transnormer report " + path + "`");
  if (std::filesystem::exists(dir / "config.yaml", ec) && !std::filesystem::exists(dir / "summary.json", ec))
    throw DataError(path + ": the run there has no checkpoint.safetensors yet (a run writes its first with its first "
                    "evaluation, train.eval_every); evaluate it once it has one");
  if (std::filesystem::exists(dir / "summary.json", ec))
    throw DataError(path + ": the run kept no checkpoint.safetensors (a smoke test, train --smoke, writes its "
                    "records only); train the spec without --smoke to use its weights");
  throw DataError(path + ": not a run directory (no checkpoint.safetensors); train it first, or give a "
                  "checkpoint file");
}

}  // namespace tn
