#include "layers/inputs/input_table.h"
#include "core/platform/config/registry_table.h"

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
  entry.kind = next_added_kind<InputKind>(input_table(), kFirstAddedInputKind);
  const InputKind kind = entry.kind;
  append_named(table_of_inputs(), std::move(entry), "add_input", "an input kind");
  return kind;
}

const InputEntry& input_entry(InputKind kind) {
  for (const InputEntry& e : input_table())
    if (e.kind == kind) return e;
  throw ShapeError("[input_table] an input kind without an entry");
}

}  // namespace tn
