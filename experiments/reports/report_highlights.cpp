#include "experiments/reports/report_highlights.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "core/platform/process/shell_quote.h"
#include "experiments/reports/report_format.h"

namespace tn {

namespace {

/// The settings a reader compares runs by, in reading order.
const std::vector<std::string> kSharedKeys = {
    "task",          "model.arch",        "model.d_model",        "model.n_layers",
    "model.n_heads", "data.seq_len",      "train.batch_size",     "train.max_steps",
    "train.schedule.name", "train.schedule.warmup_steps", "train.optimizer.lr", "train.precision",
    "train.limit_eval_batches"};

std::string config_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

/// The config value of `key` in `run` as text, or nullopt when the run does not set it (or sets null).
std::optional<std::string> config_value(const RunRecord& run, const std::string& key) {
  const auto it = std::find_if(run.flat_config.begin(), run.flat_config.end(),
                               [&](const auto& kv) { return kv.first == key; });
  if (it == run.flat_config.end() || it->second.is_null()) return std::nullopt;
  return config_text(it->second);
}

/// The value of `key` shared by every run with a config, or nullopt (absent somewhere, or differing).
std::optional<std::string> shared_value(const ReportInputs& inputs, const std::string& key) {
  std::optional<std::string> value;
  for (const RunRecord& run : inputs.runs) {
    if (run.flat_config.empty()) continue;
    const std::optional<std::string> text = config_value(run, key);
    if (!text || (value && *value != *text)) return std::nullopt;
    value = text;
  }
  return value;
}

std::optional<std::string> params_text(const ReportTable& table) {
  double lo = INFINITY, hi = -INFINITY;
  for (const ReportRow& row : table.rows)
    if (row.params.has_mean()) {
      lo = std::min(lo, row.params.mean);
      hi = std::max(hi, row.params.mean);
    }
  if (!std::isfinite(lo)) return std::nullopt;
  return format_count(lo) == format_count(hi) ? format_count(lo) : format_count(lo) + "–" + format_count(hi);
}

std::optional<BestValue> best_of(const ReportTable& table, const std::string& metric, const std::vector<size_t>& rows) {
  BestValue best{metric, lower_is_better(metric), 0, {}, {}};
  int ranked = 0;  // rows with a mean: a best needs two at least (a row alone is not "best")
  for (size_t r : rows) {
    const PooledStat& s = table.rows[r].metrics.at(metric);
    if (!s.has_mean() || !std::isfinite(s.mean)) continue;
    const double current = table.rows[best.row].metrics.at(metric).mean;
    if (ranked == 0 || (best.lower_is_better ? s.mean < current : s.mean > current)) best.row = r;
    ++ranked;
  }
  if (ranked < 2) return std::nullopt;
  const PooledStat& b = table.rows[best.row].metrics.at(metric);
  for (size_t r : rows) {
    if (!b.has_std()) break;
    const PooledStat& s = table.rows[r].metrics.at(metric);
    if (r == best.row || !s.has_std() || !std::isfinite(s.mean)) continue;
    if (std::fabs(s.mean - b.mean) > 2.0 * std::max(s.std, b.std)) best.clearly_worse.push_back(r);
  }
  return best;
}

/// The config keys that say what a run learns (its task, written `task: NAME` or `task: {name: ...}`,
/// then its data), most general first: rows that differ in one of them are not ranked against each
/// other (a masked LM's perplexity is no rival of a causal LM's, a ListOps accuracy of a Text one,
/// nor CoLA's loss of SST-2's).
const std::vector<std::string> kDataKeys = {"task", "task.name", "data.task", "data.reader", "data.dir", "data.train"};

/// The rows of `table` grouped by the first kDataKeys key whose value differs between rows, each
/// group labelled by it ("data.reader listops"); one unlabelled group when no such key differs.
std::vector<std::pair<std::string, std::vector<size_t>>> data_groups(const ReportInputs& inputs,
                                                                      const ReportTable& table) {
  auto value = [&](size_t row, const std::string& key) {
    if (table.rows[row].runs.empty()) return std::string("unset");
    return config_value(inputs.runs[table.rows[row].runs.front()], key).value_or("unset");
  };
  std::vector<size_t> all(table.rows.size());
  for (size_t r = 0; r < all.size(); ++r) all[r] = r;
  for (const std::string& key : kDataKeys) {
    std::vector<std::pair<std::string, std::vector<size_t>>> groups;
    std::map<std::string, size_t> index;
    for (size_t r : all) {
      const std::string v = value(r, key);
      const auto [it, fresh] = index.emplace(v, groups.size());
      if (fresh) groups.push_back({key + " " + v, {}});
      groups[it->second].second.push_back(r);
    }
    if (groups.size() > 1) return groups;
  }
  return {{"", all}};
}

/// Whether a run of `row` scored only part of its splits (train.limit_eval_batches set).
bool partial_evaluation(const ReportInputs& inputs, const ReportRow& row) {
  for (size_t run : row.runs) {
    const std::optional<std::string> limit = config_value(inputs.runs[run], "train.limit_eval_batches");
    if (limit && *limit != "0") return true;
  }
  return false;
}

}  // namespace

ReportHighlights report_highlights(const ReportInputs& inputs, const ReportTable& table) {
  ReportHighlights h;
  for (const std::string& key : kSharedKeys)
    if (auto v = shared_value(inputs, key)) h.shared.emplace_back(key, *v);
  const auto steps = shared_value(inputs, "train.max_steps"), batch = shared_value(inputs, "train.batch_size"),
             seq = shared_value(inputs, "data.seq_len");
  if (steps && batch && seq) {
    try {
      const double tokens = std::stod(*steps) * std::stod(*batch) * std::stod(*seq);
      h.shared.emplace_back("tokens per run", format_count(tokens));
    } catch (const std::exception&) {  // a value that is not a number: no total
    }
  }
  if (auto p = params_text(table)) h.shared.emplace_back("params", *p);
  for (size_t r = 0; r < table.rows.size(); ++r)
    if (partial_evaluation(inputs, table.rows[r])) h.unranked.push_back(r);
  auto groups = data_groups(inputs, table);
  for (auto& group : groups)  // a row scored on part of its splits is no rival of any row
    group.second.erase(std::remove_if(group.second.begin(), group.second.end(),
                                      [&](size_t r) { return partial_evaluation(inputs, table.rows[r]); }),
                       group.second.end());
  for (const std::string& m : table.metrics)
    for (const auto& [label, rows] : groups)
      if (auto b = best_of(table, m, rows)) {
        b->group = label;
        h.best.push_back(std::move(*b));
      }
  return h;
}

bool is_best(const ReportHighlights& h, const std::string& metric, size_t row) {
  for (const BestValue& b : h.best)
    if (b.metric == metric && b.row == row) return true;
  return false;
}

std::string speed_note(const ReportTable& table) {
  int jobs = 0;
  for (const ReportRow& row : table.rows) jobs = std::max(jobs, row.speed_jobs);
  if (jobs < 2) return "";
  return "† tokens/s and wall time measured with up to " + std::to_string(jobs) +
         " sweep points running side by side, sharing the machine's cores and memory bandwidth: compare "
         "speeds from a sweep run with --jobs 1, or with `transnormer bench`.";
}

std::string row_order_text(const ReportTable& table) {
  if (!table.by.empty()) return "Rows are ordered by " + table.by + ".";
  if (table.sweep_order) return "Rows are in the order of the sweep file (the paper's table order for the ablations).";
  return "Rows are in the order the run directories were given.";
}

std::string ranks_by_threads(const ReportRow& row) {
  if (row.ranks <= 0 || row.threads <= 0) return "";
  return std::to_string(row.ranks) + " × " + std::to_string(row.threads);
}

std::string baseline_note(const ReportTable& table) {
  if (table.baseline_metrics.empty()) return "";
  return "(baseline): the task's reference value on the same split, from its data alone: the unigram "
         "perplexity for language models (a model that knows only word frequencies), the majority class "
         "for classification, a constant prediction for regression. A model must beat it to have learned "
         "anything beyond the label or word counts.";
}

namespace {

/// The shell word that starts at `pos` of `text` (as shell_quote writes words: plain, or in single
/// quotes with '\'' for a quote), unquoted.
std::string shell_word_at(const std::string& text, size_t pos) {
  std::string word;
  for (bool quoted = false; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (c == '\'') {
      quoted = !quoted;
    } else if (c == '\\' && !quoted && pos + 1 < text.size()) {
      word += text[++pos];
    } else if (c == ' ' && !quoted) {
      break;
    } else {
      word += c;
    }
  }
  return word;
}

/// The value of `flag` (" --out ") in a point's recorded command, unquoted; "" when absent.
std::string command_value(const std::string& command, const std::string& flag) {
  const size_t at = command.find(flag);
  return at == std::string::npos ? "" : shell_word_at(command, at + flag.size());
}

}  // namespace

std::string reproduce_command(const ReportSource& source) {
  if (!source.sweep || source.sweep->sweep_file.empty()) return "";
  const SweepIndex& sweep = *source.sweep;
  // The sweep file's path is relative to where the sweep ran; so is the --out it was given. The
  // index records both (cwd, out); an older one, the --out of its points' commands
  // ("--out runs/small/lra/<point dir>").
  std::string folder = sweep.out.empty() ? source.dir : sweep.out;
  for (const PointRecord& p : sweep.points) {
    if (!sweep.out.empty()) break;
    const std::string point_out = command_value(p.command, " --out ");
    if (point_out.empty()) continue;
    const std::string tail = "/" + p.dir;
    if (point_out.size() > tail.size() && point_out.ends_with(tail)) folder = point_out.substr(0, point_out.size() - tail.size());
    break;
  }
  const bool relative = !std::filesystem::path(sweep.sweep_file).is_absolute() ||
                        !std::filesystem::path(folder).is_absolute();
  std::string out = relative && !sweep.cwd.empty() ? "cd " + shell_quote(sweep.cwd) + " && " : "";
  out += "transnormer sweep " + shell_quote(sweep.sweep_file) + " --out " + shell_quote(folder);
  // The command line's additions to the sweep file (absent, the rerun would be another sweep).
  out += sweep.command_line_words();
  std::optional<int> jobs, threads, ranks;
  bool slurm = false;
  for (const PointRecord& p : sweep.points) {
    if (p.jobs) jobs = std::max(jobs.value_or(0), *p.jobs);
    if (p.threads) threads = std::max(threads.value_or(0), *p.threads);
    if (p.ranks) ranks = std::max(ranks.value_or(0), *p.ranks);
    slurm |= p.launcher == "slurm";
  }
  if (slurm) out += " --launcher slurm";  // its jobs are the array's size, not a limit
  if (jobs && !slurm) out += " --jobs " + std::to_string(*jobs);
  if (threads) out += " --threads-per-job " + std::to_string(*threads);
  if (ranks) out += " --ranks-per-point " + std::to_string(*ranks);
  // The data root the points were given (the sweep's --data-root or $TRANSNORMER_DATA), as their
  // commands recorded it: the rerun reads the same data.
  for (const PointRecord& p : sweep.points) {
    const std::string root = command_value(p.command, " --data-root ");
    if (root.empty()) continue;
    out += " --data-root " + (root.rfind("<data root>", 0) == 0 ? std::string("<data root>") : shell_quote(root));
    break;
  }
  return out;
}

std::string describe_unranked(const ReportTable& table, const ReportHighlights& h) {
  if (h.unranked.empty() || table.metrics.empty()) return "";
  std::string out = "Not ranked: ";
  for (size_t i = 0; i < h.unranked.size(); ++i) out += (i ? ", " : "") + table.rows[h.unranked[i]].label;
  return out + " (evaluated on at most train.limit_eval_batches batches of each split, as a smoke test is).";
}

std::string describe_shared(const ReportHighlights& h) {
  std::string out;
  for (const auto& [key, value] : h.shared) {
    std::string name = key.substr(key.rfind('.') == std::string::npos ? 0 : key.rfind('.') + 1);
    if (name == "name") {  // train.schedule.name: the section names it
      const std::string section = key.substr(0, key.rfind('.'));
      name = section.substr(section.rfind('.') == std::string::npos ? 0 : section.rfind('.') + 1);
    }
    out += (out.empty() ? "" : ", ") + name + " " + value;
  }
  return out;
}

std::string describe_best(const ReportTable& table, const BestValue& best) {
  std::string out = best.metric + (best.lower_is_better ? " (lower is better)" : " (higher is better)") +
                    (best.group.empty() ? "" : " among the rows of " + best.group) + ": best " +
                    table.rows[best.row].label + ", " + format_stat(table.rows[best.row].metrics.at(best.metric));
  if (best.clearly_worse.empty()) return out + "; no point is clearly behind it (gap > 2 × the larger std).";
  out += "; clearly behind it (gap > 2 × the larger std): ";
  for (size_t i = 0; i < best.clearly_worse.size(); ++i)
    out += (i ? ", " : "") + table.rows[best.clearly_worse[i]].label;
  return out + ".";
}

}  // namespace tn
