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
#include <string>
#include <string_view>

namespace tn {

/// Writes `bytes` to `path` atomically (a failed write leaves no temporary file behind, and a
/// successful one removes the temporaries of <path> that killed writers of this machine left). A symlink
/// at `path` keeps pointing where it did and its target gets the bytes; an existing non-regular
/// file (/dev/null, /dev/stdout, a FIFO) is written into, not replaced. Throws IoError naming the
/// path on any I/O failure (cannot create, write, sync or rename; a directory in the way).
void write_file_atomic(const std::string& path, std::string_view bytes);

/// Writes `bytes` to `path` atomically as a file of a folder this program owns (a run folder, a
/// report, a sweep folder, a generated data set): what is at `path` must be a regular file or
/// nothing. A symbolic link, FIFO, device, socket or folder there is refused (ConfigError naming it,
/// what it is and the fix; `owner` names the writer in it, as refuse_non_regular does), never
/// written through, into or over. IoError as write_file_atomic.
void write_own_file(const std::string& path, std::string_view bytes, const std::string& owner = "transnormer");

/// Reads a whole file (or a pipe, FIFO or terminal until its end). Throws DataError naming the path
/// when it is missing, unreadable, a directory, or a device that never ends (/dev/zero).
std::string read_file(const std::string& path);

}  // namespace tn
