#include "app/verb_data_aan.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "data/generators/aan_generator.h"

namespace tn::app {
namespace {

struct AanArgs {
  AanOptions options;
  std::string out;
  bool overwrite = false;
};

/// "n pairs, p % label 1, mean document length m characters" of pairs [first, first + count).
std::string split_summary(const AanData& data, size_t first, int64_t count) {
  int64_t positives = 0;
  double length = 0;
  for (size_t i = first; i < first + static_cast<size_t>(count); ++i) {
    positives += data.pairs[i].label;
    length += static_cast<double>(data.pairs[i].text1.size() + data.pairs[i].text2.size());
  }
  const double n = count > 0 ? static_cast<double>(count) : 1.0;
  return fmt::format("{} pairs, {:.1f} % label 1, mean document length {:.1f} characters", count,
                     100.0 * static_cast<double>(positives) / n, length / (2.0 * n));
}

int run_generate_aan(const AanArgs& args) {
  using Clock = std::chrono::steady_clock;
  const AanOptions& o = args.options;
  o.validate();
  check_aan_output(args.out, args.overwrite);  // before the work, not after it
  spdlog::info("aan: generating {} + {} + {} synthetic pairs ({} topics of {} characters, {:.0f} % of a document's "
               "characters from its topic, {}..{} characters a document, seed {})",
               o.train_count(), o.eval_count(), o.test_count(), o.topics, o.topic_chars, 100.0 * o.topic_share,
               o.min_length, o.max_length, o.seed);
  const auto t0 = Clock::now();
  const AanData data = generate_aan(o);
  const std::vector<std::string> files = write_aan(args.out, o, data, args.overwrite);
  spdlog::info("aan: generated and written in {:.2f} s", std::chrono::duration<double>(Clock::now() - t0).count());
  const std::array<int64_t, 3> counts = {o.train_count(), o.eval_count(), o.test_count()};
  size_t first = 0;
  for (size_t split = 0; split < files.size(); ++split) {
    spdlog::info("{}: {}", files[split], split_summary(data, first, counts[split]));
    first += static_cast<size_t>(counts[split]);
  }
  return 0;
}

}  // namespace

std::pair<CLI::App*, Action> add_generate_aan(CLI::App& generate) {
  auto args = std::make_shared<AanArgs>();
  AanOptions& o = args->options;
  CLI::App* sub = generate.add_subcommand(
      "aan",
      "A tiny synthetic set in the LRA Retrieval (AAN) format, for a first look without the LRA release: pairs of "
      "character documents, label 1 when both draw most of their characters from the same hidden topic; writes "
      "new_aan_pairs.train.tsv, new_aan_pairs.eval.tsv and new_aan_pairs.test.tsv (80 / 10 / 10 %)");
  sub->add_option("--out", args->out, "folder for the three .tsv files (created when missing)")->required();
  sub->add_option("--count", o.count, "pairs over the three files (20 .. 1000000)")->capture_default_str();
  sub->add_option("--seed", o.seed, "seed of the generator (0 .. 2^64-1)")
      ->capture_default_str()
      ->check(seed_check());
  sub->add_flag("--overwrite", args->overwrite, "replace AAN files already in --out");
  return {sub, [args]() { return run_generate_aan(*args); }};
}

}  // namespace tn::app
