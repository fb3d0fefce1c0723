#include "core/platform/cancel.h"

#include <utility>

namespace tn {

namespace {
std::function<bool()>& current_check() {
  static std::function<bool()> check;
  return check;
}
}  // namespace

CancelScope::CancelScope(std::function<bool()> check) : previous_(std::move(current_check())) {
  current_check() = std::move(check);
}

CancelScope::~CancelScope() { current_check() = std::move(previous_); }

void throw_if_cancelled() {
  if (const std::function<bool()>& check = current_check(); check && check()) throw Cancelled();
}

}  // namespace tn
