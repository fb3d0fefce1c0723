#pragma once
// Reading chosen files out of a tar archive as published (any compression libarchive knows: gzip,
// xz, bzip2, none), without unpacking it: the imdb and cifar10 readers read their datasets so.
#include <cstdint>
#include <functional>
#include <string>

namespace tn {

/// Calls `member(name, bytes)` for each regular file of the archive at `path` whose member name
/// (as stored, e.g. "cifar-10-batches-bin/data_batch_1.bin") `want` accepts, in archive order;
/// the other members are skipped unread. A wanted member whose header claims more than
/// `max_member_bytes` (the largest file of its kind the reader takes) is refused before any of it
/// is read; the others are read in pieces as the data arrives, never allocated at the size their
/// header claims. Throws DataError naming `path` when the archive cannot be opened or read to its
/// end (truncated, corrupt, not an archive, a member shorter than its header says), with
/// libarchive's message, the advice to fetch it again and `hint` (where it comes from), or names
/// the member over the cap; whatever `member` throws passes through.
void read_tar_members(const std::string& path, const std::function<bool(const std::string& name)>& want,
                      const std::function<void(const std::string& name, std::string bytes)>& member,
                      const std::string& hint, uint64_t max_member_bytes);

}  // namespace tn
