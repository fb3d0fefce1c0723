#include "core/platform/io/atomic_file.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <limits>

#include "core/error.h"
#include "core/platform/io/own_files.h"
#include "core/platform/system.h"

namespace tn {

namespace fs = std::filesystem;

namespace {

/// The file the bytes of `path` belong in: a symlink's final target (the link itself stays), else
/// path. Throws IoError for a loop of links.
std::string destination(const std::string& path) {
  fs::path p(path);
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p.string();
    if (hops == 40) throw IoError("cannot write " + path + ": too many levels of symbolic links");
    std::error_code ec;
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) throw IoError("cannot write " + path + ": " + ec.message());
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
}

/// Writes all of `bytes` to fd and syncs it; false (errno set) on failure.
bool write_all(int fd, std::string_view bytes, bool sync) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return !sync || ::fsync(fd) == 0 || errno == EINVAL;  // EINVAL: a device or FIFO, nothing to sync
}

[[noreturn]] void write_failed(const std::string& path, int err) {
  throw IoError("cannot write " + path + ": " + std::strerror(err) +
                (err == ENOSPC || err == EFBIG || err == EDQUOT ? " (disk full?)"
                                                                : " (check that the directory exists and is writable)"));
}

/// An existing file that is not a regular file (a device such as /dev/null, a FIFO, a socket)
/// gets the bytes written into it: replacing it would destroy it.
void write_in_place(const std::string& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) write_failed(path, errno);
  const bool ok = write_all(fd, bytes, false);
  const int err = errno;
  ::close(fd);
  if (!ok) write_failed(path, err);
}

/// This machine's name, as the temporaries carry it (another machine's pids mean nothing here).
const std::string& host_name() {
  static const std::string name = [] {
    char buf[256] = {};
    return ::gethostname(buf, sizeof buf - 1) == 0 && buf[0] ? std::string(buf) : std::string("localhost");
  }();
  return name;
}

/// "<dest>.tmp.<host>.<pid>": the temporary of this process.
std::string temp_name(const std::string& dest) {
  return dest + ".tmp." + host_name() + "." + std::to_string(::getpid());
}

/// Removes the temporaries of dest left by processes of this machine that were killed between
/// naming their file and renaming it: those whose pid no longer runs. A running writer's
/// temporary, another machine's, and anything not a regular file are kept.
void remove_stale_temps(const std::string& dest) {
  const fs::path d(dest);
  const std::string prefix = d.filename().string() + ".tmp." + host_name() + ".";
  std::error_code ec;
  fs::directory_iterator it(d.parent_path().empty() ? fs::path(".") : d.parent_path(), ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string pid = name.substr(prefix.size());
    if (pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code type_ec;  // a temporary is a regular file: a folder or link of that name stays
    if (!it->is_regular_file(type_ec) || it->is_symlink(type_ec)) continue;
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH) {
      std::error_code gone;
      fs::remove(it->path(), gone);
    }
  }
}

[[noreturn]] void replace_failed(const std::string& tmp, const std::string& dest, int err) {
  std::remove(tmp.c_str());
  throw IoError("cannot replace " + dest + ": " + std::strerror(err) +
                (err == EISDIR || err == ENOTEMPTY ? " (a directory is in the way)" : ""));
}

/// Whether a renameat2 failure says the file system or kernel lacks the flag asked for.
bool flag_unsupported(int err) { return err == EINVAL || err == ENOSYS || err == EOPNOTSUPP; }

/// Renames `tmp` over `dest` in one step without ever unlinking anything but a regular file: when
/// dest is missing, a rename that replaces nothing (RENAME_NOREPLACE); when it is there, the two are
/// exchanged (RENAME_EXCHANGE) and what came back under tmp's name is removed only if it is a
/// regular file. A device, FIFO, socket, link or folder found at dest (there since the caller
/// looked, or put there meanwhile) is exchanged back and left as it was: IoError naming it. A file
/// system without those flags gets a plain rename. tmp is removed on failure.
void replace(const std::string& tmp, const std::string& dest) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dest.c_str(), RENAME_NOREPLACE) == 0) return;
    int err = errno;
    if (err == EEXIST) {
      if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dest.c_str(), RENAME_EXCHANGE) == 0) {
        const std::string kind = non_regular_kind(tmp);  // what dest was
        if (kind.empty()) {
          ::unlink(tmp.c_str());
          return;
        }
        ::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dest.c_str(), RENAME_EXCHANGE);  // give it back
        std::remove(tmp.c_str());
        throw IoError("cannot replace " + dest + ": it is " + kind + ", not a regular file; it was left as it " +
                      "was" + (kind == "a folder" ? " (a directory is in the way)" : ""));
      }
      err = errno;
      if (err == ENOENT) continue;  // dest went away in between: rename again
    }
    if (!flag_unsupported(err)) replace_failed(tmp, dest, err);
    if (std::rename(tmp.c_str(), dest.c_str()) != 0) replace_failed(tmp, dest, errno);
    return;
  }
  replace_failed(tmp, dest, EBUSY);
}

/// The bytes in an unnamed file of dest's folder (O_TMPFILE), given a name only once complete and
/// renamed over dest at once: a process killed while writing leaves nothing behind. False when the
/// file system has no unnamed files (then the caller writes a named temporary).
bool write_unnamed(const std::string& dest, std::string_view bytes) {
  const fs::path dir = fs::path(dest).parent_path();
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0) {
    if (errno == EISDIR || errno == EOPNOTSUPP || errno == EINVAL) return false;
    write_failed(dest, errno);
  }
  const bool ok = write_all(fd, bytes, true);
  int err = errno;
  const std::string tmp = temp_name(dest);
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  std::remove(tmp.c_str());  // a leftover of an earlier process with this pid
  const bool linked = ok && ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, tmp.c_str(), AT_SYMLINK_FOLLOW) == 0;
  if (ok && !linked) err = errno;
  ::close(fd);
  if (!linked) {
    if (ok && (err == ENOENT || err == EXDEV)) return false;  // no /proc here: use a named file
    write_failed(dest, err);
  }
  replace(tmp, dest);
  return true;
}

/// The bytes in "<dest>.tmp.<host>.<pid>", then renamed over dest.
void write_named(const std::string& dest, std::string_view bytes) {
  const std::string tmp = temp_name(dest);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) write_failed(dest, errno);
  const bool ok = write_all(fd, bytes, true);
  const int err = errno;
  ::close(fd);
  if (!ok) {
    std::remove(tmp.c_str());
    write_failed(dest, err);
  }
  replace(tmp, dest);
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view bytes) {
  struct stat st {};
  // A device, FIFO or socket reached through links, /proc's among them (/dev/stdout into a pipe
  // ends at "pipe:[N]", which is no path): written through the path the kernel resolves.
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
    return write_in_place(path, bytes);
  const std::string dest = destination(path);
  if (::stat(dest.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw DataError("cannot write " + path + ": it is a directory; give the path of a file");
    if (!S_ISREG(st.st_mode)) return write_in_place(dest, bytes);
  }
  if (!write_unnamed(dest, bytes)) write_named(dest, bytes);
  remove_stale_temps(dest);
}

void write_own_file(const std::string& path, std::string_view bytes, const std::string& owner) {
  refuse_non_regular(path, owner);
  if (!write_unnamed(path, bytes)) write_named(path, bytes);
  remove_stale_temps(path);
}

namespace {

/// The DataError of a file over its limit: its size (or "more than"), the limit and what it is.
DataError too_large_to_read(const std::string& path, uint64_t size, bool at_least, uint64_t max_bytes,
                            const std::string& what) {
  return DataError("cannot read " + path + ": it holds " + (at_least ? "more than " : "") + std::to_string(size) +
                   " bytes, over the limit of " + std::to_string(max_bytes) + " bytes for " + what +
                   "; check that it is the file you mean");
}

}  // namespace

uint64_t default_read_limit() {
  static const uint64_t limit = [] {
    const double bytes = memory_limit().bytes;
    return bytes > 0 ? static_cast<uint64_t>(bytes / 2) : std::numeric_limits<uint64_t>::max();
  }();
  return limit;
}

std::string read_file(const std::string& path) {
  return read_file(path, default_read_limit(), "a file read whole (half the memory this process may use)");
}

namespace {

/// How long a FIFO is waited for when no process writes into it yet.
constexpr int kFifoWaitSeconds = 10;

/// Waits until the FIFO `fd` (opened non-blocking) has bytes or its writer has closed it: a note
/// after a second, DataError after kFifoWaitSeconds with none (a named FIFO whose writer was never
/// started would otherwise block for good). Then makes `fd` blocking for the reads.
void await_fifo_writer(int fd, const std::string& path) {
  pollfd p{fd, POLLIN, 0};
  for (int waited_ms = 0;;) {
    const int ready = ::poll(&p, 1, 1000);
    if (ready > 0) break;
    if (ready < 0 && errno != EINTR) throw DataError("error while reading " + path + ": " + std::strerror(errno));
    if (ready == 0 && (waited_ms += 1000) == 1000)
      std::fprintf(stderr, "%s: a FIFO that nothing writes into yet: waiting up to %d s for its writer\n", path.c_str(),
                   kFifoWaitSeconds);
    if (waited_ms >= kFifoWaitSeconds * 1000)
      throw DataError("cannot read " + path + ": a FIFO that nothing wrote into within " +
                      std::to_string(kFifoWaitSeconds) + " s; start its writer first (e.g. `cat spec.yaml > " + path +
                      " &`), or give the file itself");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
}

/// Opens `path` for reading; a FIFO (named, or a pipe such as /dev/fd/63 of `<(...)`) without
/// blocking on its open, then waited for (await_fifo_writer). DataError when it cannot be opened.
int open_for_reading(const std::string& path) {
  struct stat st {};
  const bool fifo = ::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (fifo ? O_NONBLOCK : 0));
  if (fd < 0)
    throw DataError("cannot read " + path + ": " + std::strerror(errno) +
                    (errno == EACCES ? " (check the file's permissions)" : ""));
  if (fifo) {
    try {
      await_fifo_writer(fd, path);
    } catch (...) {
      ::close(fd);
      throw;
    }
  }
  return fd;
}

}  // namespace

std::string read_file(const std::string& path, uint64_t max_bytes, const std::string& what) {
  const int fd = open_for_reading(path);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw DataError("cannot read " + path + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw DataError("cannot read " + path + ": it is a directory; give the path of a file");
  // A device such as /dev/zero or /dev/urandom never ends: reading it would fill the memory.
  // A terminal, a pipe or a FIFO (/dev/stdin) ends when its writer is done, so it is read.
  if ((S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) && !::isatty(fd))
    throw DataError("cannot read " + path + ": it is a device, not a file; give the path of a file");
  // Checked before anything is allocated; a pipe, which has no size, is cut off once past the limit.
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > max_bytes)
    throw too_large_to_read(path, static_cast<uint64_t>(st.st_size), false, max_bytes, what);
  std::string bytes;
  if (S_ISREG(st.st_mode)) bytes.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw DataError("error while reading " + path + ": " + std::strerror(errno));
    }
    if (bytes.size() + static_cast<size_t>(n) > max_bytes) throw too_large_to_read(path, max_bytes, true, max_bytes, what);
    bytes.append(buf, static_cast<size_t>(n));
  }
  return bytes;
}

}  // namespace tn
