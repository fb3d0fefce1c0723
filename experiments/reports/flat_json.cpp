#include "experiments/reports/flat_json.h"

#include <cmath>
#include <cstdlib>

namespace tn {

namespace {
void flatten_into(const nlohmann::json& value, const std::string& prefix,
                  std::vector<std::pair<std::string, nlohmann::json>>& out) {
  if (value.is_object()) {
    for (const auto& item : value.items())
      flatten_into(item.value(), prefix.empty() ? item.key() : prefix + "." + item.key(), out);
  } else if (!prefix.empty()) {
    out.emplace_back(prefix, value);
  }
}
}  // namespace

std::vector<std::pair<std::string, nlohmann::json>> flatten_json(const nlohmann::json& value,
                                                                 const std::string& prefix) {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  flatten_into(value, prefix, out);
  return out;
}

std::string leaf_text(const nlohmann::json& leaf) {
  if (leaf.is_string()) return leaf.get<std::string>();
  return leaf.dump();
}

bool parse_number(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return false;
  out = v;
  return true;
}

}  // namespace tn
