#include "tests/fuzz/fuzz_targets.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>

#include "core/runtime/autograd/tape.h"
#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/png_image.h"
#include "core/platform/io/safetensors.h"
#include "core/runtime/rng.h"
#include "data/readers/aan.h"
#include "data/readers/cifar10.h"
#include "data/readers/glue.h"
#include "data/readers/glue_tasks.h"
#include "data/readers/imdb.h"
#include "data/readers/listops.h"
#include "data/readers/pathfinder.h"
#include "data/readers/wikitext.h"
#include "data/tokenizers/fairseq_dict.h"
#include "data/tokenizers/gpt2_bpe.h"
#include "data/tokenizers/id_lines.h"
#include "data/tokenizers/word_vocab.h"
#include "experiments/inspection/forward.h"
#include "experiments/spec/spec.h"
#include "experiments/sweeps/slurm_script.h"
#include "experiments/sweeps/sweep_spec.h"
#include "layers/persistence/checkpoint.h"

namespace tn::fuzz {
namespace {

namespace fs = std::filesystem;

/// This process's scratch folder (RAM-backed /dev/shm when there is one), removed at exit. The
/// readers that take a path read the input from a file in it, so the target runs the CLI's code.
const fs::path& scratch() {
  static const fs::path dir = [] {
    std::error_code ec;
    const fs::path root = fs::is_directory("/dev/shm", ec) && access("/dev/shm", W_OK) == 0
                              ? fs::path("/dev/shm")
                              : fs::temp_directory_path();
    fs::path made = root / ("transnormer-fuzz-" + std::to_string(getpid()));
    fs::create_directories(made);
    std::atexit([] { std::error_code e; fs::remove_all(scratch(), e); });
    return made;
  }();
  return dir;
}

/// Writes `bytes` to `name` in the scratch folder and returns its path.
std::string put(const std::string& name, std::string_view bytes) {
  const fs::path path = scratch() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("fuzz harness: cannot write " + path.string());
  return path.string();
}

/// A file of the source tree's fuzz fixtures (tests/fuzz/fixtures).
std::string fixture(const std::string& name) {
  std::string path = TN_SOURCE_DIR;  // built up in place: GCC 12 -O1 warns (falsely) on a + b + c here
  path += "/tests/fuzz/fixtures/";
  path += name;
  return path;
}

/// The small GPT-2 BPE (256 byte tokens and a few merges) the dictionary and decode targets use.
const Gpt2Bpe& tiny_bpe() {
  static const Gpt2Bpe bpe = Gpt2Bpe::load(fixture("tiny_bpe"));
  return bpe;
}

/// Its fairseq dictionary: every id of tiny_bpe in order.
const FairseqDict& tiny_dict() {
  static const FairseqDict dict = FairseqDict::load(fixture("tiny_bpe/dict.txt"), tiny_bpe());
  return dict;
}

/// configs/quickstart.yaml copied to base.yaml in the scratch folder: the spec that overrides apply
/// to, and the `base:` of the sweep seeds.
const std::string& base_spec() {
  static const std::string path = put("base.yaml", read_file(std::string(TN_SOURCE_DIR) + "/configs/quickstart.yaml"));
  return path;
}

void run_spec(std::string_view bytes) {
  (void)base_spec();  // a `base: base.yaml` finds the same file on every run
  const ExperimentSpec spec = load_spec(put("spec.yaml", bytes));
  (void)spec_to_yaml(spec);
}

/// `--set` overrides, one KEY=VALUE per line, on the quickstart spec.
void run_override(std::string_view bytes) {
  std::vector<std::string> overrides;
  size_t start = 0;
  while (start < bytes.size()) {  // a final newline starts no override
    size_t end = bytes.find('\n', start);
    if (end == std::string_view::npos) end = bytes.size();
    overrides.emplace_back(bytes.substr(start, end - start));
    start = end + 1;
  }
  (void)spec_to_yaml(load_spec(base_spec(), overrides));
}

void run_sweep(std::string_view bytes) {
  (void)base_spec();
  (void)load_sweep(put("sweep.yaml", bytes));
}

void run_safetensors(std::string_view bytes) { (void)load_safetensors(put("tensors.safetensors", bytes)); }

void run_checkpoint(std::string_view bytes) { (void)load_checkpoint(put("checkpoint.safetensors", bytes)); }

/// A checkpoint's stored config: the bytes become "transnormer.config" beside the tensors (and
/// vocabulary) of the checkpoint seed listops_tiny, so every mutation reaches the config reader and
/// the size checks made before the model is built. A model that loads runs one forward of 12 ids.
void run_checkpoint_config(std::string_view bytes) {
  static const SafetensorsFile tiny =
      load_safetensors(std::string(TN_SOURCE_DIR) + "/tests/fuzz/corpus/checkpoint/listops_tiny.safetensors");
  std::map<std::string, std::string> metadata = tiny.metadata;
  metadata["transnormer.config"] = std::string(bytes);
  const std::string path = (scratch() / "config.safetensors").string();
  save_safetensors(path, tiny.tensors, metadata);  // DataError for bytes that are not UTF-8
  const LoadedCheckpoint loaded = load_checkpoint(path);
  Tape tape;
  tape.set_enabled(false);
  Rng rng(0);
  ForwardContext ctx{tape, false, rng};
  const int64_t vocab = loaded.model->config().vocab_size;
  std::vector<int32_t> ids(12);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(static_cast<int64_t>(i) % vocab);
  (void)loaded.model->forward(ctx, ids, 1, static_cast<int64_t>(ids.size()));
}

void run_wikitext(std::string_view bytes) {
  std::vector<std::string> lines = read_lines(put("wiki.train.tokens", bytes));
  (void)WordVocab::build(lines);
  if (lines.size() >= 2) (void)split_valid_from_train(std::move(lines), 0.5);
}

/// The first byte picks the GLUE task and the file kind (train, dev, test); the rest is the file.
void run_glue(std::string_view bytes) {
  if (bytes.empty()) return;
  const auto& tasks = glue_tasks();
  const auto pick = static_cast<unsigned char>(bytes[0]);
  const GlueTask& task = tasks[pick % tasks.size()];
  const auto kind = static_cast<GlueFileKind>((pick / tasks.size()) % 3);
  (void)read_glue_split(task, kind, put("glue.tsv", bytes.substr(1)));
}

void run_listops(std::string_view bytes) {
  (void)read_listops_split(put("basic_train.tsv", bytes), "train", SentenceSplit::Role::Train);
}

void run_imdb(std::string_view bytes) { (void)read_imdb(put("aclImdb_v1.tar.gz", bytes)); }

void run_aan(std::string_view bytes) {
  (void)read_aan_split(put("new_aan_pairs.train.tsv", bytes), "train", SentenceSplit::Role::Train);
}

/// A CIFAR-10 binary batch; input starting with "meta\n" is a batches.meta.txt instead.
void run_cifar10(std::string_view bytes) {
  if (bytes.starts_with("meta\n")) {
    (void)parse_cifar10_meta(bytes.substr(5), "batches.meta.txt");
    return;
  }
  (void)parse_cifar10_batch(bytes, "data_batch_1", "cifar-10-batches-bin/data_batch_1.bin");
}

void run_pathfinder(std::string_view bytes) { (void)parse_pathfinder_metadata(bytes, "metadata/0.npy"); }

void run_png(std::string_view bytes) { (void)read_png_gray(put("sample_0.png", bytes)); }

/// encoder.json, then vocab.bpe from the first "#version" on; then a round trip of some text.
void run_gpt2_bpe(std::string_view bytes) {
  const size_t split = bytes.find("#version");
  const fs::path dir = scratch() / "gpt2_bpe";
  fs::create_directories(dir);
  put("gpt2_bpe/encoder.json", bytes.substr(0, split));
  put("gpt2_bpe/vocab.bpe", split == std::string_view::npos ? std::string_view() : bytes.substr(split));
  const Gpt2Bpe bpe = Gpt2Bpe::load(dir.string());
  const std::string text = "Hello world, it's 2026! \xC3\xA9t\xC3\xA9 \xE2\x80\x94 ok";
  if (bpe.decode(bpe.encode(text)) != text) throw std::logic_error("GPT-2 BPE: decode(encode(text)) != text");
}

void run_dict(std::string_view bytes) { (void)FairseqDict::load(put("dict.txt", bytes), tiny_bpe()); }

/// Lines of ids as `tokenize --decode` reads them; input starting with "dict\n" decodes model ids
/// of the dictionary instead of GPT-2 ids.
void run_tokenize_decode(std::string_view bytes) {
  const bool with_dict = bytes.starts_with("dict\n");
  if (with_dict) bytes.remove_prefix(5);
  std::vector<int32_t> ids;
  int64_t line = 0;
  size_t start = 0;
  while (start < bytes.size()) {
    size_t end = bytes.find('\n', start);
    if (end == std::string_view::npos) end = bytes.size();
    (void)decode_id_line(bytes.substr(start, end - start), tiny_bpe(), with_dict ? &tiny_dict() : nullptr,
                         "<stdin>:" + std::to_string(++line), ids);
    start = end + 1;
  }
}

/// `forward --input`: the JSON against the golden decoder model dec_t1.
void run_forward_input(std::string_view bytes) {
  static const LoadedCheckpoint model =
      load_checkpoint(std::string(TN_SOURCE_DIR) + "/tests/golden/dec_t1/model.safetensors");
  const nlohmann::json input = parse_forward_input(bytes, "input.json");
  (void)run_forward(*model.model, input, /*grads=*/true, "input.json");
}

/// The fields of `bytes` separated by the byte 0x1E (record separator).
std::vector<std::string> fields_of(std::string_view bytes) {
  std::vector<std::string> fields(1);
  for (char c : bytes) {
    if (c == '\x1e')
      fields.emplace_back();
    else
      fields.back() += c;
  }
  return fields;
}

/// Reads one word of a script line at `i` as the shell would: unquoted [A-Za-z0-9_+=./:,-] or
/// single-quoted parts, '\'' for a quote. Throws std::logic_error when it is anything else: a
/// value that reached the script unquoted.
std::string shell_word(const std::string& line, size_t& i) {
  std::string word;
  bool any = false;
  while (i < line.size() && line[i] != ' ') {
    any = true;
    if (line[i] == '\'') {
      const size_t end = line.find('\'', i + 1);
      if (end == std::string::npos) throw std::logic_error("slurm script: an unbalanced quote: " + line);
      word += line.substr(i + 1, end - i - 1);
      i = end + 1;
    } else if (line.compare(i, 2, "\\'") == 0) {
      word += '\'';
      i += 2;
    } else if (std::isalnum(static_cast<unsigned char>(line[i])) || std::string("_+=./:,-").find(line[i]) != std::string::npos) {
      word += line[i++];
    } else {
      throw std::logic_error("slurm script: an unquoted character '" + std::string(1, line[i]) + "' in: " + line);
    }
  }
  if (!any) throw std::logic_error("slurm script: an empty word in: " + line);
  return word;
}

/// The script's logical lines as bash reads them: a newline inside '...' or "..." (a hostile word
/// quoted whole) or after a backslash does not end a line; a quote in a comment opens nothing.
std::vector<std::string> logical_lines(const std::string& script) {
  std::vector<std::string> lines(1);
  char quote = 0;
  for (size_t i = 0; i < script.size(); ++i) {
    const char c = script[i];
    if (quote == '\'') {
      if (c == '\'') quote = 0;
    } else if (c == '\\' && i + 1 < script.size()) {  // an escaped character, in "..." or outside quotes
      lines.back() += c;
      lines.back() += script[++i];
      continue;
    } else if (quote == '"') {
      if (c == '"') quote = 0;
    } else if (c == '#' && (lines.back().empty() || lines.back().back() == ' ')) {  // a comment (#SBATCH too)
      const size_t end = script.find('\n', i);
      lines.back() += script.substr(i, end == std::string::npos ? std::string::npos : end - i);
      if (end == std::string::npos) break;
      i = end - 1;  // the newline ends the line below
      continue;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '\n') {
      lines.emplace_back();
      continue;
    }
    lines.back() += c;
  }
  if (quote) throw std::logic_error("slurm script: a quote left open");
  return lines;
}

/// The batch script of one point from hostile values: fields job name, working directory, sweep
/// folder, --slurm text, then the point's argv (its log is below the folder). A refusal is a
/// ConfigError; a script whose exec line does not give back the argv word for word, or whose
/// #SBATCH lines are not one line each, is a defect.
void run_slurm_script(std::string_view bytes) {
  std::vector<std::string> f = fields_of(bytes);
  while (f.size() < 5) f.emplace_back("x");
  (void)split_sbatch_options(f[3]);
  SlurmOptions o;
  o.job_name = f[0];
  o.workdir = f[1];
  o.folder = f[2];
  std::vector<PointLaunch> points(1);
  points[0].argv.assign(f.begin() + 4, f.end());
  points[0].log = std::filesystem::path(f[2]) / "point" / "train.log";
  const std::string script = slurm_batch_script(o, points);
  // Exactly one line of the script, as bash splits it, runs the command (a word holding
  // "\n    exec ", quoted, is part of its line, not a line of its own).
  const std::string exec = "    exec ";
  std::string line;
  size_t execs = 0;
  for (const std::string& l : logical_lines(script))
    if (l.rfind(exec, 0) == 0) {
      line = l.substr(exec.size());
      ++execs;
    }
  if (execs != 1) throw std::logic_error("slurm script: not exactly one exec line");
  // The directives at the start of their lines (a job name may repeat "#SBATCH" in the header's comment).
  const size_t sbatch = script.find("\n#SBATCH --job-name=") + 1, set = script.find("\nset -u\n");
  size_t directives = 0;
  for (size_t i = sbatch; i < set; i = script.find('\n', i + 1)) ++directives;
  if (directives != 6) throw std::logic_error("slurm script: a directive spans lines");
  size_t i = 0;
  for (const std::string& word : points[0].argv) {
    if (shell_word(line, i) != word) throw std::logic_error("slurm script: a word of the command changed");
    ++i;
  }
  if (line.compare(i, 3, ">> ") != 0) throw std::logic_error("slurm script: more words than the command's");
  i += 3;
  if (shell_word(line, i) != points[0].log.string()) throw std::logic_error("slurm script: the log path changed");
}

}  // namespace

const std::vector<FuzzTarget>& fuzz_targets() {
  static const std::vector<FuzzTarget> table = {
      {"spec", "an experiment spec (YAML, through the whole resolver)", run_spec},
      {"override", "--set KEY=VALUE overrides on a spec", run_override},
      {"sweep", "a sweep file", run_sweep},
      {"safetensors", "a safetensors file", run_safetensors},
      {"checkpoint", "a checkpoint (safetensors with the model config and vocabulary)", run_checkpoint},
      {"checkpoint_config", "a checkpoint's stored model config (its transnormer.config JSON)", run_checkpoint_config},
      {"wikitext", "a WikiText token file", run_wikitext},
      {"glue", "a GLUE .tsv split of any task", run_glue},
      {"listops", "an LRA ListOps .tsv split", run_listops},
      {"imdb", "an IMDB archive (aclImdb_v1.tar.gz)", run_imdb},
      {"aan", "an LRA Retrieval (AAN) .tsv split", run_aan},
      {"cifar10", "a CIFAR-10 binary batch or batches.meta.txt", run_cifar10},
      {"pathfinder", "a Pathfinder metadata file", run_pathfinder},
      {"png", "a Pathfinder PNG image", run_png},
      {"gpt2_bpe", "GPT-2 BPE encoder.json and vocab.bpe", run_gpt2_bpe},
      {"dict", "a fairseq dict.txt", run_dict},
      {"tokenize_decode", "tokenize --decode input", run_tokenize_decode},
      {"forward_input", "forward's input JSON", run_forward_input},
      {"slurm_script", "a Slurm batch script from hostile names and --slurm options", run_slurm_script},
  };
  return table;
}

const FuzzTarget* find_fuzz_target(std::string_view name) {
  for (const FuzzTarget& target : fuzz_targets())
    if (name == target.name) return &target;
  return nullptr;
}

FuzzOutcome run_fuzz_input(const FuzzTarget& target, std::string_view bytes) {
  using Kind = FuzzOutcome::Kind;
  try {
    target.run(bytes);
  } catch (const ConfigError& e) {
    return {Kind::Refused, e.what()};
  } catch (const DataError& e) {
    return {Kind::Refused, e.what()};
  } catch (const std::exception& e) {
    return {Kind::Defect, std::string(target.name) + ": an exception that is not a ConfigError or DataError: " + e.what()};
  } catch (...) {
    return {Kind::Defect, std::string(target.name) + ": a non-standard exception"};
  }
  return {};
}

}  // namespace tn::fuzz
