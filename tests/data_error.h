#pragma once
// The message of a DataError a reader throws, for tests that check what it names.
#include <string>

#include "core/error.h"

namespace tn::test {

/// The DataError message of `f`, or "" when it does not throw one.
template <class F>
std::string data_error(F&& f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

}  // namespace tn::test
