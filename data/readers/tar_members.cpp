#include "data/readers/tar_members.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <memory>
#include <string>

#include "core/error.h"

namespace tn {

namespace {
struct ArchiveFree {
  void operator()(archive* a) const { archive_read_free(a); }
};

/// The data of the current member, read in pieces as libarchive hands them over: memory follows the
/// bytes that arrive, not the size the header claims. Throws `fail`'s error when the archive ends
/// first.
template <class Fail>
std::string read_member(archive* a, const std::string& name, uint64_t claimed, const Fail& fail) {
  std::string bytes;
  bytes.reserve(static_cast<size_t>(std::min<uint64_t>(claimed, uint64_t{1} << 20)));
  char piece[1 << 16];
  for (;;) {
    const la_ssize_t n = archive_read_data(a, piece, sizeof piece);
    if (n < 0) throw fail("cannot read " + name);
    if (n == 0) break;
    bytes.append(piece, static_cast<size_t>(n));
  }
  if (bytes.size() != claimed)
    throw fail("cannot read " + name + ": " + std::to_string(bytes.size()) + " of the " + std::to_string(claimed) +
               " bytes its header claims");
  return bytes;
}

}  // namespace

void read_tar_members(const std::string& path, const std::function<bool(const std::string& name)>& want,
                      const std::function<void(const std::string& name, std::string bytes)>& member,
                      const std::string& hint, uint64_t max_member_bytes) {
  std::unique_ptr<archive, ArchiveFree> a(archive_read_new());
  archive_read_support_filter_all(a.get());
  archive_read_support_format_tar(a.get());
  archive_read_support_format_gnutar(a.get());
  const auto fail = [&](const std::string& what) {
    const char* message = archive_error_string(a.get());
    return DataError(path + ": " + what + " (" + (message ? message : "") +
                     "); the archive is truncated or corrupt: fetch it again (" + hint + ")");
  };
  if (archive_read_open_filename(a.get(), path.c_str(), 1 << 16) != ARCHIVE_OK) throw fail("cannot open the archive");
  archive_entry* entry = nullptr;
  int r = 0;
  while ((r = archive_read_next_header(a.get(), &entry)) == ARCHIVE_OK) {
    const std::string name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    if (archive_entry_filetype(entry) != AE_IFREG || !want(name)) {
      if (archive_read_data_skip(a.get()) != ARCHIVE_OK) throw fail("cannot skip an entry");
      continue;
    }
    // Checked before any of it is read: a 93-byte archive may claim a member of 3 GB.
    const uint64_t claimed = static_cast<uint64_t>(std::max<la_int64_t>(0, archive_entry_size(entry)));
    if (claimed > max_member_bytes)
      throw DataError(path + ": its member " + name + " claims " + std::to_string(claimed) + " bytes, more than the " +
                      std::to_string(max_member_bytes) + " such a file can hold; the archive is corrupt or not the "
                      "data set's: fetch it again (" + hint + ")");
    member(name, read_member(a.get(), name, claimed, fail));
  }
  if (r != ARCHIVE_EOF) throw fail("stopped reading");
}

}  // namespace tn
