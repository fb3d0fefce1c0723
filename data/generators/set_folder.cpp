#include "data/generators/set_folder.h"

#include <algorithm>
#include <filesystem>
#include <string_view>

#include "core/error.h"
#include "core/platform/io/dir_lock.h"

namespace tn {

namespace fs = std::filesystem;

void check_set_path(const std::string& dir) {
  if (dir.empty()) throw ConfigError("--out is empty; name a folder (it is created when missing)");
  check_folder_path(dir, "data set folder");
  // The new set is staged beside the folder, then swapped in: its parent must take a folder too.
  const fs::path parent = fs::absolute(fs::path(dir)).lexically_normal().parent_path();
  if (!parent.empty()) check_folder_path(parent.string(), "folder beside which the data set is staged,");
}

void check_set_folder(const std::string& dir, const std::vector<std::string>& names, bool overwrite,
                      const std::string& what) {
  std::error_code ec;
  check_set_path(dir);
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw ConfigError("--out " + dir + ": exists and is not a folder; pass a folder (it is created when missing)");
  for (fs::path up = fs::path(dir).parent_path(); !up.empty() && up != up.parent_path(); up = up.parent_path())
    if (fs::exists(up, ec) && !fs::is_directory(up, ec))
      throw ConfigError("--out " + dir + ": " + up.string() + " is a file, not a folder; pass another --out");
  if (!fs::exists(dir, ec)) return;
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string(), file = entry.path().string();
    const bool ours = std::find(names.begin(), names.end(), name) != names.end();
    const bool partial = !ours && name.size() > 8 && name.ends_with(".partial") &&
                         std::find(names.begin(), names.end(), name.substr(0, name.size() - 8)) != names.end();
    if (!ours && !partial)
      throw ConfigError("--out " + dir + ": holds " + name + ", which is not " +
                        (!what.empty() && std::string_view("AEIOUaeiou").find(what.front()) != std::string_view::npos ? "an " : "a ") +
                        what + " file; the set replaces " +
                        "the whole folder (" + list + " only): move it away, or pass an empty or new --out");
    const fs::file_status status = entry.symlink_status(ec);
    if (fs::is_directory(status))
      throw ConfigError("--out " + dir + ": " + file + " is a folder; remove it, or pass another --out");
    if (!fs::is_regular_file(status))
      throw ConfigError("--out " + dir + ": " + file + " is not a regular file (a link, FIFO or device); a set " +
                        "replaces only its own files: move it away, or pass another --out");
    if (!overwrite && ours)
      throw ConfigError("--out " + dir + ": " + file + " already exists; pass --overwrite to replace the " + what +
                        " files there, or another --out");
  }
}

}  // namespace tn
