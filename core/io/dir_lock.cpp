#include "core/io/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "core/error.h"

namespace tn {

DirLock DirLock::acquire(const std::string& dir, const std::string& what) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError("cannot create the " + what + " " + dir + ": " + ec.message());
  const std::string path = (std::filesystem::path(dir) / kLockFile).string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError("cannot claim the " + what + " " + dir + ": " + path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    if (err != EWOULDBLOCK)
      throw IoError("cannot claim the " + what + " " + dir + ": " + path + ": " + std::strerror(err));
    const std::string holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
    throw ConfigError("the " + what + " " + dir + " is in use by another transnormer process" +
                      (holder.find_first_not_of("0123456789") == std::string::npos && !holder.empty()
                           ? " (pid " + holder + ")"
                           : "") +
                      ": two writers would mix their files; wait for it to end, stop it, or choose another "
                      "folder (--out)");
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
