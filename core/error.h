#pragma once
// Typed errors. ConfigError and DataError are the user's to fix (exit code 2); anything else is a
// runtime failure (exit code 1), IoError included. Only app/main.cpp maps them to exit codes.
#include <stdexcept>
#include <string>

namespace tn {

/// A bad spec, option or argument: message names the file:line or key, and the fix.
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A missing, unreadable or malformed data/checkpoint file: message names the file and the fix.
struct DataError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A write that failed (disk full, no such directory, no permission, a failed rename): a runtime
/// failure, not bad input. Message names the file. Reading a missing or corrupt file is a
/// DataError.
struct IoError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An internal contract violation (shape mismatch between ops, unsupported case).
struct ShapeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace tn
