#pragma once
// The folder of a generated data set made of a few named files (ListOps' three splits, AAN's): it
// is replaced whole (core/platform/io/staged_folder.h), so it may hold only those files. The check runs
// before the generation, creating nothing.
#include <string>
#include <vector>

namespace tn {

/// Refuses (ConfigError, exit 2) an --out no data set folder can be made at, before any work: a
/// file or a link to nothing on the way, a loop of links, a name over 255 bytes, a folder that
/// cannot be written (permissions, read-only, proc or sysfs), for the folder and for its parent,
/// where the new set is staged (core/platform/io/dir_lock.h check_folder_path).
void check_set_path(const std::string& dir);

/// Checks that `dir` can take a set made of the files `names` without destroying data: throws
/// ConfigError naming --out and the fix when `dir` is empty, a file or below one, or an existing
/// folder that holds anything but those files (or `<name>.partial`, what an earlier version of a
/// writer left when killed), one of them not a regular file (a folder, link, FIFO, device), or one
/// of them at all while `overwrite` is false. `what` names the set in messages ("ListOps").
void check_set_folder(const std::string& dir, const std::vector<std::string>& names, bool overwrite,
                      const std::string& what);

}  // namespace tn
