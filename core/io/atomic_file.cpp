#include "core/io/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace tn {

void write_file_atomic(const std::string& path, std::string_view bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    throw IoError("cannot write " + path + ": " + std::strerror(errno) +
                    " (check that the directory exists and is writable)");
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() &&
                  std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  const int err = errno;
  std::fclose(f);
  if (!ok) {
    std::remove(tmp.c_str());
    throw IoError("cannot write " + path + ": " + std::strerror(err) + " (disk full?)");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw IoError("cannot rename " + tmp + " to " + path + ": " + ec.message());
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw DataError("error while reading " + path);
  return buf.str();
}

}  // namespace tn
