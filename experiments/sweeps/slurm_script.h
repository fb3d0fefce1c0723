#pragma once
// The text that reaches Slurm from a sweep: the batch script of a job array and the user's sbatch
// options (--slurm). Every value written into the script is quoted or refused: the words of each
// point's command and its log path in single quotes (core/platform/process/shell_quote.h), the #SBATCH
// values as sbatch reads them (double quotes around spaces; a control character such as a newline,
// which would end the directive and make the rest a command, or a double quote is refused, as are
// % and \ in --output, which Slurm reads as file name patterns), comment lines with control
// characters replaced. --slurm is split into words without any expansion (no globbing, ~ or
// variables; $, backticks and | ; & < > ( ) refused), and its words go to sbatch's argv, never into
// a script.
#include <filesystem>
#include <string>
#include <vector>

#include "experiments/sweeps/point_launcher.h"

namespace tn {

struct SlurmOptions {
  std::string job_name;                   // the array's --job-name: the sweep's name
  std::filesystem::path folder;           // <sweep folder>/slurm: batch scripts and Slurm's own output
  std::filesystem::path workdir;          // --chdir of the tasks (the sweep's working directory)
  std::vector<std::string> sbatch_args;   // the user's sbatch options (--slurm), before the script
  int threads = 1;                        // --cpus-per-task, and each point's --threads
  int ranks = 1;                          // --ntasks of each task (data-parallel ranks)
  int max_running = 0;                    // the array's %N throttle (tasks at a time); 0: no limit
  double poll_s = 2;                      // seconds between two looks at the queue
};

/// Splits `text` (--slurm "...") into words as a shell would split it, quotes ('...', "...") and
/// backslashes included, without expanding anything: `*`, `?`, `[...]` and `~` stay as written.
/// Throws ConfigError naming the option for unbalanced quotes or shell syntax (`$`, backticks, `|`,
/// `;`, `&`, `<`, `>`, `(`, `)`), which a shell would expand or run.
std::vector<std::string> split_sbatch_options(const std::string& text);

/// The batch script of a job array whose task i runs points[i]: #SBATCH lines (the sweep's, then
/// the user's --slurm options, so that `sbatch FILE` by hand submits what the sweep would), then a `case` on
/// SLURM_ARRAY_TASK_ID that appends a header to the point's log and execs its command there.
/// Submittable by hand (`sbatch script`), which is what `sweep --dry-run --launcher slurm` prints.
/// Throws ConfigError naming the value (the sweep's name, the working directory, --out) when it
/// cannot be written into an #SBATCH line, or when a command word or log path holds a NUL byte.
std::string slurm_batch_script(const SlurmOptions& options, const std::vector<PointLaunch>& points);

}  // namespace tn
