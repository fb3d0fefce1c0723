#pragma once
// The folder of a generated data set made of a few named files (ListOps' three splits, AAN's): it
// is replaced whole (core/io/staged_folder.h), so it may hold only those files. The check runs
// before the generation, creating nothing.
#include <string>
#include <vector>

namespace tn {

/// Checks that `dir` can take a set made of the files `names` without destroying data: throws
/// ConfigError naming --out and the fix when `dir` is empty, a file or below one, or an existing
/// folder that holds anything but those files (or `<name>.partial`, what an earlier version of a
/// writer left when killed), one of them not a regular file (a folder, link, FIFO, device), or one
/// of them at all while `overwrite` is false. `what` names the set in messages ("ListOps").
void check_set_folder(const std::string& dir, const std::vector<std::string>& names, bool overwrite,
                      const std::string& what);

}  // namespace tn
