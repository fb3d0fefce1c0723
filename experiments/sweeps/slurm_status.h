#pragma once
// Reading Slurm's answers about a job array's tasks: `squeue -h -r -j JOB -o "%K|%T|%N"` for the
// tasks still queued or running, `scontrol show job -o JOB_TASK` for one that ended (Slurm keeps
// it for MinJobAge, 300 s by default; sacct needs accounting, which many clusters lack).
// Field names and states: Slurm's squeue(1) and scontrol(1) manual pages, "JOB STATE CODES".
#include <optional>
#include <string>
#include <vector>

namespace tn {

/// One line of `squeue -h -r -o "%K|%T|%N"`: an array task that is queued or running.
struct SlurmQueuedTask {
  int task = -1;        // SLURM_ARRAY_TASK_ID
  std::string state;    // PENDING, CONFIGURING, RUNNING, COMPLETING, SUSPENDED, ...
  std::string node;     // empty while pending
};

/// Parses squeue's lines; lines that do not have the three fields are skipped.
std::vector<SlurmQueuedTask> parse_squeue_tasks(const std::string& text);

/// Whether a squeue state means the task's command has started (RUNNING, COMPLETING, SUSPENDED,
/// ...), as opposed to waiting (PENDING, REQUEUED, CONFIGURING: the node is booting).
bool slurm_state_started(const std::string& state);

/// How an ended task ended, from `scontrol show job -o`.
struct SlurmTaskEnd {
  std::string state;         // COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, ...
  int exit_code = 0;         // the batch script's exit code, or 128 + the signal that ended it
  bool killed = false;       // Slurm or a signal ended it, not the command itself
  std::optional<double> run_s;  // RunTime in seconds
};

/// Parses `scontrol show job -o` output (one line of Key=Value fields); nullopt when the job is
/// still pending or running, or the text is no job record (scontrol_has_state tells which). An
/// ExitCode that is no "status:signal" pair of small numbers gives exit code 0 for COMPLETED, else 1.
std::optional<SlurmTaskEnd> parse_scontrol_end(const std::string& text);

/// Whether `scontrol show job -o` output has a JobState field at all (a job record).
bool scontrol_has_state(const std::string& text);

/// "D-HH:MM:SS", "HH:MM:SS" or "MM:SS" in seconds; nullopt for anything else ("INVALID").
std::optional<double> parse_slurm_duration(const std::string& text);

}  // namespace tn
