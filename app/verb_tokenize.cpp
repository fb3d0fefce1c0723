// `transnormer tokenize --bpe gpt2 [--bpe-dir DIR] [--dict FILE] [--decode] [--data-root DIR] [FILE|-]`
// Each input line (without its newline; a final newline starts no line) becomes one output line:
// its GPT-2 ids (or, with --dict, the fairseq dictionary's model ids) separated by spaces. With
// --decode, lines of such ids become text again (with --dict, specials and madeupwords are
// skipped). Ids go to stdout, the load time and throughput (MB/s of input) to stderr.
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <new>
#include <optional>
#include <string_view>

#include "app/verbs.h"
#include "core/error.h"
#include "data/data_root.h"
#include "data/text/utf8.h"
#include "data/tokenizers/fairseq_dict.h"
#include "data/tokenizers/gpt2_bpe.h"
#include "data/tokenizers/id_lines.h"

namespace tn::app {
namespace {
struct TokenizeArgs {
  std::string bpe = "gpt2", bpe_dir, dict, data_root, input = "-";
  bool decode = false;
};

constexpr size_t kBufferBytes = size_t{1} << 20;

/// Lines of a file or stdin, read through one growing buffer (getline), newline stripped.
class LineReader {
 public:
  explicit LineReader(const std::string& path) : name_(path == "-" ? "<stdin>" : path) {
    if (path == "-") {
      file_ = stdin;
    } else {
      std::error_code ec;
      if (std::filesystem::is_directory(path, ec)) throw DataError(path + ": is a directory, expected a text file");
      file_ = std::fopen(path.c_str(), "rb");
      if (!file_) throw DataError(path + ": cannot open (no such file, or no permission); pass a text file or -");
      owned_ = true;
    }
    // A device such as /dev/zero never ends and holds no lines (read_file refuses it alike); a
    // terminal, a pipe or a FIFO ends when its writer is done.
    // /dev/null is read: empty input.
    struct stat st {}, null {};
    const bool is_null = ::stat("/dev/null", &null) == 0;
    if (::fstat(::fileno(file_), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) &&
        !::isatty(::fileno(file_)) && !(is_null && st.st_rdev == null.st_rdev))
      throw DataError(name_ + ": is a device, not a text file; pass a text file or -");
    std::setvbuf(file_, nullptr, _IOFBF, kBufferBytes);
  }
  ~LineReader() {
    if (owned_) std::fclose(file_);
    std::free(line_);
  }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  /// The next line without its '\n', or nullopt at the end. Throws DataError on a read error.
  std::optional<std::string_view> next() {
    errno = 0;
    const ssize_t n = ::getline(&line_, &capacity_, file_);
    if (n < 0) {
      // getline ends with -1 on a line it cannot hold (ENOMEM, EOVERFLOW) without the stream's
      // error flag: never taken for the end of the input, which would drop the rest of it.
      if (errno == ENOMEM || errno == EOVERFLOW) throw std::bad_alloc();
      if (std::ferror(file_)) throw DataError(name_ + ": read error after line " + std::to_string(number_));
      return std::nullopt;
    }
    ++number_;
    bytes_ += static_cast<size_t>(n);
    size_t length = static_cast<size_t>(n);
    if (length > 0 && line_[length - 1] == '\n') --length;
    return std::string_view(line_, length);
  }
  /// "FILE:LINE" of the line last returned.
  std::string where() const { return name_ + ":" + std::to_string(number_); }
  size_t lines() const { return number_; }
  size_t bytes() const { return bytes_; }

 private:
  std::string name_;
  std::FILE* file_ = nullptr;
  bool owned_ = false;
  char* line_ = nullptr;
  size_t capacity_ = 0, number_ = 0, bytes_ = 0;
};

/// stdout through one buffer of about kBufferBytes, written out whenever it fills.
class Output {
 public:
  Output() { buffer_.reserve(kBufferBytes + 4096); }
  std::string& buffer() { return buffer_; }
  void maybe_flush() {
    if (buffer_.size() >= kBufferBytes) flush();
  }
  void flush() {
    if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), stdout) != buffer_.size())
      throw IoError("stdout: write failed (disk full or a closed pipe?)");
    buffer_.clear();
  }
  void finish() {
    flush();
    if (std::fflush(stdout) != 0) throw IoError("stdout: write failed (disk full or a closed pipe?)");
  }

 private:
  std::string buffer_;
};

int run_tokenize(const TokenizeArgs& args) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const std::string bpe_dir =
      args.bpe_dir.empty() ? data_path(resolve_data_root(args.data_root), "gpt2_bpe") : args.bpe_dir;
  const Gpt2Bpe bpe = Gpt2Bpe::load(bpe_dir);
  std::optional<FairseqDict> dict;
  if (!args.dict.empty()) dict.emplace(FairseqDict::load(args.dict, bpe));
  const auto t1 = Clock::now();
  spdlog::info("tokenize: GPT-2 BPE from {} ({} tokens, {} merges, regex JIT {}){} in {:.0f} ms", bpe_dir,
               bpe.size(), bpe.merge_count(), bpe.jit() ? "on" : "off",
               dict ? " and the dictionary " + args.dict + " (" + std::to_string(dict->size()) + " ids)" : "",
               std::chrono::duration<double, std::milli>(t1 - t0).count());

  LineReader in(args.input);
  Output out;
  std::vector<int32_t> ids;
  size_t total_ids = 0;
  while (const std::optional<std::string_view> line = in.next()) {
    if (args.decode) {
      out.buffer() += decode_id_line(*line, bpe, dict ? &*dict : nullptr, in.where(), ids);
      total_ids += ids.size();
      out.buffer() += '\n';
    } else {
      if (const size_t bad = invalid_utf8_at(*line); bad != std::string_view::npos)
        throw DataError(in.where() + ": not valid UTF-8 (bad byte at column " + std::to_string(bad + 1) +
                        "); convert the file to UTF-8 (e.g. iconv -f LATIN1 -t UTF-8)");
      ids.clear();
      bpe.encode(*line, ids);
      if (dict)
        for (int32_t& id : ids) id = dict->index_of_bpe(id);
      total_ids += ids.size();
      append_id_line(ids, out.buffer());
    }
    out.maybe_flush();
  }
  out.finish();
  const double seconds = std::chrono::duration<double>(Clock::now() - t1).count();
  spdlog::info("tokenize: {} lines, {:.2f} MB, {} ids in {:.3f} s ({:.1f} MB/s)", in.lines(), in.bytes() / 1e6,
               total_ids, seconds, seconds > 0 ? in.bytes() / 1e6 / seconds : 0.0);
  return 0;
}
}  // namespace

Action add_tokenize_verb(CLI::App& app) {
  auto args = std::make_shared<TokenizeArgs>();
  CLI::App* sub = app.add_subcommand("tokenize", "Text to GPT-2 BPE ids (one output line per input line), or back");
  sub->add_option("input", args->input, "text file, or - for stdin (default)");
  sub->add_option("--bpe", args->bpe, "the BPE: gpt2")->required()->check(CLI::IsMember({"gpt2"}));
  sub->add_option("--bpe-dir", args->bpe_dir, "folder with encoder.json and vocab.bpe (default <data root>/gpt2_bpe)");
  sub->add_option("--dict", args->dict, "fairseq dict.txt: write (or read) its model ids instead of GPT-2 ids");
  sub->add_flag("--decode", args->decode, "read lines of ids, write text");
  sub->add_option("--data-root", args->data_root, "dataset root (default $TRANSNORMER_DATA, else ./datasets)");
  return [args]() { return run_tokenize(*args); };
}

}  // namespace tn::app
