#pragma once
// sweep.json, as `report` reads it: the contract written (atomically) by `transnormer sweep` in
// its sweep folder. Keys: "name", "sweep_file", "base", "set" (overrides shared by every point),
// "axes" (the swept keys, train.seed among them when seeds are swept) and "points": each
// {"name", "dir" (relative to the sweep folder), "overrides" (the point's own, train.seed
// included), "state" (pending | running | done | failed | diverged), "exit_code" and "wall_s"
// (null until known), "error" ("" when none)}.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tn {

struct SweepPoint {
  std::string name;
  std::string dir;          // relative to the sweep folder
  nlohmann::json overrides;  // {key.path: value}
  std::string state;        // pending | running | done | failed | diverged
  std::optional<int> exit_code;
  std::optional<double> wall_s;  // seconds the point's process ran
  std::string error;
};

struct SweepFile {
  std::string name, sweep_file, base;
  nlohmann::json set = nlohmann::json::object();  // {key.path: value} shared by every point
  std::vector<std::string> axes;
  std::vector<SweepPoint> points;
};

/// The states a point may be in.
const std::vector<std::string>& sweep_states();

/// Reads `<folder>/sweep.json`. Throws DataError naming the file and the key when it is not
/// valid JSON, misses "name", "axes" or "points", or a point misses "dir", "overrides" or "state",
/// or has a state outside sweep_states().
SweepFile read_sweep_file(const std::string& folder);

}  // namespace tn
