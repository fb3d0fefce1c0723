#pragma once
// Reading chosen files out of a tar archive as published (any compression libarchive knows: gzip,
// xz, bzip2, none), without unpacking it: the imdb and cifar10 readers read their datasets so.
#include <functional>
#include <string>

namespace tn {

/// Calls `member(name, bytes)` for each regular file of the archive at `path` whose member name
/// (as stored, e.g. "cifar-10-batches-bin/data_batch_1.bin") `want` accepts, in archive order;
/// the other members are skipped unread. Throws DataError naming `path` when the archive cannot be
/// opened or read to its end (truncated, corrupt, not an archive), with libarchive's message, the
/// advice to fetch it again and `hint` (where it comes from); whatever `member` throws passes
/// through.
void read_tar_members(const std::string& path, const std::function<bool(const std::string& name)>& want,
                      const std::function<void(const std::string& name, std::string bytes)>& member,
                      const std::string& hint);

}  // namespace tn
