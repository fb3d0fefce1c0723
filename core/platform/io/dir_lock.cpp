#include "core/platform/io/dir_lock.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "core/error.h"
#include "core/platform/io/own_files.h"

namespace tn {
namespace {

/// The pid written in a lock file ("" when it holds none).
std::string holder_pid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  const std::string holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  return holder.find_first_not_of("0123456789") == std::string::npos ? holder : "";
}

ConfigError in_use(const std::string& what, const std::string& dir, const std::string& pid) {
  return ConfigError("the " + what + " " + dir + " is in use by another transnormer process" +
                     (pid.empty() ? "" : " (pid " + pid + ")") +
                     ": two writers would mix their files; wait for it to end, stop it, or choose another "
                     "folder (--out)");
}

}  // namespace

namespace {

/// Whether `folder` is on a kernel's virtual file system (proc, sysfs, cgroup, ...), where no
/// file of a run can be made (mkdir fails there even for root).
bool on_virtual_file_system(const std::string& folder) {
  struct statfs fs {};
  if (::statfs(folder.c_str(), &fs) != 0) return false;
  constexpr long kVirtual[] = {PROC_SUPER_MAGIC, SYSFS_MAGIC,      CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC,
                               DEVPTS_SUPER_MAGIC, DEBUGFS_MAGIC, SECURITYFS_MAGIC, TRACEFS_MAGIC,
                               PSTOREFS_MAGIC,   BPF_FS_MAGIC};
  for (const long magic : kVirtual)
    if (fs.f_type == static_cast<decltype(fs.f_type)>(magic)) return true;
  return false;
}

/// Refuses a path with a name over the 255 bytes a file name may have, or over PATH_MAX in all:
/// mkdir or open would fail with ENAMETOOLONG once the work is done.
void check_name_lengths(const std::string& dir, const std::string& what) {
  constexpr size_t kNameMax = 255, kPathMax = 4095;
  for (const auto& part : std::filesystem::path(dir))
    if (part.native().size() > kNameMax)
      throw ConfigError("the " + what + " " + dir.substr(0, 80) + "... cannot be made: a name in it has " +
                        std::to_string(part.native().size()) + " bytes, over the 255 a file name may have; "
                        "give a shorter path (--out)");
  if (dir.size() + 32 > kPathMax)  // room for the run's own file names below it
    throw ConfigError("the " + what + " " + dir.substr(0, 80) + "... cannot be made: its path has " +
                      std::to_string(dir.size()) + " bytes, near the 4,096 a path may have; give a shorter path (--out)");
}

/// Refuses the nearest existing folder of a path to be made when nothing can be written in it.
void check_writable(const std::string& folder, const std::string& dir, const std::string& what) {
  std::string why;
  if (on_virtual_file_system(folder))
    why = folder + " is on a virtual file system of the kernel (proc, sysfs, cgroup)";
  else if (::access(folder.c_str(), W_OK | X_OK) != 0)
    why = folder + (errno == EROFS ? " is on a read-only file system" : " is a folder you may not write (" +
                                                                           std::string(std::strerror(errno)) + ")");
  if (!why.empty())
    throw ConfigError("the " + what + " " + dir + " cannot be made: " + why + "; give a folder you may write (--out)");
}

}  // namespace

void check_folder_path(const std::string& dir, const std::string& what) {
  namespace fs = std::filesystem;
  check_name_lengths(dir, what);
  std::error_code ec;
  for (fs::path p = fs::path(dir).lexically_normal(); !p.empty(); p = p.parent_path()) {
    const fs::file_status link = fs::symlink_status(p, ec);
    if (!fs::exists(link)) {
      if (p == p.parent_path()) return;
      continue;  // missing: created later, look at the folder above
    }
    const fs::file_status target = fs::status(p, ec);
    const bool loop = ec == std::errc::too_many_symbolic_link_levels;  // before read_symlink resets ec
    if (fs::is_symlink(link) && !fs::exists(target))
      throw ConfigError("the " + what + " " + dir + " cannot be made: " + p.string() + " is a symbolic link to " +
                        fs::read_symlink(p, ec).string() + (loop ? ", a loop of links" : ", which does not exist") +
                        "; remove the link or give another path (--out)");
    if (!fs::is_directory(target)) {
      const std::string kind = non_regular_kind(p.string(), true);  // "a character device" for /dev/null
      throw ConfigError("the " + what + " " + dir + " cannot be made: " + p.string() + " is " +
                        (kind.empty() ? "a file" : kind) + ", not a folder; give the path of a folder (--out)");
    }
    // The nearest existing folder: the rest is created below it, or the folder itself is written.
    check_writable(p.string(), dir, what);
    return;
  }
  check_writable(".", dir, what);  // a relative path none of whose parts exists yet
}

void check_output_file(const std::string& path, const std::string& option) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw ConfigError(option + " " + path + ": is a folder; name the file to write");
  const fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) return;
  if (!fs::exists(parent, ec))
    throw ConfigError(option + " " + path + ": the folder " + parent.string() +
                      " does not exist; create it first or write elsewhere");
  if (!fs::is_directory(parent, ec))
    throw ConfigError(option + " " + path + ": " + parent.string() + " is a file, not a folder; give a path in a folder");
}

namespace {
/// Opens the lock file `path` with `flags`, never through a symbolic link and never blocking (a
/// FIFO would block the open for good, past any SIGTERM): -1 (errno set) when it cannot be opened.
/// Throws ConfigError naming it when it is a link, FIFO, device, socket or folder: the pid would be
/// written into whatever it leads to.
int open_lock_file(const std::string& path, int flags) {
  refuse_non_regular(path, "transnormer");
  const int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == ELOOP) refuse_non_regular(path, "transnormer");  // made a link in between
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    refuse_non_regular(path, "transnormer");  // made something else in between
    throw ConfigError(path + " is not a regular file; move it away, or choose another folder (--out)");
  }
  return fd;
}
}  // namespace

void DirLock::check_free(const std::string& dir, const std::string& what) {
  check_folder_path(dir, what);
  const std::string path = (std::filesystem::path(dir) / kLockFile).string();
  const int fd = open_lock_file(path, O_RDONLY);
  if (fd < 0) return;  // never claimed (or unreadable: acquire says why)
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  const std::string pid = holder_pid(fd);
  ::close(fd);
  if (held && pid != std::to_string(::getpid())) throw in_use(what, dir, pid);
}

bool DirLock::busy(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / kLockFile).string();
  const int fd = open_lock_file(path, O_RDONLY);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  const std::string pid = held ? holder_pid(fd) : "";
  ::close(fd);
  return held && pid != std::to_string(::getpid());
}

DirLock DirLock::acquire(const std::string& dir, const std::string& what) {
  check_folder_path(dir, what);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    // A path no folder can be made at is bad input; a full disk or an I/O error a runtime failure.
    const std::string why = "cannot create the " + what + " " + dir + ": " + ec.message();
    const int e = ec.value();
    if (e == EACCES || e == EPERM || e == EROFS || e == ENAMETOOLONG || e == ENOENT || e == ENOTDIR || e == ELOOP ||
        e == EEXIST)
      throw ConfigError(why + "; give a folder you may write (--out)");
    throw IoError(why);
  }
  const std::string path = (std::filesystem::path(dir) / kLockFile).string();
  const int fd = open_lock_file(path, O_RDWR | O_CREAT);
  if (fd < 0) throw IoError("cannot claim the " + what + " " + dir + ": " + path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string pid = holder_pid(fd);
    ::close(fd);
    if (err != EWOULDBLOCK)
      throw IoError("cannot claim the " + what + " " + dir + ": " + path + ": " + std::strerror(err));
    throw in_use(what, dir, pid);
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // The claim holds without the pid; only a refused process's message would lack it.
  }
  return DirLock(fd);
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

DirLock& DirLock::operator=(DirLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

}  // namespace tn
