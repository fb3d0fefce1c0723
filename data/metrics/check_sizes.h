#pragma once
// The size check every metric makes: one prediction per label.
#include <string>
#include <vector>

#include "core/error.h"

namespace tn {

/// Throws ShapeError "[what] N predictions but M labels" when the sizes differ.
template <class T>
void check_metric_sizes(const char* what, const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size())
    throw ShapeError(std::string("[") + what + "] " + std::to_string(a.size()) + " predictions but " +
                     std::to_string(b.size()) + " labels");
}

}  // namespace tn
