#pragma once
// A cooperative stop for long loops that are not training steps (a run's final evaluations): the
// caller installs a check for the scope of the work (CancelScope), and the loop calls
// throw_if_cancelled() between its batches, which throws Cancelled when the check says stop.
// With no scope installed throw_if_cancelled() does nothing. One scope at a time, on the thread
// that runs the loop (not inside OpenMP regions).
#include <exception>
#include <functional>

namespace tn {

/// Thrown by throw_if_cancelled(): the work was abandoned part-way; its results are incomplete.
struct Cancelled : std::exception {
  const char* what() const noexcept override { return "cancelled"; }
};

/// Installs `check` (true: stop now) until the scope ends, in place of any outer one (an empty
/// check: no stop in this scope); the outer one is back when the scope ends.
class CancelScope {
 public:
  explicit CancelScope(std::function<bool()> check);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  std::function<bool()> previous_;
};

/// Throws Cancelled when a CancelScope's check says stop.
void throw_if_cancelled();

}  // namespace tn
