// `transnormer data fetch [--lra] [--data-root DIR]` (app/verb_data_fetch.h)
// `transnormer data generate listops --out DIR [--seed S] [--train N --valid N --test N]
//                                     [--max-depth D --max-args A --min-length L --max-length L]
//                                     [--overwrite]`
// `transnormer data generate pathfinder --out DIR --count N [...]` (app/verb_data_pathfinder.h)
// `transnormer data generate aan --out DIR [--count N] [--seed S] [--overwrite]` (app/verb_data_aan.h)
// `transnormer data stats SPEC.yaml [--set key=value ...] [--out FILE.json] [--data-root DIR]
//                                  [--images N --images-dir DIR [--images-scale K]]`
// Dataset utilities, one function per subcommand: `data generate listops` writes the LRA ListOps
// splits (data/generators/listops_generator.h) as basic_train.tsv, basic_val.tsv and
// basic_test.tsv. Logs (the files, counts, label shares, mean length) go to stderr. `data stats`
// reads a spec's data as its task would (experiments/inspection/data_stats.h) and prints a table on stdout;
// --out also writes the JSON; for an image reader, --images writes the first N images of each split
// as PNG files, enlarged K times (default 8).
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "app/config_path.h"
#include "app/verb_data_aan.h"
#include "app/verb_data_fetch.h"
#include "app/verb_data_pathfinder.h"
#include "app/verbs.h"
#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/dir_lock.h"
#include "core/platform/io/json_errors.h"
#include "data/data_root.h"
#include "data/generators/listops_generator.h"
#include "experiments/inspection/data_stats.h"

namespace tn::app {
namespace {

/// A subcommand and the action to run when it was the one parsed.
using Subcommands = std::vector<std::pair<CLI::App*, Action>>;

/// Runs the action of whichever subcommand was parsed (CLI11 has required exactly one).
Action dispatch(Subcommands subcommands) {
  return [subcommands = std::move(subcommands)]() {
    for (const auto& [sub, action] : subcommands)
      if (sub->parsed()) return action();
    return 2;
  };
}

struct ListOpsArgs {
  ListOpsOptions options;
  std::string out;
  bool overwrite = false;
};

/// "count examples, mean length m, labels 0..9: p0 p1 ... %" of examples [first, first + count).
std::string split_summary(const ListOpsData& data, size_t first, int64_t count) {
  std::array<int64_t, 10> labels{};
  double length = 0;
  for (size_t i = first; i < first + static_cast<size_t>(count); ++i) {
    ++labels[static_cast<size_t>(data.examples[i].target)];
    length += static_cast<double>(data.examples[i].length);
  }
  const double n = count > 0 ? static_cast<double>(count) : 1.0;
  std::string shares;
  for (const int64_t c : labels) shares += fmt::format(" {:.1f}", 100.0 * static_cast<double>(c) / n);
  return fmt::format("{} examples, mean length {:.1f}, labels 0..9 (%):{}", count, length / n, shares);
}

int run_generate_listops(const ListOpsArgs& args) {
  using Clock = std::chrono::steady_clock;
  const ListOpsOptions& o = args.options;
  o.validate();
  check_listops_output(args.out, args.overwrite);  // before the work, not after it
  spdlog::info("listops: generating {} + {} + {} examples (max depth {}, max args {}, {} < length < {}, seed {})",
               o.train, o.valid, o.test, o.max_depth, o.max_args, o.min_length, o.max_length, o.seed);
  const auto t0 = Clock::now();
  const ListOpsData data = generate_listops(o);
  const auto t1 = Clock::now();
  const std::vector<std::string> files = write_listops(args.out, o, data, args.overwrite);
  const auto t2 = Clock::now();
  spdlog::info("listops: {} trees sampled, {:.2f} % accepted ({} too short, {} too long, {} duplicates), "
               "generated in {:.1f} s, written in {:.1f} s",
               data.sampled, 100.0 * static_cast<double>(o.total()) / static_cast<double>(data.sampled),
               data.too_short, data.too_long, data.duplicates, std::chrono::duration<double>(t1 - t0).count(),
               std::chrono::duration<double>(t2 - t1).count());
  const std::array<int64_t, 3> counts = {o.train, o.valid, o.test};
  size_t first = 0;
  for (size_t split = 0; split < files.size(); ++split) {
    spdlog::info("{}: {}", files[split], split_summary(data, first, counts[split]));
    first += static_cast<size_t>(counts[split]);
  }
  spdlog::info("all: {}", split_summary(data, 0, o.total()));
  return 0;
}

/// `data generate listops`.
std::pair<CLI::App*, Action> add_generate_listops(CLI::App& generate) {
  auto args = std::make_shared<ListOpsArgs>();
  ListOpsOptions& o = args->options;
  CLI::App* sub = generate.add_subcommand(
      "listops",
      "LRA ListOps (Tay et al. 2021; lra_benchmarks/data/listops.py): nested [MIN [MAX [MED [SM expressions over "
      "0..9 labelled with their value, as basic_train.tsv, basic_val.tsv and basic_test.tsv");
  sub->add_option("--out", args->out, "folder for the three .tsv files (created when missing)")->required();
  sub->add_option("--seed", o.seed, "seed of the generator (0 .. 2^64-1)")
      ->capture_default_str()
      ->check(seed_check());
  sub->add_option("--train", o.train, "training examples")->capture_default_str();
  sub->add_option("--valid", o.valid, "validation examples (basic_val.tsv)")->capture_default_str();
  sub->add_option("--test", o.test, "test examples")->capture_default_str();
  sub->add_option("--max-depth", o.max_depth, "levels of a tree, the root's included")->capture_default_str();
  sub->add_option("--max-args", o.max_args, "arguments of an operator, at most (at least 2)")->capture_default_str();
  sub->add_option("--min-length", o.min_length, "keep trees longer than this (tokens without parentheses)")
      ->capture_default_str();
  sub->add_option("--max-length", o.max_length, "keep trees shorter than this")->capture_default_str();
  sub->add_flag("--overwrite", args->overwrite, "replace ListOps files already in --out");
  return {sub, [args]() { return run_generate_listops(*args); }};
}

/// What `data generate` says when no generator was named, or an unknown one (`extras`: the words
/// CLI11 left unparsed).
std::string generator_problem(const std::vector<std::string>& extras, const Subcommands& generators) {
  std::string names;
  for (const auto& [sub, action] : generators) names += (names.empty() ? "" : ", ") + sub->get_name();
  const auto name = std::find_if(extras.begin(), extras.end(), [](const std::string& w) { return w[0] != '-'; });
  if (name == extras.end())
    return "data generate: name a generator (" + names + ") before its options: transnormer data generate " +
           "GENERATOR --help";
  return "data generate: unknown generator '" + *name + "'; the generators are " + names +
         " (transnormer data generate GENERATOR --help)";
}

/// `data generate`: one subcommand per generator.
std::pair<CLI::App*, Action> add_data_generate(CLI::App& data) {
  CLI::App* sub = data.add_subcommand("generate", "Generate a synthetic dataset (listops, pathfinder, aan)");
  Subcommands generators = {add_generate_listops(*sub), add_generate_pathfinder(*sub), add_generate_aan(*sub)};
  // At most one generator; an unknown name stays as an extra and is named in the error below (CLI11
  // alone would only say that a subcommand is required). Set after the generators were added, so
  // that they do not inherit it and still refuse unknown options themselves.
  sub->require_subcommand(0, 1);
  sub->allow_extras();
  return {sub, [sub, generators = std::move(generators)]() {
            for (const auto& [generator, action] : generators)
              if (generator->parsed()) return action();
            throw ConfigError(generator_problem(sub->remaining(), generators));
          }};
}

struct StatsArgs {
  std::string config, out, data_root;
  std::vector<std::string> overrides;
  DataStatsOptions options;
};

int run_stats(const StatsArgs& args) {
  std::error_code ec;
  if (!args.out.empty() && std::filesystem::is_directory(args.out, ec))
    throw ConfigError("--out " + args.out + ": is a folder; name the JSON file to write (e.g. " +
                      (std::filesystem::path(args.out) / "stats.json").string() + ")");
  if (!args.out.empty()) check_output_file(args.out, "--out");  // before the statistics, not after
  const ExperimentSpec spec = load_spec(find_config(args.config), args.overrides);
  const nlohmann::ordered_json stats = data_stats(spec, resolve_data_root(args.data_root), args.options);
  std::fputs(data_stats_table(stats).c_str(), stdout);
  if (!args.out.empty()) {
    write_file_atomic(args.out, dump_json_text(stats, 2) + "\n");
    spdlog::info("{}: the statistics as JSON", args.out);
  }
  return 0;
}

/// `data stats`.
std::pair<CLI::App*, Action> add_data_stats(CLI::App& data) {
  auto args = std::make_shared<StatsArgs>();
  CLI::App* sub = data.add_subcommand(
      "stats", "A spec's data as its task reads it: examples per split, label counts, lengths before and after "
               "truncation, vocabulary, unknown-symbol rate, majority-class baseline; for images (cifar10, pathfinder) "
               "the image size and the pixel levels' mean and std, and the first images as PNG files");
  sub->add_option("config", args->config, "experiment spec (YAML)")->required();
  sub->add_option("--set", args->overrides, "override a spec key: key.path=value (repeatable)");
  sub->add_option("--out", args->out, "also write the statistics as JSON to this file");
  sub->add_option("--data-root", args->data_root, "dataset root (default $TRANSNORMER_DATA, else ./datasets)");
  sub->add_option("--images", args->options.images,
                  "image readers: write the first N examples of each split as PNG files (<split>_<index>_label<k>...)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--images-dir", args->options.images_dir, "the folder for --images (created when missing)");
  sub->add_option("--images-scale", args->options.images_scale, "enlarge each image K times, nearest neighbour")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  return {sub, [args]() { return run_stats(*args); }};
}

}  // namespace

Action add_data_verb(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "data",
      "Dataset utilities: fetch the datasets from their official sources, generate synthetic datasets (LRA "
      "ListOps, Pathfinder, a small Retrieval set), statistics of a spec's data");
  sub->require_subcommand(1, 1);
  // One entry per subcommand of `data`.
  return dispatch({add_data_fetch(*sub), add_data_generate(*sub), add_data_stats(*sub)});
}

}  // namespace tn::app
