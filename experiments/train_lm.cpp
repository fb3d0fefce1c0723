#include "experiments/train_lm.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "core/dnnl/engine.h"
#include "core/error.h"
#include "core/memory_pool.h"
#include "core/io/atomic_file.h"
#include "core/io/safetensors.h"
#include "core/optim/adamw.h"
#include "core/system.h"
#include "data/batching/lm_blocks.h"
#include "data/metrics/unigram.h"
#include "experiments/evaluate.h"
#include "experiments/lm_data.h"
#include "experiments/run_dir.h"
#include "experiments/train_state.h"
#include "layers/checkpoint.h"

namespace tn {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string format_duration(double seconds) {
  const int total = static_cast<int>(std::max(0.0, seconds) + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d:%02d", total / 60, total % 60);
  return buf;
}

/// The stream of training batches: epoch e visits every block once in epoch_order(seed, e),
/// cut into consecutive batches; the last batch of an epoch may be smaller.
class BatchStream {
 public:
  BatchStream(const LmBlocks& blocks, int64_t batch_size, uint64_t seed)
      : blocks_(blocks), batch_size_(batch_size), seed_(seed) {
    order_ = epoch_order(blocks_.count(), seed_, 0);
  }
  /// Fills `batch` with the next batch; returns the epoch it belongs to.
  int64_t next(LmBatch& batch) {
    if (position_ >= static_cast<int64_t>(order_.size())) {
      ++epoch_;
      order_ = epoch_order(blocks_.count(), seed_, static_cast<uint64_t>(epoch_));
      position_ = 0;
    }
    const int64_t end = std::min<int64_t>(order_.size(), position_ + batch_size_);
    ids_.assign(order_.begin() + position_, order_.begin() + end);
    position_ = end;
    make_batch(blocks_, ids_, batch);
    return epoch_;
  }
  int64_t epoch() const { return epoch_; }
  int64_t position() const { return position_; }
  /// Continues from a saved place (epoch, position) of the same blocks, batch size and seed.
  void restore(int64_t epoch, int64_t position) {
    epoch_ = epoch;
    position_ = position;
    order_ = epoch_order(blocks_.count(), seed_, static_cast<uint64_t>(epoch_));
  }
  double epochs_done() const {
    return epoch_ + static_cast<double>(position_) / static_cast<double>(order_.size());
  }

 private:
  const LmBlocks& blocks_;
  int64_t batch_size_;
  uint64_t seed_;
  int64_t epoch_ = 0, position_ = 0;
  std::vector<int64_t> order_, ids_;
};

/// --resume: `run` must hold a run of the same resolved spec (`config_yaml`); only
/// train.max_steps and train.threads may differ. Throws ConfigError naming the missing file or the differing line.
void check_resumable(const RunDir& run, const std::string& config_yaml) {
  auto missing = [&](const std::string& what) {
    return ConfigError(run.path() + ": nothing to resume: " + what +
                       " is missing (a run writes its checkpoint and train state at each "
                       "evaluation); train without --resume to start a new run");
  };
  for (const char* name : {"config.yaml", "checkpoint.safetensors"})
    if (!std::filesystem::exists(run.file(name))) throw missing(name);
  if (!std::filesystem::exists(run.file(kTrainStateFile)) &&
      !std::filesystem::exists(run.file(kPreviousTrainStateFile)))
    throw missing(kTrainStateFile);
  std::istringstream saved(read_file(run.file("config.yaml"))), now(config_yaml);
  std::string a, b;
  for (int64_t line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(saved, a));
    const bool more_b = static_cast<bool>(std::getline(now, b));
    if (!more_a && !more_b) return;
    auto key_of = [](const std::string& l) { return l.substr(0, l.find(':')); };
    if (more_a && more_b && !a.empty() && a[0] == '#' && !b.empty() && b[0] == '#') continue;
    const bool free_key = more_a && more_b && key_of(a) == key_of(b) &&
                          (key_of(a) == "  max_steps" || key_of(a) == "  threads");
    if (more_a && more_b && (a == b || free_key)) continue;
    throw ConfigError(run.file("config.yaml") + ":" + std::to_string(line) +
                      ": the run was trained with `" + (more_a ? a : "(end)") +
                      "`, the spec now gives `" + (more_b ? b : "(end)") +
                      "`; resume with the run's spec (only train.max_steps and threads may change), or "
                      "train into a new --out" +
                      std::string(more_a && a.find("total_steps") != std::string::npos
                                      ? ". This schedule's total_steps follows train.max_steps; "
                                        "to train longer, set train.schedule.total_steps to the "
                                        "run's value"
                                      : ""));
  }
}

}  // namespace

nlohmann::json train_lm(const ExperimentSpec& spec_in, const TrainOptions& options) {
  const auto start = Clock::now();
  ExperimentSpec spec = spec_in;
  const TrainSpec& train = spec.train;
  set_num_threads(train.threads);
  if (spec.model.arch != Arch::Decoder || spec.model.head != HeadKind::LM)
    throw ConfigError(spec.path + ": model: `train` on WikiText needs arch: decoder with the lm head");

  LmData data = load_lm_data(spec.data, options.data_root);
  const int64_t vocab = data.vocab.size();
  if (!spec.vocab_size_given || spec.model.vocab_size == 0) {
    spec.model.vocab_size = vocab;
  } else if (spec.model.vocab_size < vocab) {
    throw ConfigError(spec.path + ": model.vocab_size=" + std::to_string(spec.model.vocab_size) +
                      " is smaller than the training vocabulary (" + std::to_string(vocab) +
                      " words); remove the key to fill it in from the data");
  }
  spec.vocab_size_given = true;
  spdlog::info("data: train {} lines / {} tokens, valid {} tokens, test {} tokens, vocabulary {}",
               data.train_lines, data.train.size(), data.valid.size(), data.test.size(), vocab);

  TransNormerModel model(spec.model, train.seed);
  const int64_t n_params = model.params().parameter_count();
  spdlog::info("model: {} layers, d_model {}, {} heads, {} parameters, {} threads",
               spec.model.n_layers, spec.model.d_model, spec.model.n_heads, n_params, num_threads());

  if (options.resume && !std::filesystem::is_directory(options.out_dir))
    throw ConfigError(options.out_dir + ": nothing to resume: the directory does not exist; "
                      "train without --resume to start a new run");
  RunDir run(options.out_dir);
  const std::string config_yaml = spec_to_yaml(spec);
  if (options.resume) check_resumable(run, config_yaml);

  const LmBlocks blocks{data.train, spec.data.seq_len};
  if (blocks.count() == 0) throw DataError(data.train_file + ": the training split has no targets");
  if (spec.data.seq_len > blocks.total_targets())
    throw ConfigError(spec.path + ": data.seq_len: " + std::to_string(spec.data.seq_len) +
                      " exceeds the training split's " + std::to_string(blocks.total_targets()) +
                      " targets; use a seq_len of at most that (the quickstart uses 256)");
  BatchStream stream(blocks, train.batch_size, train.seed);
  const auto params = model.params().parameters();
  AdamW optimizer(params, {train.optimizer.beta1, train.optimizer.beta2, train.optimizer.eps,
                           train.optimizer.weight_decay});
  const LrSchedule schedule = make_schedule(train.schedule, train.optimizer.lr, train.max_steps);
  Rng dropout_rng(train.seed * 0x9E3779B97F4A7C15ULL + 0x5EEDULL);
  const std::string checkpoint_path = run.file("checkpoint.safetensors");
  const std::string state_path = run.file(kTrainStateFile);
  const std::string previous_state_path = run.file(kPreviousTrainStateFile);
  TrainState resumed;
  bool finishing = false;
  if (!options.resume) {  // a new run: no stale state to resume
    std::filesystem::remove(state_path);
    std::filesystem::remove(previous_state_path);
  }
  if (options.resume) {
    const SafetensorsFile weights = load_safetensors(checkpoint_path);
    auto step_it = weights.metadata.find("transnormer.step");
    const std::string checkpoint_step =
        step_it == weights.metadata.end() ? std::string("none") : step_it->second;
    // The state written with this checkpoint: the current file, or the previous one when the run
    // stopped between writing the new state and the new checkpoint.
    std::string matched;
    for (const std::string& path : {state_path, previous_state_path}) {
      if (!std::filesystem::exists(path)) continue;
      resumed = load_train_state(path, optimizer);
      if (std::to_string(resumed.step) == checkpoint_step) {
        matched = path;
        break;
      }
    }
    if (matched.empty())
      throw DataError(checkpoint_path + ": no train state (" + state_path + ", " +
                      previous_state_path + ") matches its step (" + checkpoint_step +
                      "); they are missing or from another run. Train again without --resume");
    // The matching state becomes the current one, so the next save keeps it as the previous.
    if (matched == previous_state_path) std::filesystem::rename(previous_state_path, state_path);
    if (resumed.epoch < 0 || resumed.position < 0 || resumed.position > blocks.count())
      throw DataError(state_path + ": batch stream position (epoch " +
                      std::to_string(resumed.epoch) + ", block " +
                      std::to_string(resumed.position) + ") outside the " +
                      std::to_string(blocks.count()) +
                      " training blocks; the file was edited or belongs to another run");
    if (resumed.step > train.max_steps)
      throw ConfigError(spec.path + ": train.max_steps=" + std::to_string(train.max_steps) +
                        " is below the " + std::to_string(resumed.step) + " steps the run in " +
                        run.path() + " already did; raise it to continue, e.g. --set "
                        "train.max_steps=" + std::to_string(2 * resumed.step));
    load_weights(model, weights, checkpoint_path);
    stream.restore(resumed.epoch, resumed.position);
    dropout_rng.set_state(resumed.dropout_rng);
    // A run stopped after its last step but before its final evaluations only evaluates now.
    finishing = resumed.step == train.max_steps;
    run.resume_metrics(resumed.step, !finishing);
    spdlog::info("resuming {} after step {} (epoch {:.2f}){}", run.path(), resumed.step,
                 stream.epochs_done(), finishing ? ": final evaluations only" : "");
  }
  run.write_config(config_yaml);

  nlohmann::json summary;
  summary["unigram_valid_ppl"] = data.valid.size() > 1 ? nlohmann::json(unigram_ppl(data.train, data.valid, vocab)) : nlohmann::json(nullptr);
  summary["unigram_test_ppl"] = data.test.size() > 1 ? nlohmann::json(unigram_ppl(data.train, data.test, vocab)) : nlohmann::json(nullptr);

  nlohmann::json evals = resumed.evals;
  double eval_s = resumed.eval_s;
  auto evaluate_split = [&](const char* split, const std::vector<int32_t>& ids, int64_t step) {
    const auto t = Clock::now();
    pool_release_cached();  // training buffers are free between steps: give them back first
    LmEval result = evaluate_lm(model, ids, spec.data.seq_len, train.eval_batch_size);
    pool_release_cached();  // and the evaluation's, so peak memory is max(train, eval), not the sum
    eval_s += seconds_since(t);
    nlohmann::json record = {{"step", step}, {"split", split}, {"loss", result.loss},
                             {"ppl", result.ppl}, {"tokens", result.tokens}};
    run.append_metrics(record);
    evals.push_back(record);
    spdlog::info("step {:>6} | {} loss {:.4f} | ppl {:.2f} | {:.1f} s", step, split, result.loss,
                 result.ppl, seconds_since(t));
    return result;
  };
  double train_s = resumed.train_s;
  int64_t total_tokens = resumed.tokens;
  // Never overwrite the last good checkpoint with diverged weights.
  int64_t saved_step = resumed.step;  // step of the checkpoint on disk, 0 before the first
  auto diverged = [&](const std::string& what, int64_t step) {
    const std::string kept =
        saved_step > 0 ? "the run directory keeps the last good checkpoint, from step " +
                             std::to_string(saved_step)
                       : "no checkpoint was written yet (the first comes with the first "
                         "evaluation)";
    return TrainingDiverged(what + " became non-finite at step " + std::to_string(step) + "; " +
                            kept + ". Lower train.optimizer.lr or set train.clip_norm");
  };
  auto save = [&](int64_t step) {
    for (const auto& [name, var] : params) {
      const float* p = var->value.data();
      for (int64_t i = 0; i < var->value.numel(); ++i)
        if (!std::isfinite(p[i])) throw diverged("parameter " + name, step);
    }
    // The previous state is kept until the new checkpoint is written, so a run stopped at any
    // point leaves a checkpoint and a train state of the same step for --resume.
    TrainState state{step, stream.epoch(), stream.position(), dropout_rng.state(), train_s,
                     eval_s, total_tokens, evals};
    if (std::filesystem::exists(state_path))
      std::filesystem::rename(state_path, previous_state_path);
    save_train_state(state_path, optimizer, state);
    save_checkpoint(checkpoint_path, model, data.vocab.tokens(), step);
    saved_step = step;
  };

  LmBatch batch;
  double window_loss = 0.0, window_s = 0.0;
  int64_t window_tokens = 0, window_steps = 0;
  double last_grad_norm = 0.0;
  Tape tape;
  tape.set_bf16(train.precision == "bf16");  // evaluation stays f32 (the master weights)
  std::vector<LmBatch> micro(train.update_freq);
  for (int64_t step = resumed.step + 1; step <= train.max_steps; ++step) {
    const auto step_start = Clock::now();
    int64_t epoch = 0, step_targets = 0;
    for (auto& m : micro) {
      epoch = stream.next(m);
      step_targets += m.n_targets;
    }
    model.params().zero_grad();
    double step_nll = 0.0;
    for (auto& m : micro) {
      ForwardContext ctx{tape, true, dropout_rng, nullptr};
      Var hidden = model.forward(ctx, m.inputs, m.rows, m.seq_len);
      LmLoss loss = model.lm_loss(ctx, hidden, m.targets);
      if (!std::isfinite(loss.sum_nll)) {
        tape.clear();
        throw diverged("the training loss", step);
      }
      step_nll += loss.sum_nll;
      tape.backward(loss.loss, static_cast<float>(loss.n_targets) / static_cast<float>(step_targets));
    }
    last_grad_norm = clip_grad_norm(params, train.clip_norm);
    // A non-finite gradient would poison every weight through AdamW: stop before the update.
    if (!std::isfinite(last_grad_norm)) throw diverged("the gradient norm", step);
    const double lr = schedule.lr(step - 1);
    optimizer.step(lr);
    const double dt = seconds_since(step_start);
    train_s += dt;
    window_s += dt;
    total_tokens += step_targets;
    window_tokens += step_targets;
    window_loss += step_nll;
    ++window_steps;

    if ((train.log_every > 0 && step % train.log_every == 0) || step == train.max_steps) {
      const double tokens_per_s = window_tokens / window_s;
      const double mean_loss = window_loss / static_cast<double>(window_tokens);
      run.append_metrics({{"step", step}, {"epoch", stream.epochs_done()}, {"loss", mean_loss},
                          {"lr", lr}, {"grad_norm", last_grad_norm},
                          {"tokens_per_s", tokens_per_s}, {"train_s", train_s}});
      const double eta = train_s / step * (train.max_steps - step);
      spdlog::info("step {:>6}/{} | epoch {:.2f} | loss {:.4f} | lr {:.3e} | gnorm {:.3f} | "
                   "{:.0f} tok/s | ETA {}",
                   step, train.max_steps, stream.epochs_done(), mean_loss, lr, last_grad_norm,
                   tokens_per_s, format_duration(eta));
      window_loss = 0.0;
      window_tokens = 0;
      window_s = 0.0;
      window_steps = 0;
    }
    (void)epoch;
    const bool last = step == train.max_steps;
    if (!data.valid.empty() && ((train.eval_every > 0 && step % train.eval_every == 0) || last)) {
      LmEval v = evaluate_split("valid", data.valid, step);
      if (!std::isfinite(v.loss)) throw diverged("the validation loss", step);
      if (last) summary["valid"] = {{"loss", v.loss}, {"ppl", v.ppl}, {"tokens", v.tokens}};
      save(step);
    }
    if (!data.test.empty() && ((train.test_every > 0 && step % train.test_every == 0) || last)) {
      LmEval t = evaluate_split("test", data.test, step);
      if (last) summary["test"] = {{"loss", t.loss}, {"ppl", t.ppl}, {"tokens", t.tokens}};
    }
  }
  if (finishing) {
    if (!data.valid.empty()) {
      LmEval v = evaluate_split("valid", data.valid, train.max_steps);
      summary["valid"] = {{"loss", v.loss}, {"ppl", v.ppl}, {"tokens", v.tokens}};
    }
    if (!data.test.empty()) {
      LmEval t = evaluate_split("test", data.test, train.max_steps);
      summary["test"] = {{"loss", t.loss}, {"ppl", t.ppl}, {"tokens", t.tokens}};
    }
  }
  save(train.max_steps);
  summary["train"] = {{"steps", train.max_steps},
                      {"epochs", stream.epochs_done()},
                      {"tokens", total_tokens},
                      {"tokens_per_s", total_tokens / train_s},
                      {"wall_s", train_s},
                      {"eval_s", eval_s},
                      {"total_s", seconds_since(start)},
                      {"threads", num_threads()},
                      {"seed", train.seed}};
  summary["vocab_size"] = spec.model.vocab_size;
  summary["params"] = n_params;
  summary["data"] = {{"train", data.train_file}, {"valid", data.valid_file}, {"test", data.test_file}};
  summary["peak_rss_mb"] = peak_rss_mb();
  summary["evals"] = evals;
  run.write_summary(summary);
  spdlog::info("done in {}: {:.0f} train tokens/s, peak RSS {:.0f} MB; outputs in {}",
               format_duration(seconds_since(start)), total_tokens / train_s, peak_rss_mb(),
               run.path());
  return summary;
}

}  // namespace tn
