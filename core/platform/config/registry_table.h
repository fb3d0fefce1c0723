#pragma once
// The one rule of the project's registries (readers, tasks, token mixers, input kinds): an entry
// added after the built-in ones has a name of its own and, where entries carry a kind, the next
// free kind from a given first value, so that an added entry never collides with a built-in one.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace tn {

/// Appends `entry` to `table` after checking that no entry has its name (`Entry::name`, a
/// string_view). Throws std::invalid_argument "<op>: <what> named "<name>" exists already", `what`
/// with its article ("a reader").
template <class Entry>
void append_named(std::vector<Entry>& table, Entry entry, const char* op, const char* what) {
  for (const Entry& e : table)
    if (e.name == entry.name)
      throw std::invalid_argument(std::string(op) + ": " + what + " named \"" + std::string(entry.name) +
                                  "\" exists already");
  table.push_back(std::move(entry));
}

/// The kind for an entry added to `table`: one past the largest kind in it, and at least `first`
/// (the first value kept for added entries, above every built-in kind).
template <class Kind, class Entry>
Kind next_added_kind(const std::vector<Entry>& table, int first) {
  int next = first;
  for (const Entry& e : table) next = std::max(next, static_cast<int>(e.kind) + 1);
  return static_cast<Kind>(next);
}

}  // namespace tn
