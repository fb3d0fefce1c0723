#include "experiments/runner/train_state.h"

#include <map>

#include "core/error.h"
#include "core/platform/io/json_errors.h"
#include "core/platform/io/safetensors.h"

namespace tn {
namespace {
constexpr const char* kKey = "transnormer.train_state";
}  // namespace

void save_train_state(const std::string& path, const AdamW& optimizer, const TrainState& state) {
  const AdamW& adam = optimizer;
  std::map<std::string, Tensor> tensors;
  const auto& params = adam.params();
  for (size_t i = 0; i < params.size(); ++i) {
    tensors["exp_avg." + params[i].first] = adam.exp_avg()[i];
    tensors["exp_avg_sq." + params[i].first] = adam.exp_avg_sq()[i];
  }
  nlohmann::json evals = nlohmann::json::array();
  for (const EvalRecord& r : state.evals) evals.push_back(r.to_json());
  const nlohmann::json meta = {{"step", state.step},
                               {"adam_steps", adam.steps()},
                               {"stream", state.stream},
                               {"dropout_rng", std::to_string(state.dropout_rng)},
                               {"train_s", state.train_s},
                               {"eval_s", state.eval_s},
                               {"eval_tokens", state.eval_tokens},
                               {"tokens", state.tokens},
                               {"evals", evals},
                               {"log_window", state.log_window},
                               {"analysis", state.analysis},
                               {"best", state.best},
                               {"stopped_early", state.stopped_early}};
  save_safetensors(path, tensors, {{kKey, meta.dump()}});
}

TrainState load_train_state(const std::string& path, AdamW& optimizer) {
  SafetensorsFile file = load_safetensors(path);
  auto it = file.metadata.find(kKey);
  if (it == file.metadata.end())
    throw DataError(path + ": no \"" + std::string(kKey) +
                    "\" metadata; this is not a train_state file written by `transnormer train`");
  TrainState state;
  try {
    const nlohmann::json meta = nlohmann::json::parse(it->second);
    state.step = meta.at("step").get<int64_t>();
    optimizer.set_steps(meta.at("adam_steps").get<int64_t>());
    state.stream = meta.at("stream");
    state.dropout_rng = std::stoull(meta.at("dropout_rng").get<std::string>());
    state.train_s = meta.at("train_s").get<double>();
    state.eval_s = meta.at("eval_s").get<double>();
    state.eval_tokens = meta.value("eval_tokens", int64_t{0});  // absent in older states
    state.tokens = meta.at("tokens").get<int64_t>();
    for (const nlohmann::json& r : meta.at("evals")) state.evals.push_back(EvalRecord::from_json(r));
    if (meta.contains("log_window")) state.log_window = meta["log_window"];
    if (meta.contains("analysis")) state.analysis = meta["analysis"];
    if (meta.contains("best")) state.best = meta["best"];
    state.stopped_early = meta.value("stopped_early", false);
  } catch (const std::exception& e) {
    throw DataError(path + ": corrupt train state metadata (" + json_error_message(e) + ")");
  }
  const auto& params = optimizer.params();
  size_t expected = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& name = params[i].first;
    const Shape& shape = params[i].second->value.shape();
    for (auto [prefix, dst] : {std::pair{"exp_avg.", &optimizer.exp_avg()[i]},
                               std::pair{"exp_avg_sq.", &optimizer.exp_avg_sq()[i]}}) {
      auto t = file.tensors.find(prefix + name);
      if (t == file.tensors.end())
        throw DataError(path + ": missing optimizer state \"" + prefix + name +
                        "\"; the run's model differs from this spec's");
      if (t->second.shape() != shape)
        throw DataError(path + ": optimizer state \"" + prefix + name + "\" has shape " +
                        shape_str(t->second.shape()) + ", the parameter " + shape_str(shape));
      dst->copy_from(t->second);
      ++expected;
    }
  }
  if (file.tensors.size() != expected)
    throw DataError(path + ": " + std::to_string(file.tensors.size() - expected) +
                    " optimizer tensors belong to no parameter of this model");
  return state;
}

}  // namespace tn
