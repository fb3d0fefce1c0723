#pragma once
// Nested JSON mappings as flat "a.b.c" keys, for `report`: a run's config.yaml compared key by
// key, and the scalar values of summary.json's "analysis".
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace tn {

/// The leaves of `value` under dotted keys ("model.attention.linear.normalize"), depth first in
/// the object's order. A list is one leaf (compared as a whole). A non-object `value` is one
/// leaf named `prefix` (nothing when prefix is empty).
std::vector<std::pair<std::string, nlohmann::json>> flatten_json(const nlohmann::json& value,
                                                                 const std::string& prefix = "");

/// A leaf as table text: strings without quotes, numbers and the rest as JSON ("[0.9,0.98]").
std::string leaf_text(const nlohmann::json& leaf);

/// `text` parsed as a whole as a finite number, or false.
bool parse_number(const std::string& text, double& out);

}  // namespace tn
