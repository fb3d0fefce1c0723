// Training gives the same bits on any thread count: sweeps run their points on one thread while
// users train on all cores, and both must reach the same model. Small models covering every token
// mixer, norm, channel mixer, positional encoding and head the quickstart and the LRA configs use
// train a few steps on 1, 2 and 3 threads; every step's loss and gradient norm and every parameter
// and buffer afterwards are compared bit for bit. The sizes are above the thresholds at which the
// ops go parallel (core/runtime/parallel.h) and the products are cut into tiles (core/runtime/dnnl/matmul_tiling.h).
//
// Each thread count trains in a process of its own (this binary run again on the one test case,
// TN_THREAD_TRACE naming the thread count and the trace file): a oneDNN primitive keeps the thread
// count in force when it was made and the caches are keyed by shape, so in one process the runs
// after the first would reuse its primitives and hide a oneDNN op whose bits follow the count.
#include <doctest/doctest.h>
#include <omp.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/runtime/rng.h"
#include "experiments/runner/train_step.h"
#include "experiments/tasks/language_modeling.h"
#include "experiments/tasks/sequence_classification.h"
#include "layers/config/model_config_json.h"
#include "tests/temp_dir.h"

using namespace tn;

namespace {

/// What a run leaves: per step the loss sum and the gradient norm, then every tensor of the model,
/// as the bytes of their values.
struct Trace {
  std::string losses, grad_norms;
  std::map<std::string, std::string> tensors;
};

template <class T>
std::string bytes_of(const T* p, size_t n) {
  return std::string(reinterpret_cast<const char*>(p), n * sizeof(T));
}

/// `steps` updates of the model `model_json` (seed 3) on this process's threads, each update over
/// `batches` (train.update_freq of them, the same ones every step).
Trace train_here(const nlohmann::json& model_json, const TrainSpec& train, const Objective& objective,
                 const std::vector<std::unique_ptr<Batch>>& batches, int steps) {
  TransNormerModel model(model_config_from_json(model_json, "test"), 3);
  TrainStep step(model, train, single_process());
  Tape tape;
  std::vector<double> losses, norms;
  for (int s = 1; s <= steps; ++s) {
    const StepResult r = step.run(objective, batches, s, tape);
    REQUIRE(r.non_finite == nullptr);
    losses.push_back(r.loss_sum);
    norms.push_back(r.grad_norm);
  }
  Trace trace{bytes_of(losses.data(), losses.size()), bytes_of(norms.data(), norms.size()), {}};
  for (const auto& [name, var] : model.params().entries())
    trace.tensors[name] = bytes_of(var->value.data(), size_t(var->value.numel()));
  return trace;
}

/// One field as "<size> <bytes>" so that a trace reads back unambiguously.
void put(std::ostream& out, const std::string& field) { out << field.size() << ' ' << field; }
std::string get(std::istream& in) {
  size_t n = 0;
  in >> n;
  in.get();
  std::string field(n, '\0');
  in.read(field.data(), std::streamsize(n));
  return field;
}

void write_trace(const Trace& t, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  put(out, t.losses);
  put(out, t.grad_norms);
  for (const auto& [name, bytes] : t.tensors) {
    put(out, name);
    put(out, bytes);
  }
}

Trace read_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Trace t;
  t.losses = get(in);
  t.grad_norms = get(in);
  while (in >> std::ws, in.peek() != EOF) {
    const std::string name = get(in);
    t.tensors[name] = get(in);
  }
  return t;
}

/// In a child (TN_THREAD_TRACE set: "<threads> <file>"): trains on that many threads and writes the
/// trace. In the test itself: runs this binary on `test_case` once per thread count
/// 1, 2, 3 and checks the runs on 2 and 3 against the one on 1, naming each tensor that differs.
void check_thread_independent(const char* test_case, const nlohmann::json& model_json,
                              const TrainSpec& train, const Objective& objective,
                              const std::vector<std::unique_ptr<Batch>>& batches) {
  if (const char* child = std::getenv("TN_THREAD_TRACE")) {
    std::istringstream spec(child);
    int threads = 0;
    std::string file;
    spec >> threads >> file;
    omp_set_num_threads(threads);  // set directly: set_num_threads would lower 3 to the CPUs here
    write_trace(train_here(model_json, train, objective, batches, 3), file);
    return;
  }
  const test::TempDir dir("thread_trace");
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<Trace> traces;
  for (int threads : {1, 2, 3}) {
    const std::string file = dir.file("trace" + std::to_string(threads));
    const std::string cmd = "TN_THREAD_TRACE='" + std::to_string(threads) + " " + file + "' '" + exe +
                            "' --test-case='" + test_case + "' > '" + file + ".log' 2>&1";
    INFO("the child on " << threads << " threads failed: " << dir.file("trace" + std::to_string(threads) + ".log"));
    REQUIRE(std::system(cmd.c_str()) == 0);
    traces.push_back(read_trace(file));
  }
  REQUIRE(!traces[0].tensors.empty());
  for (int threads : {2, 3}) {
    CAPTURE(threads);
    const Trace& other = traces[size_t(threads - 1)];
    CHECK(other.losses == traces[0].losses);
    CHECK(other.grad_norms == traces[0].grad_norms);
    REQUIRE(other.tensors.size() == traces[0].tensors.size());
    for (const auto& entry : traces[0].tensors) {  // no structured binding: doctest's message is a lambda (clang 14)
      const std::string& name = entry.first;
      CHECK_MESSAGE(other.tensors.at(name) == entry.second, name << " differs");
    }
  }
}

TrainSpec train_spec(double clip_norm, int64_t update_freq) {
  TrainSpec t;
  t.max_steps = 3;
  t.seed = 7;
  t.optimizer.lr = 3e-3;
  t.schedule.kind = ScheduleKind::Constant;
  t.clip_norm = clip_norm;
  t.update_freq = update_freq;
  return t;
}

/// B sequences of T ids below `vocab`; example r keeps its first T − 9r positions (the rest is
/// <pad> = 0 and masked), its class drawn below `classes`.
std::unique_ptr<Batch> classification_batch(int64_t rows, int64_t seq_len, int64_t vocab,
                                            int64_t classes, uint64_t seed) {
  auto b = std::make_unique<SequenceBatch>();
  Rng rng(seed);
  b->rows = rows;
  b->seq_len = seq_len;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t length = seq_len - 9 * r;
    for (int64_t t = 0; t < seq_len; ++t) {
      b->inputs.push_back(t < length ? static_cast<int32_t>(1 + rng.next_u64() % (vocab - 1)) : 0);
      b->key_valid.push_back(t < length ? 1 : 0);
      b->tokens += t < length;
    }
    b->labels.push_back(static_cast<int32_t>(rng.next_u64() % classes));
  }
  return b;
}

}  // namespace

TEST_CASE("training: the quickstart's T1 decoder and a softmax layer give the same bits on 1, 2 and 3 threads") {
  // DiagAttention (ReLU, SRMSNorm), NormAttention (elu, SRMSNorm) and vanilla softmax attention,
  // URPE, the SiLU GLU, sinusoidal positions, the tied LM head with its chunked cross-entropy
  // (a vocabulary of 500 rows of the head's weight gradient), dropout.
  const nlohmann::json model = {
      {"arch", "decoder"}, {"vocab_size", 500}, {"d_model", 64}, {"n_heads", 2}, {"n_layers", 3},
      {"layers", {"diag", "norm_attention", "softmax"}}, {"max_positions", 256},
      {"attention", {{"norm_attention", {{"kernel", "elu"}, {"norm", "srmsnorm"}}},
                     {"diag", {{"block_size", 32}, {"inner", "relu"}, {"norm", "srmsnorm"}}}}},
      {"channel_mixer", {{"type", "glu"}, {"activation", "silu"}}}, {"norm", "srmsnorm"},
      {"positional", "sinusoidal"}, {"relative", "urpe"}, {"tie_embeddings", true}, {"dropout", 0.1}};
  std::vector<std::unique_ptr<Batch>> batches;
  auto b = std::make_unique<LmTaskBatch>();
  Rng rng(11);
  b->data.rows = 8;
  b->data.seq_len = 128;
  for (int64_t i = 0; i < 8 * 128; ++i) {
    b->data.inputs.push_back(static_cast<int32_t>(rng.next_u64() % 500));
    b->data.targets.push_back(static_cast<int32_t>(rng.next_u64() % 500));
  }
  b->data.n_targets = 8 * 128;
  batches.push_back(std::move(b));
  NextTokenObjective objective;
  check_thread_independent("training: the quickstart*", model, train_spec(0, 1), objective, batches);
}

TEST_CASE("training: LRA's T1 encoder (BatchNorm, RoPE, FFN, classification) gives the same bits on 1, 2 and 3 threads") {
  // encoder_t1.yaml at a small size, a softmax layer added: BatchNorm everywhere (padded rows left
  // out of its statistics), RoPE, the GELU FFN, interleaved sinusoidal positions with their own
  // dropout, mean pooling into the classification head; two batches per update, clipped.
  const nlohmann::json model = {
      {"arch", "encoder"}, {"head", "classification"}, {"pooling", "mean"}, {"num_classes", 4},
      {"vocab_size", 20}, {"d_model", 64}, {"n_heads", 4}, {"max_positions", 256},
      {"n_layers", 3}, {"layers", {"diag", "norm_attention", "softmax"}},
      {"attention", {{"norm_attention", {{"kernel", "elu"}, {"norm", "batchnorm"}}},
                     {"diag", {{"block_size", 32}, {"inner", "relu"}, {"norm", "batchnorm"}}}}},
      {"channel_mixer", {{"type", "ffn"}, {"d_ff", 128}, {"activation", "gelu"}}},
      {"norm", "batchnorm"}, {"positional", "sinusoidal_interleaved"}, {"positional_dropout", 0.1},
      {"relative", "rope"}, {"embed_scale", false}, {"tie_embeddings", false}, {"dropout", 0.0}};
  std::vector<std::unique_ptr<Batch>> batches;
  batches.push_back(classification_batch(8, 128, 20, 4, 21));
  batches.push_back(classification_batch(8, 128, 20, 4, 22));
  SequenceClassificationObjective objective;
  check_thread_independent("training: LRA*T1 encoder*", model, train_spec(0.5, 2), objective, batches);
}

TEST_CASE("training: LRA's T2 pixel encoder (linear input, last pooling) gives the same bits on 1, 2 and 3 threads") {
  // image_t2.yaml / pathfinder at a small size: pixel levels through Linear(1 → d), DiagAttention
  // with softmax inside its blocks and its own head count, NormAttention with 1+elu, attention and
  // residual dropout, the last position pooled.
  const nlohmann::json model = {
      {"arch", "encoder"}, {"head", "classification"}, {"pooling", "last"}, {"num_classes", 2},
      {"vocab_size", 256}, {"input", {{"kind", "linear"}, {"mean", 127.5}, {"std", 127.5}}},
      {"d_model", 64}, {"n_heads", 4}, {"max_positions", 256},
      {"n_layers", 2}, {"layers", {"diag", "norm_attention"}},
      {"attention", {{"norm_attention", {{"kernel", "1+elu"}, {"norm", "batchnorm"}}},
                     {"diag", {{"block_size", 32}, {"inner", "softmax"}, {"norm", "batchnorm"}, {"n_heads", 2}}}}},
      {"channel_mixer", {{"type", "ffn"}, {"d_ff", 128}, {"activation", "gelu"}}},
      {"norm", "batchnorm"}, {"positional", "sinusoidal_interleaved"}, {"relative", "rope"},
      {"embed_scale", false}, {"tie_embeddings", false}, {"dropout", 0.2}, {"attention_dropout", 0.2}};
  std::vector<std::unique_ptr<Batch>> batches;
  auto b = classification_batch(8, 128, 256, 2, 31);
  auto& s = static_cast<SequenceBatch&>(*b);
  std::fill(s.key_valid.begin(), s.key_valid.end(), 1);  // images: no padding
  s.tokens = s.rows * s.seq_len;
  batches.push_back(std::move(b));
  SequenceClassificationObjective objective;
  check_thread_independent("training: LRA*T2 pixel encoder*", model, train_spec(0, 1), objective, batches);
}
