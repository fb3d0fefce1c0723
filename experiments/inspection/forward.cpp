#include "experiments/inspection/forward.h"

#include <cmath>

#include "core/error.h"
#include "core/runtime/ignore_index.h"
#include "core/platform/io/json_errors.h"
#include "core/runtime/ops/cross_entropy.h"

namespace tn {
namespace {

enum class ForwardTask { Lm, Classification, Retrieval };

/// Checks one id from the input: in [0, limit), or the ignore index when `may_ignore` (targets).
int32_t checked_id(const nlohmann::json& v, int64_t limit, bool may_ignore, const std::string& key,
                   const std::string& where) {
  if (!v.is_number_integer()) throw DataError(where + ": \"" + key + "\" holds a non-integer value " + v.dump());
  const int64_t id = v.get<int64_t>();
  if ((id < 0 || id >= limit) && !(may_ignore && id == kIgnoreIndex))
    throw DataError(where + ": \"" + key + "\" holds " + std::to_string(id) + ", outside [0, " + std::to_string(limit) +
                    ") of the checkpoint's " + (key == "targets" && !may_ignore ? "classes" : "vocabulary") +
                    (may_ignore ? " (or " + std::to_string(kIgnoreIndex) + " to ignore a position)" : "") +
                    "; give ids the checkpoint knows");
  return static_cast<int32_t>(id);
}

std::vector<int32_t> flatten_ids(const nlohmann::json& rows, int64_t batch, int64_t seq_len, int64_t limit,
                                 bool may_ignore, const std::string& key, const std::string& where) {
  if (!rows.is_array() || static_cast<int64_t>(rows.size()) != batch)
    throw DataError(where + ": \"" + key + "\" must be a list of " + std::to_string(batch) + " rows");
  for (const auto& row : rows)
    if (!row.is_array() || static_cast<int64_t>(row.size()) != seq_len)
      throw DataError(where + ": every row of \"" + key + "\" must hold " +
                      std::to_string(seq_len) + " integers");
  std::vector<int32_t> out;
  out.reserve(static_cast<size_t>(batch * seq_len));  // the values the input holds: checked above
  for (const auto& row : rows)
    for (const auto& v : row) out.push_back(checked_id(v, limit, may_ignore, key, where));
  return out;
}

/// A size of the input ("batch", "seq_len"): an integer in [1, 2^20], so products of them fit.
int64_t required_int(const nlohmann::json& input, const char* key, const std::string& where) {
  constexpr int64_t kMax = int64_t{1} << 20;
  if (!input.contains(key) || !input[key].is_number_integer() || input[key].get<int64_t>() < 1 ||
      input[key].get<int64_t>() > kMax)
    throw DataError(where + ": \"" + key + "\" must be a positive integer up to " + std::to_string(kMax) +
                    " (the rows, or the tokens of each row, the input holds)");
  return input[key].get<int64_t>();
}

nlohmann::json rows_to_json(const Tensor& t) {
  nlohmann::json out = nlohmann::json::array();
  const int64_t cols = t.dim(1);
  for (int64_t i = 0; i < t.dim(0); ++i)
    out.push_back(std::vector<float>(t.data() + i * cols, t.data() + (i + 1) * cols));
  return out;
}

/// The input's task: "lm" (the default), "classification" or "retrieval"; it must match the
/// checkpoint's head (lm and mlm heads score tokens).
ForwardTask read_task(const nlohmann::json& input, HeadKind head, const std::string& where) {
  const std::string name = input.value("task", "lm");
  ForwardTask task = ForwardTask::Lm;
  if (name == "classification")
    task = ForwardTask::Classification;
  else if (name == "retrieval")
    task = ForwardTask::Retrieval;
  else if (name != "lm")
    throw DataError(where + ": task \"" + name + "\" is unknown; use \"lm\", \"classification\" or \"retrieval\"");
  const ForwardTask expected = head == HeadKind::Classification ? ForwardTask::Classification
                               : head == HeadKind::Retrieval    ? ForwardTask::Retrieval
                                                                : ForwardTask::Lm;
  if (task != expected) throw DataError(where + ": task \"" + name + "\" does not match the checkpoint's head");
  return task;
}

/// "training": true runs the forward in training mode (BatchNorm on the batch's statistics, which
/// also updates its running ones; dropout at the checkpoint's rates); absent or false: eval mode.
bool read_training(const nlohmann::json& input, const std::string& where) {
  if (!input.contains("training")) return false;
  if (!input["training"].is_boolean()) throw DataError(where + ": \"training\" must be true or false");
  return input["training"].get<bool>();
}

/// One class id per pair or sequence, each in [0, classes).
std::vector<int32_t> read_labels(const nlohmann::json& labels, int64_t batch, int64_t classes, const std::string& where) {
  if (!labels.is_array() || static_cast<int64_t>(labels.size()) != batch)
    throw DataError(where + ": \"targets\" must hold one class id per row (" + std::to_string(batch) + ")");
  std::vector<int32_t> out;
  for (const auto& v : labels) out.push_back(checked_id(v, classes, false, "targets", where));
  return out;
}

/// out["logits_first"] and out["logits_last"]: every sequence's logits at positions 0 and T-1.
void first_and_last_logits(TransNormerModel& model, const Var& hidden, int64_t batch, int64_t seq_len,
                           nlohmann::json& out) {
  std::vector<int64_t> first, last;
  for (int64_t b = 0; b < batch; ++b) {
    first.push_back(b * seq_len);
    last.push_back(b * seq_len + seq_len - 1);
  }
  Tape no_grad;
  no_grad.set_enabled(false);
  Rng rng(0);
  ForwardContext eval_ctx{no_grad, false, rng, nullptr};
  out["logits_first"] = rows_to_json(model.token_logits(eval_ctx, hidden, first));
  out["logits_last"] = rows_to_json(model.token_logits(eval_ctx, hidden, last));
}

/// out["grad_norms"] {name: L2 of its gradient} and out["grad_global_norm"], after the backward.
void add_gradient_norms(TransNormerModel& model, nlohmann::json& out) {
  double global = 0.0;
  nlohmann::json grad_norms = nlohmann::json::object();
  for (const auto& [name, var] : model.params().parameters()) {
    double acc = 0.0;
    if (var->has_grad())
      for (int64_t i = 0; i < var->grad().numel(); ++i) acc += static_cast<double>(var->grad().data()[i]) * var->grad().data()[i];
    grad_norms[name] = std::sqrt(acc);
    global += acc;
  }
  out["grad_norms"] = grad_norms;
  out["grad_global_norm"] = std::sqrt(global);
}

}  // namespace

nlohmann::json parse_forward_input(std::string_view text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range 406 for 1e999
    throw DataError(where + ": " + json_error_message(e));
  }
}

nlohmann::json run_forward(TransNormerModel& model, const nlohmann::json& input, bool grads,
                           const std::string& where) {
  if (!input.is_object()) throw DataError(where + ": expected a JSON object");
  const ForwardTask task = read_task(input, model.config().head, where);
  const int64_t batch = required_int(input, "batch", where);
  const int64_t seq_len = required_int(input, "seq_len", where);
  const bool training = read_training(input, where);
  if (!input.contains("tokens") || !input.contains("targets"))
    throw DataError(where + ": \"tokens\" and \"targets\" are required");
  const int64_t vocab = model.config().vocab_size;
  const int64_t sequences = task == ForwardTask::Retrieval ? 2 * batch : batch;
  const auto tokens = flatten_ids(input["tokens"], sequences, seq_len, vocab, false, "tokens", where);
  const auto targets = task == ForwardTask::Lm ? flatten_ids(input["targets"], batch, seq_len, vocab, true, "targets", where)
                                               : read_labels(input["targets"], batch, model.config().num_classes, where);

  Tape tape;
  tape.set_enabled(grads);
  Rng rng(0);
  ForwardContext ctx{tape, training, rng, nullptr};
  model.params().zero_grad();
  std::vector<double> norms;
  Var hidden = model.forward(ctx, tokens, sequences, seq_len, &norms);
  nlohmann::json out;
  LmLoss loss;
  if (task == ForwardTask::Lm) {
    loss = model.lm_loss(ctx, hidden, targets);
    first_and_last_logits(model, hidden, batch, seq_len, out);
  } else {
    Var logits = task == ForwardTask::Retrieval ? model.retrieve(ctx, hidden, nullptr) : model.classify(ctx, hidden);
    loss = cross_entropy(ctx.tape, logits, targets);
    out["logits"] = rows_to_json(logits->value);
  }
  out["loss"] = loss.n_targets ? loss.sum_nll / static_cast<double>(loss.n_targets) : 0.0;
  out["hidden_norms"] = {{"embed", norms.front()},
                         {"layers", std::vector<double>(norms.begin() + 1, norms.end() - 1)},
                         {"final", norms.back()}};
  if (grads) {
    tape.backward(loss.loss);
    add_gradient_norms(model, out);
  }
  return out;
}

}  // namespace tn
