#include "core/platform/io/own_files.h"

#include <sys/stat.h>

#include "core/error.h"

namespace tn {

namespace {

std::string kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a folder";
  return "not a regular file";
}

}  // namespace

std::string non_regular_kind(const std::string& path, bool follow_links) {
  struct stat st {};
  if ((follow_links ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0) return "";
  return kind_of(st.st_mode);
}

void refuse_non_regular(const std::string& path, const std::string& owner) {
  const std::string kind = non_regular_kind(path);
  if (kind.empty()) return;
  throw ConfigError(path + " is " + kind + ", not a file " + owner + " writes: " + owner +
                    " writes only its own regular files (never through a link, into a FIFO or device, or over a "
                    "folder); move it away, or choose another folder (--out)");
}

void refuse_non_directory(const std::string& path, const std::string& owner) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return;
  const std::string kind = S_ISREG(st.st_mode) ? "a file" : kind_of(st.st_mode);
  throw ConfigError(path + " is " + kind + ", not a folder " + owner + " writes: " + owner +
                    " writes and deletes only in its own folders (never through a link); move it away, or choose "
                    "another folder (--out)");
}

}  // namespace tn
