#pragma once
// Typed errors. ConfigError and DataError are the user's to fix (exit code 2); anything else is a
// runtime failure (exit code 1). Only app/main.cpp maps them to exit codes.
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

/// An internal contract violation (shape mismatch between ops, unsupported case).
struct ShapeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace tn
