#include "layers/inputs/input_table.h"

#include "core/error.h"

namespace tn {

const std::vector<InputEntry>& input_table() {
  static const std::vector<InputEntry> table = {token_input_entry(), linear_input_entry()};
  return table;
}

const InputEntry& input_entry(InputKind kind) {
  for (const InputEntry& e : input_table())
    if (e.kind == kind) return e;
  throw ShapeError("[input_table] an input kind without an entry");
}

}  // namespace tn
