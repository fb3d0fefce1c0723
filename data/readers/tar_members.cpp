#include "data/readers/tar_members.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <memory>

#include "core/error.h"

namespace tn {

namespace {
struct ArchiveFree {
  void operator()(archive* a) const { archive_read_free(a); }
};
}  // namespace

void read_tar_members(const std::string& path, const std::function<bool(const std::string& name)>& want,
                      const std::function<void(const std::string& name, std::string bytes)>& member,
                      const std::string& hint) {
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
  std::string bytes;
  while ((r = archive_read_next_header(a.get(), &entry)) == ARCHIVE_OK) {
    const std::string name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    if (archive_entry_filetype(entry) != AE_IFREG || !want(name)) {
      if (archive_read_data_skip(a.get()) != ARCHIVE_OK) throw fail("cannot skip an entry");
      continue;
    }
    bytes.resize(static_cast<size_t>(std::max<la_int64_t>(0, archive_entry_size(entry))));
    const la_ssize_t n = archive_read_data(a.get(), bytes.data(), bytes.size());
    if (n < 0 || static_cast<size_t>(n) != bytes.size()) throw fail("cannot read " + name);
    member(name, std::move(bytes));
    bytes.clear();
  }
  if (r != ARCHIVE_EOF) throw fail("stopped reading");
}

}  // namespace tn
