#include "experiments/reports/sweep_file.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/io/atomic_file.h"

namespace tn {

namespace {
using nlohmann::json;

struct Reader {
  std::string file;
  [[noreturn]] void fail(const std::string& what) const {
    throw DataError(file + ": " + what + " (expected the sweep.json that `transnormer sweep` writes)");
  }
  const json& need(const json& o, const std::string& key, const std::string& where) const {
    if (!o.is_object() || !o.contains(key)) fail("missing \"" + where + key + "\"");
    return o[key];
  }
  std::string text(const json& o, const std::string& key, const std::string& where, bool required) const {
    if (!o.contains(key) || o[key].is_null()) {
      if (required) fail("missing \"" + where + key + "\"");
      return "";
    }
    if (!o[key].is_string()) fail("\"" + where + key + "\" is not a string");
    return o[key].get<std::string>();
  }
};
}  // namespace

const std::vector<std::string>& sweep_states() {
  static const std::vector<std::string> states = {"pending", "running", "done", "failed", "diverged"};
  return states;
}

SweepFile read_sweep_file(const std::string& folder) {
  const Reader r{(std::filesystem::path(folder) / "sweep.json").string()};
  json root;
  try {
    root = json::parse(read_file(r.file));
  } catch (const json::parse_error& e) {
    r.fail(std::string("not valid JSON: ") + e.what());
  }
  if (!root.is_object()) r.fail("not a JSON object");
  SweepFile sweep;
  sweep.name = r.text(root, "name", "", true);
  sweep.sweep_file = r.text(root, "sweep_file", "", false);
  sweep.base = r.text(root, "base", "", false);
  if (root.contains("set") && !root["set"].is_null()) {
    if (!root["set"].is_object()) r.fail("\"set\" is not a mapping");
    sweep.set = root["set"];
  }
  const json& axes = r.need(root, "axes", "");
  if (!axes.is_array()) r.fail("\"axes\" is not a list");
  for (const json& a : axes) {
    if (!a.is_string()) r.fail("\"axes\" holds a non-string");
    sweep.axes.push_back(a.get<std::string>());
  }
  const json& points = r.need(root, "points", "");
  if (!points.is_array()) r.fail("\"points\" is not a list");
  for (size_t i = 0; i < points.size(); ++i) {
    const json& p = points[i];
    const std::string where = "points[" + std::to_string(i) + "].";
    if (!p.is_object()) r.fail("\"points[" + std::to_string(i) + "]\" is not an object");
    SweepPoint point;
    point.name = r.text(p, "name", where, false);
    point.dir = r.text(p, "dir", where, true);
    point.overrides = r.need(p, "overrides", where);
    if (!point.overrides.is_object()) r.fail("\"" + where + "overrides\" is not a mapping");
    point.state = r.text(p, "state", where, true);
    const auto& states = sweep_states();
    if (std::find(states.begin(), states.end(), point.state) == states.end())
      r.fail("\"" + where + "state\" is \"" + point.state + "\"; expected pending, running, done, failed or diverged");
    if (p.contains("exit_code") && !p["exit_code"].is_null()) {
      if (!p["exit_code"].is_number_integer()) r.fail("\"" + where + "exit_code\" is not an integer");
      point.exit_code = p["exit_code"].get<int>();
    }
    if (p.contains("wall_s") && !p["wall_s"].is_null()) {
      if (!p["wall_s"].is_number()) r.fail("\"" + where + "wall_s\" is not a number");
      point.wall_s = p["wall_s"].get<double>();
    }
    point.error = r.text(p, "error", where, false);
    sweep.points.push_back(std::move(point));
  }
  return sweep;
}

}  // namespace tn
