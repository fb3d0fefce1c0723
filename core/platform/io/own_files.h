#pragma once
// Files a command owns. A run folder, a report folder, a sweep folder or a generated data set holds
// only regular files (and folders) that transnormer wrote; a symbolic link, FIFO, device or socket
// found there under one of its names is refused, not written through, into or over: a link would
// hand the write (or the deletion) to a file elsewhere, a FIFO would block the open forever, a
// device would take the bytes. Checked without following the last component of the path.
#include <string>

namespace tn {

/// What `path` is when it exists and is not a regular file: "a symbolic link", "a FIFO", "a
/// character device", "a block device", "a socket", "a folder"; "" when it is missing or a regular
/// file. The last component is not followed (lstat), unless `follow_links` (stat: what a reader
/// opening the path gets).
std::string non_regular_kind(const std::string& path, bool follow_links = false);

/// Throws ConfigError (exit 2) when `path` exists and is not a regular file, naming it, what it is
/// and the fix: "<path> is a symbolic link, not a file <owner> writes; ...". `owner` names the
/// folder's writer in the message ("a run", "the report").
void refuse_non_regular(const std::string& path, const std::string& owner);

/// Throws ConfigError (exit 2) when `path` exists and is not a real folder (a symbolic link, even
/// to a folder, or anything else): the folders a command writes into (predictions/, plots/) are
/// its own, so nothing is written or deleted through a link.
void refuse_non_directory(const std::string& path, const std::string& owner);

}  // namespace tn
