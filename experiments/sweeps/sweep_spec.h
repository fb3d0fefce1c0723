#pragma once
// A sweep file (SWEEP.yaml) read, expanded into points and validated, before anything runs:
//   name: scaling_vs_norm             # default: the file's stem
//   base: ../quickstart.yaml          # an experiment spec, relative to this file (required unless
//                                     # every point names its own)
//   set: {model.token_mixer: linear}  # overrides applied to every point
//   grid: {model.attention.linear.normalize: [scaling, none]}   # Cartesian product, first axis slowest
//   zip: {model.n_layers: [2, 4], model.d_model: [64, 128]}    # axes varying together (equal lengths)
//   points: [{name: t1, set: {...}}, ...]                       # named override sets; a point may
//                                     # start from its own spec: {name: text_t1, base: lra/text_t1.yaml}
//   seeds: [1, 2, 3]                  # a train.seed axis, innermost
// Points = points (or one unnamed point) x grid x zip x seeds. Each point's spec is the base, then
// `set`, then the point's own overrides, resolved as `train` resolves a spec; an error names the
// sweep file's line of the offending value (or the base file's line of a bad base key).
#include <nlohmann/json.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "experiments/spec/spec.h"

namespace tn {

/// The most points one sweep expands to (a 10^6-point grid would take minutes just to name; its
/// folder could not be listed by a report).
inline constexpr size_t kMaxSweepPoints = 100000;

/// One value set on top of the base spec: its key path, its value, and where the sweep file wrote
/// it ("sweep.yaml:7").
struct SpecOverride {
  std::string key;
  nlohmann::json value;
  std::string origin;
  /// "key=value" with the value as JSON text (a YAML flow scalar), as `train --set` takes it.
  std::string assignment() const;
};

struct SweepPoint {
  std::string name;                     // "normalize=scaling seed=1", "t1 seed=2"
  std::string dir;                      // its run directory, relative to the sweep folder
  std::vector<SpecOverride> overrides;  // the point's own: points[i].set, grid, zip, seed (in that order)
  std::string base;                     // the spec it starts from: its point's base:, else the sweep's
  ExperimentSpec spec;                  // base + set + overrides, resolved
  /// The base's paper values do not describe this point: it changes the base's model, data or
  /// task and sets no paper value of its own. spec.paper is then empty, and its run is told so
  /// (`--set paper=null`), so no report shows them beside it.
  bool drops_paper = false;
};

/// `transnormer sweep` options that add to the file, as Hydra's multirun does: `set` entries
/// ("train.max_steps=100") join its `set:`, `grid` entries ("model.token_mixer=softmax,linear")
/// become grid axes after its own. A key the file already sets or varies is refused (exit 2).
struct SweepCommandLine {
  std::vector<std::string> set, grid;
  bool smoke = false;  // --smoke: every point a smoke test (`train --smoke`)
};

struct SweepSpec {
  std::string path;  // the sweep file
  std::string name;
  std::string base;  // the base spec's path (relative to the sweep file's folder, as opened); empty
                     // when every point names its own
  std::vector<SpecOverride> set;
  std::vector<std::string> axes;  // the keys that vary between points, in naming order
  std::vector<SweepPoint> points;
  SweepCommandLine command_line;  // the --set and --grid it was given (in `set` and `axes` too)
};

/// Reads and expands `path`, and resolves every point. Throws ConfigError with "file:line: ..."
/// for: an unknown top-level key (with the nearest one), a missing or unreadable base (the sweep's
/// or a point's), an axis
/// that is not a non-empty list, zip axes of unequal lengths, a key in two of set/grid/zip/seeds,
/// malformed points, duplicate points (the same overrides twice, or two points whose folder names
/// collide), and any point whose spec does not validate (an unknown override key with the nearest
/// valid key, a value of the wrong type or out of range, a base that does not validate).
/// For `path` and the command line's additions. `path` may also be an experiment
/// spec (a mapping with `model:` and no `base:`): the sweep is then that spec as its base with
/// the command line's set and grid, named "<spec name>-multirun".
SweepSpec load_sweep(const std::string& path, const SweepCommandLine& cli);
SweepSpec load_sweep(const std::string& path);

/// A value as it reads in a point's name: strings as they are, numbers and booleans as JSON,
/// null as "none", lists joined by ",".
std::string point_value_text(const nlohmann::json& value);

/// A folder-name part safe on any filesystem: letters, digits and ". + -" kept, anything else
/// becomes "_"; no leading dot.
std::string safe_name(const std::string& text);

}  // namespace tn
