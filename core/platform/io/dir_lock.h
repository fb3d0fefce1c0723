#pragma once
// One writer per folder: a run directory or a sweep folder is claimed for the lifetime of the
// process that writes in it, so two `train` (or two `sweep`) processes never mix their files. The
// claim is a flock(2) on "<folder>/.lock", which the kernel releases when the process ends, however
// it ends (kill -9 included): no stale claim to clean up. The file holds the holder's pid, for the
// message of the process refused. A ".lock" that is a symbolic link, FIFO, device or anything but a
// regular file is refused (ConfigError): it is opened without following a link and without
// blocking, so the pid never lands in a link's target and a FIFO never hangs the open.
#include <string>

namespace tn {

class DirLock {
 public:
  DirLock() = default;
  /// Claims `dir` (created, with its parents, if missing). `what` names it in messages ("run
  /// folder", "sweep folder"). Throws ConfigError (exit 2) when another process holds it, naming
  /// the folder and that process's pid, or when its .lock is not a regular file; IoError when the
  /// lock file cannot be made.
  static DirLock acquire(const std::string& dir, const std::string& what);
  /// Throws the ConfigError of acquire when another process holds `dir` now, claiming nothing (so
  /// a refusal names the writer at work before anything about the folder's files). Free, missing,
  /// or held by this process: returns.
  static void check_free(const std::string& dir, const std::string& what);
  /// Whether a process other than this one holds `dir` now (a run training in it, a sweep running);
  /// false for a folder never claimed, or one whose .lock cannot be opened. Never throws.
  static bool busy(const std::string& dir);
  ~DirLock();
  DirLock(DirLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DirLock& operator=(DirLock&& other) noexcept;
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  explicit DirLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

/// Throws ConfigError (exit 2) naming `dir` and the fix when it cannot become a folder: it, or a
/// folder above it, is a file (or a device), or it is a symbolic link to nothing (or a loop); a
/// name in it is over 255 bytes; or its nearest existing folder is one this process may not write
/// (permissions, a read-only file system, proc or sysfs). `what` names it in the message ("run
/// folder", "report folder"). Missing folders are fine: they are created. Writes nothing.
void check_folder_path(const std::string& dir, const std::string& what);

/// Throws ConfigError (exit 2) naming `option` ("--output") and `path` when a file cannot be
/// written there: the path is a folder, or the folder it names does not exist or is not a folder.
/// For a verb's single output file, checked before the work that produces it. Writes nothing.
void check_output_file(const std::string& path, const std::string& option);

/// The name of the lock file inside a claimed folder.
inline constexpr const char* kLockFile = ".lock";

}  // namespace tn
