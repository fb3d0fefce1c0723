#include "layers/inputs/input_table.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/error.h"

namespace tn {

namespace {
std::vector<InputEntry>& table_of_inputs() {
  static std::vector<InputEntry> table = {token_input_entry(), linear_input_entry()};
  return table;
}
}  // namespace

const std::vector<InputEntry>& input_table() { return table_of_inputs(); }

InputKind add_input(InputEntry entry) {
  int next = kFirstAddedInputKind;
  for (const InputEntry& e : input_table()) {
    if (e.name == entry.name)
      throw std::invalid_argument("add_input: an input kind named \"" + std::string(entry.name) + "\" exists already");
    next = std::max(next, static_cast<int>(e.kind) + 1);
  }
  entry.kind = static_cast<InputKind>(next);
  table_of_inputs().push_back(entry);
  return entry.kind;
}

const InputEntry& input_entry(InputKind kind) {
  for (const InputEntry& e : input_table())
    if (e.kind == kind) return e;
  throw ShapeError("[input_table] an input kind without an entry");
}

}  // namespace tn
