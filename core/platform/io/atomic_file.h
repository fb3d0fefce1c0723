#pragma once
// Atomic file writes: the bytes go to an unnamed file in the destination's folder (O_TMPFILE),
// synced, named "<path>.tmp.<host>.<pid>" and renamed over <path>, so a crash never leaves a
// half-written checkpoint or metrics file. A process killed in the instant between naming and
// renaming leaves its temporary; the next write of <path> on that machine removes it.
// File systems without unnamed files get a named temporary from the start. A symlink is written
// through (its target replaced, the link kept); a device, FIFO or socket is written into in place.
// The rename never unlinks anything but a regular file: one that finds a device, FIFO, link or
// folder put at the path meanwhile gives it back (renameat2 RENAME_EXCHANGE) and fails.
// write_own_file is the writer of the folders a command owns: it refuses a non-regular target.
#include <cstdint>
#include <string>
#include <string_view>

namespace tn {

/// Writes `bytes` to `path` atomically (a failed write leaves no temporary file behind, and a
/// successful one removes the temporaries of <path> that killed writers of this machine left). A symlink
/// at `path` keeps pointing where it did and its target gets the bytes; an existing non-regular
/// file (/dev/null, /dev/stdout, a FIFO) is written into, not replaced. Throws DataError naming the
/// path when it is a directory (the path a user gave is wrong: exit 2), IoError on any I/O failure
/// (cannot create, write, sync or rename).
void write_file_atomic(const std::string& path, std::string_view bytes);

/// Writes `bytes` to `path` atomically as a file of a folder this program owns (a run folder, a
/// report, a sweep folder, a generated data set): what is at `path` must be a regular file or
/// nothing. A symbolic link, FIFO, device, socket or folder there is refused (ConfigError naming it,
/// what it is and the fix; `owner` names the writer in it, as refuse_non_regular does), never
/// written through, into or over. IoError as write_file_atomic.
void write_own_file(const std::string& path, std::string_view bytes, const std::string& owner = "transnormer");

/// Reads a whole file (or a pipe, FIFO or terminal until its end) of at most default_read_limit()
/// bytes. Throws DataError naming the path when it is missing, unreadable, a directory, a device
/// that never ends (/dev/zero), or larger than the limit.
std::string read_file(const std::string& path);

/// As read_file, for a kind of file with a bound of its own: more than `max_bytes` is refused
/// (DataError naming the path, its size, the bound and `what`, e.g. "a PNG image"), a regular file
/// before anything is read or allocated, a pipe once that much has arrived.
std::string read_file(const std::string& path, uint64_t max_bytes, const std::string& what);

/// The bound of a file read whole with no bound of its own: half the memory this process may use
/// (core/platform/system.h memory_limit; the bytes are parsed into more), or no bound when that is unknown.
uint64_t default_read_limit();

}  // namespace tn
