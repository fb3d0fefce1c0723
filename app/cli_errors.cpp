#include "app/cli_errors.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <regex>
#include <sstream>

#include "core/platform/process/shell_quote.h"

namespace tn::app {
namespace {

/// True when all of `text` reads as a number (strtod).
bool is_number(const std::string& text) {
  if (text.empty()) return false;
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

/// "0.001000" -> "0.001", "1024.000000" -> "1024" (CLI11 prints a double's bounds with %f).
std::string trimmed(std::string bound) {
  if (bound.find('.') == std::string::npos) return bound;
  bound.erase(bound.find_last_not_of('0') + 1);
  if (bound.back() == '.') bound.pop_back();
  return bound;
}

/// The arguments CLI11 did not expect, read as Hydra overrides: "train.max_steps=5" -> set
/// "train.max_steps=5"; `-m` and `--multirun` (Hydra's multirun switch) are noted and dropped.
struct HydraWords {
  std::vector<std::pair<std::string, std::string>> overrides;  // key, value, in the order typed
  bool multirun = false;
  bool cfg = false;  // --cfg job (or hydra, all): print the resolved config
};

/// The words as Hydra overrides, or nullopt when one of them is not one.
std::optional<HydraWords> hydra_words(const std::string& words) {
  static const std::regex override_word("^\\+{0,2}([A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z0-9_]+)*)=(.*)$");
  HydraWords out;
  std::istringstream in(words);
  bool cfg_value = false;  // job, hydra or all, which only --cfg makes Hydra's
  for (std::string word; in >> word;) {  // CLI11 lists them last first (detail::rjoin)
    if (word == "-m" || word == "--multirun") {
      out.multirun = true;
      continue;
    }
    if (word == "--cfg" || word == "-c") {
      out.cfg = true;
      continue;
    }
    if (word == "job" || word == "hydra" || word == "all") {
      cfg_value = true;
      continue;
    }
    std::smatch m;
    if (!std::regex_match(word, m, override_word)) return std::nullopt;
    out.overrides.insert(out.overrides.begin(), {m[1].str(), m[3].str()});
  }
  if (cfg_value && !out.cfg) return std::nullopt;
  if (out.overrides.empty() && !out.multirun && !out.cfg) return std::nullopt;
  return out;
}

bool is_list(const std::string& value) {
  return value.find(',') != std::string::npos && value.find_first_of("[{") == std::string::npos;
}

/// "--set 'k=v' --grid 'k=a,b'": the words that say the overrides here (a list is a grid).
std::string set_and_grid(const HydraWords& h) {
  std::string out;
  for (const auto& [key, value] : h.overrides)
    out += std::string(out.empty() ? "" : " ") + (is_list(value) ? "--grid " : "--set ") + shell_quote(key + "=" + value);
  return out;
}

/// For a verb without --set: "--split test" for each override naming one of its options, else "".
std::string as_options(const HydraWords& h, const std::vector<std::string>& options) {
  std::string out;
  for (const auto& [key, value] : h.overrides) {
    std::string flag = key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    if (std::find(options.begin(), options.end(), flag) == options.end()) return "";
    out += std::string(out.empty() ? "" : " ") + "--" + flag + " " + shell_quote(value);
  }
  return out;
}

/// For Hydra's --cfg or -m alone, given to a verb without them: what does it here.
std::string switch_hint(const HydraWords& h, const CliVerb& verb) {
  if (h.cfg && verb.name == "sweep")
    return "`sweep` has no --cfg: `transnormer sweep FILE --dry-run` lists every point with its overrides and "
           "folder, and `transnormer train SPEC.yaml --cfg job --set key=value` prints one point's resolved spec";
  if (h.cfg)
    return "only `train` has --cfg job (it prints a spec resolved, e.g. transnormer train SPEC.yaml --cfg job); a "
           "run's resolved spec is RUN_DIR/config.yaml";
  if (verb.name == "sweep")
    return "`sweep` runs every point of its file and of its --grid axes already: leave out -m/--multirun";
  return "a multirun is a sweep: transnormer sweep SPEC.yaml --grid key=v1,v2 (one point per value)";
}

/// The message for Hydra overrides given where this CLI takes options.
std::string hydra_hint(const HydraWords& h, const std::string& unexpected, const CliVerb& verb) {
  if (h.overrides.empty() || h.cfg) return unexpected + "\n" + switch_hint(h, verb);
  // Hydra's own output folders: the --out of this CLI.
  for (const auto& [key, value] : h.overrides)
    if (key == "hydra.run.dir" || key == "hydra.sweep.dir")
      return unexpected + "\nThe output folder is --out here: --out " + shell_quote(value);
  const std::string words = set_and_grid(h);
  const bool list = words.find("--grid ") != std::string::npos;
  if (!verb.takes_set) {
    const std::string options = as_options(h, verb.options);
    return unexpected + "\n`" + verb.name + "` takes options, not key=value overrides" +
           (options.empty() ? "" : ": " + options) + " (transnormer " + verb.name + " --help lists them)";
  }
  if (verb.name != "sweep" && (list || h.multirun))
    return unexpected + "\nA list of values is a sweep (Hydra's multirun" + (h.multirun ? ", -m" : "") +
           "): transnormer sweep SPEC.yaml " + words + " (one point per value); `" + verb.name +
           "` takes one value per key, with --set key=value";
  return unexpected + "\nSpec values are overridden with --set key=value (a sweep varies one with --grid key=v1,v2" +
         std::string(h.multirun ? "; a sweep needs no -m" : "") + "): " + words;
}

/// The spec key a fairseq or Lightning flag sets here ("" when none): --max_steps, --max-update,
/// --seed, --lr, --batch-size and their spellings.
std::string spec_key_of_flag(std::string flag) {
  for (char& c : flag)
    if (c == '-') c = '_';
  static const std::vector<std::pair<std::string, std::string>> keys = {
      {"__max_steps", "train.max_steps"}, {"__max_update", "train.max_steps"}, {"__seed", "train.seed"},
      {"__lr", "train.optimizer.lr"},     {"__batch_size", "train.batch_size"}};
  for (const auto& [name, key] : keys)
    if (flag == name) return key;
  return "";
}

/// For flags other tools take (fairseq, Lightning, Hydra's --config-name), given to a verb with
/// --set: what does it here; empty when none of `typed` is one.
std::string foreign_flag_hint(const std::vector<std::string>& typed, const CliVerb& verb) {
  for (size_t i = 0; i < typed.size(); ++i) {
    std::string flag = typed[i], value = i + 1 < typed.size() ? typed[i + 1] : "N";
    if (const size_t eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    if (flag == "--fast_dev_run" || flag == "--fast-dev-run")
      return "A smoke test is --smoke here: " + verb.name + " SPEC.yaml --smoke (a few steps and batches, into a "
             "scratch folder)";
    if (flag == "--config-name" || flag == "--config-path" || flag == "--config_name")
      return "The spec is the first argument here: transnormer " + verb.name + " path/to/SPEC.yaml";
    if (verb.takes_set && flag.rfind("--", 0) == 0)
      if (const std::string key = spec_key_of_flag(flag); !key.empty())
        return "Spec values are set with --set here: --set " + key + "=" + value;
  }
  return "";
}

}  // namespace

std::string cli_error_text(const std::string& message, const CliVerb& verb) {
  static const std::regex unexpected("^The following arguments? (was|were) not expected: (.*)$");
  std::smatch u;
  if (std::regex_match(message, u, unexpected)) {
    std::vector<std::string> typed;  // CLI11 lists them last first (detail::rjoin)
    std::istringstream in(u[2].str());
    for (std::string word; in >> word;) typed.insert(typed.begin(), word);
    std::string words;
    for (const std::string& w : typed) words += (words.empty() ? "" : " ") + w;
    const std::string said =
        "The following argument" + std::string(typed.size() == 1 ? " was" : "s were") + " not expected: " + words;
    if (const std::optional<HydraWords> h = hydra_words(u[2].str())) return hydra_hint(*h, said, verb);
    if (const std::string hint = foreign_flag_hint(typed, verb); !hint.empty()) return said + "\n" + hint;
  }
  static const std::regex repeated("^(-[^:]+): At Most 1 required but received (\\d+)$");
  std::smatch r;
  if (std::regex_match(message, r, repeated))
    return r[1].str() + " is given " + r[2].str() + " times; give it once (one value)";
  static const std::regex range("^(.*: ?)?Value (.*) not in range (\\S+) to (\\S+)$");
  std::smatch m;
  if (!std::regex_match(message, m, range)) return message;
  const bool whole = m[3].str().find('.') == std::string::npos && m[4].str().find('.') == std::string::npos;
  const std::string lo = trimmed(m[3].str()), hi = trimmed(m[4].str());
  const std::string value = m[2].str().empty() ? "an empty value" : "'" + m[2].str() + "'";
  if (is_number(m[2].str())) {  // in range, but a whole number was asked: "Value 1.5 not in range 1 to 60"
    if (!whole || m[2].str().find_first_not_of("+-0123456789") == std::string::npos) return message;
    return m[1].str() + value + " is not a whole number; give a whole number from " + lo + " to " + hi;
  }
  return m[1].str() + value + " is not a number; give " + (whole ? "a whole number" : "a number") + " from " + lo +
         " to " + hi;
}

}  // namespace tn::app
