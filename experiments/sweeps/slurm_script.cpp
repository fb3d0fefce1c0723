#include "experiments/sweeps/slurm_script.h"

#include "core/error.h"
#include "core/platform/process/shell_quote.h"

namespace tn {
namespace {

bool control(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

/// `text` for a comment line: control characters (a newline would end the comment) become '?'.
std::string comment_text(std::string text) {
  for (char& c : text)
    if (control(c)) c = '?';
  return text;
}

/// A value of an #SBATCH line: as it is, or in double quotes when it has spaces (sbatch reads them
/// so). Throws ConfigError naming `what` for a control character or a double quote, which no
/// directive can carry; with `pattern`, also for % and \, which Slurm reads in file names.
std::string directive_value(const std::string& v, const std::string& what, bool pattern = false) {
  for (char c : v) {
    if (control(c) || c == '"' || (pattern && (c == '%' || c == '\\')))
      throw ConfigError(what + " \"" + comment_text(v) + "\" cannot go into the Slurm batch script: " +
                        (control(c) ? "it holds a control character (a newline would end the #SBATCH line and "
                                      "run the rest as a command)"
                         : c == '"' ? "it holds a double quote, which an #SBATCH line cannot carry"
                                    : std::string("it holds ") + c + ", which Slurm reads as a file name pattern") +
                        "; rename it, or run the sweep from another folder");
  }
  return v.find_first_of(" \t") == std::string::npos ? v : "\"" + v + "\"";
}

/// `word` in single quotes for the script's shell; ConfigError for a NUL byte, which bash drops.
std::string script_word(const std::string& word, const std::string& what) {
  if (word.find('\0') != std::string::npos)
    throw ConfigError(what + " holds a NUL byte, which no shell script can carry; remove it");
  return shell_quote(word);
}

/// The shell command of argv, each word checked by script_word.
std::string script_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + script_word(a, "a point's command");
  return out;
}

[[noreturn]] void not_options(const std::string& text, const std::string& why) {
  throw ConfigError("--slurm \"" + comment_text(text) + "\": not a list of sbatch options (" + why +
                    "); give plain options, e.g. --slurm \"--partition=cpu --time=4:00:00\" (nothing in it is "
                    "expanded)");
}

/// The text of a double-quoted word from text[i] (just after its opening quote) to its closing
/// quote, which i is left on: \" \\ \$ \` stand for the character; $ and ` are refused.
std::string double_quoted(const std::string& text, size_t& i) {
  std::string out;
  for (; i < text.size() && text[i] != '"'; ++i) {
    const char c = text[i];
    if (c == '$' || c == '`') not_options(text, std::string("a ") + c + " inside double quotes would be expanded");
    if (c == '\\' && i + 1 < text.size() && std::string("\"\\$`").find(text[i + 1]) != std::string::npos) ++i;
    out += text[i];
  }
  if (i == text.size()) not_options(text, "unbalanced double quotes");
  return out;
}

/// The user's sbatch options (--slurm, split into words) as #SBATCH lines, after the sweep's own
/// (the later line wins): "--time=1:00:00" on a line, "-p cpu" (an option and its value) on one.
std::string sbatch_option_lines(const std::vector<std::string>& words) {
  std::string lines, line;
  for (const std::string& word : words) {
    if (!word.empty() && word[0] == '-' && !line.empty()) {
      lines += "#SBATCH" + line + "\n";
      line.clear();
    }
    line += " " + directive_value(word, "the --slurm option");
  }
  if (!line.empty()) lines += "#SBATCH" + line + "\n";
  return lines;
}

}  // namespace

std::vector<std::string> split_sbatch_options(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      const size_t end = text.find('\'', i + 1);
      if (end == std::string::npos) not_options(text, "unbalanced single quotes");
      word += text.substr(i + 1, end - i - 1);
      i = end;
    } else if (c == '"') {
      ++i;
      word += double_quoted(text, i);
    } else if (c == '\\') {
      if (++i == text.size()) not_options(text, "a backslash at the end");
      if (text[i] != '\n') word += text[i];
    } else if (std::string("$`|;&<>()").find(c) != std::string::npos) {
      not_options(text, std::string("shell syntax: ") + c + " (a shell would expand or run it)");
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

std::string slurm_batch_script(const SlurmOptions& o, const std::vector<PointLaunch>& points) {
  std::string s = "#!/bin/bash\n";
  s += "# transnormer sweep " + comment_text(o.job_name) + ": " + std::to_string(points.size()) +
       " point(s) as one Slurm job array; task i runs the i-th command below, appending to its train.log.\n";
  s += "# Written by `transnormer sweep --launcher slurm`, which submits it and follows its tasks (by hand:\n";
  s += "# `sbatch FILE`, from any folder: the tasks run in --chdir).\n";
  s += "#SBATCH --job-name=" + directive_value(o.job_name, "the sweep's name") + "\n";
  s += "#SBATCH --array=0-" + std::to_string(points.empty() ? 0 : points.size() - 1) +
       (o.max_running > 0 ? "%" + std::to_string(o.max_running) : "") + "\n";
  s += "#SBATCH --ntasks=" + std::to_string(o.ranks) + "\n";
  s += "#SBATCH --cpus-per-task=" + std::to_string(o.threads) + "\n";
  s += "#SBATCH --chdir=" + directive_value(o.workdir.string(), "the working directory") + "\n";
  directive_value(o.folder.string(), "the sweep folder (--out)", true);  // no pattern of its own in it
  s += "#SBATCH --output=" + directive_value((o.folder / "%A_%a.out").string(), "the sweep folder (--out)") + "\n";
  s += sbatch_option_lines(o.sbatch_args);
  s += "set -u\n";
  s += "case \"${SLURM_ARRAY_TASK_ID:?submit this script with sbatch}\" in\n";
  for (size_t i = 0; i < points.size(); ++i) {
    const std::string command = script_command(points[i].argv);
    const std::string log = script_word(points[i].log.string(), "a point's log path");
    s += "  " + std::to_string(i) + ")\n";
    s += "    mkdir -p " + shell_quote(points[i].log.parent_path().string()) + "\n";
    s += "    printf '# transnormer sweep %s: Slurm job %s_%s on %s: %s\\n' " + script_word(o.job_name, "the sweep's name") +
         " \"$SLURM_ARRAY_JOB_ID\" \"$SLURM_ARRAY_TASK_ID\" \"$(hostname)\" " + shell_quote(command) + " >> " + log +
         "\n";
    s += "    exec " + command + " >> " + log + " 2>&1 ;;\n";
  }
  s += "esac\n";
  s += "echo \"transnormer sweep: no point for array task $SLURM_ARRAY_TASK_ID\" >&2\n";
  s += "exit 2\n";
  return s;
}

}  // namespace tn
