#include "core/platform/io/staged_folder.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace tn {

namespace fs = std::filesystem;

namespace {

/// This machine's name, as the leftovers carry it (another machine's pids mean nothing here).
std::string host_name() {
  char buf[256] = {};
  return ::gethostname(buf, sizeof buf - 1) == 0 && buf[0] ? std::string(buf) : std::string("localhost");
}

/// "<parent>/.<name>.<tag>.<host>.<pid>": a working folder of process `pid` beside `target`.
fs::path beside(const fs::path& target, const std::string& tag, pid_t pid) {
  return target.parent_path() /
         ("." + target.filename().string() + "." + tag + "." + host_name() + "." + std::to_string(pid));
}

/// The folder `dir` names: the one its link leads to when it is a link to a folder, else dir made
/// absolute, without a trailing slash.
fs::path folder_replaced(const std::string& dir) {
  std::error_code ec;
  fs::path p = fs::absolute(fs::path(dir), ec).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  if (fs::is_symlink(fs::symlink_status(p, ec)) && fs::is_directory(p, ec)) p = fs::canonical(p, ec);
  return p;
}

/// Whether `pid` no longer runs on this machine.
bool dead(const std::string& pid) {
  if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) return false;
  return ::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH;
}

/// Removes what killed writers of `target` on this machine left beside it: a staging folder (a set
/// half written, or the old set after the exchange) is deleted; an old folder moved aside (the
/// fallback without RENAME_EXCHANGE) is put back when the target is missing, else deleted. Only
/// real folders with those exact names go.
void remove_leftovers(const fs::path& target) {
  std::error_code ec;
  const std::string host = host_name();
  for (const std::string tag : {"staging", "previous"}) {
    const std::string prefix = "." + target.filename().string() + "." + tag + "." + host + ".";
    for (fs::directory_iterator it(target.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.compare(0, prefix.size(), prefix) != 0 || !dead(name.substr(prefix.size()))) continue;
      std::error_code type;
      if (!fs::is_directory(it->symlink_status(type))) continue;
      std::error_code gone;
      if (tag == "previous" && !fs::exists(fs::symlink_status(target, gone)))
        fs::rename(it->path(), target, gone);
      else
        fs::remove_all(it->path(), gone);
    }
  }
}

/// Syncs the folder `dir` itself (its entries), so a rename in it survives a power loss.
void sync_folder(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

bool flag_unsupported(int err) { return err == EINVAL || err == ENOSYS || err == EOPNOTSUPP; }

}  // namespace

StagedFolder::StagedFolder(const std::string& dir) {
  const fs::path target = folder_replaced(dir);
  target_ = target.string();
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) throw IoError(target.parent_path().string() + ": cannot create the folder (" + ec.message() + ")");
  remove_leftovers(target);
  const fs::path staging = beside(target, "staging", ::getpid());
  staging_ = staging.string();
  fs::remove_all(staging, ec);  // an earlier one of this very process
  if (!fs::create_directory(staging, ec) || ec)
    throw IoError(staging_ + ": cannot create the staging folder beside " + target_ + " (" +
                  (ec ? ec.message() : std::string("it exists")) + "; its parent folder must be writable)");
}

StagedFolder::~StagedFolder() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);
}

void StagedFolder::commit() {
  const fs::path target(target_), staging(staging_);
  std::error_code ec;
  const fs::file_status there = fs::symlink_status(target, ec);
  if (fs::exists(there) && !fs::is_directory(there))
    throw IoError(target_ + ": cannot put the new folder in place: it is not a folder any more");
  int err = 0;
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) == 0) {
    committed_ = true;  // there was no folder: nothing old to delete
    sync_folder(target.parent_path());
    return;
  }
  err = errno;
  if (err == EEXIST || err == ENOTEMPTY || flag_unsupported(err)) {
    if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
      committed_ = true;
      sync_folder(target.parent_path());
      fs::remove_all(staging, ec);  // the old contents, now under the staging name
      return;
    }
    err = errno;
  }
  if (!flag_unsupported(err))
    throw IoError(target_ + ": cannot put the new folder in place (" + std::strerror(err) + ")");
  // No RENAME_EXCHANGE here (NFS): the old folder aside, then the new one in its place; a kill
  // between the two leaves the old one aside, which the next writer of the folder puts back.
  const fs::path aside = beside(target, "previous", ::getpid());
  const bool had_old = fs::exists(fs::symlink_status(target, ec));
  if (had_old && std::rename(target.c_str(), aside.c_str()) != 0)
    throw IoError(target_ + ": cannot move the old folder aside (" + std::strerror(errno) + ")");
  if (std::rename(staging.c_str(), target.c_str()) != 0) {
    err = errno;
    if (had_old) std::rename(aside.c_str(), target.c_str());
    throw IoError(target_ + ": cannot put the new folder in place (" + std::strerror(err) + ")");
  }
  committed_ = true;
  sync_folder(target.parent_path());
  if (had_old) fs::remove_all(aside, ec);
}

}  // namespace tn
