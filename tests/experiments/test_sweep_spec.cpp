// Sweep files: expansion (points x grid x zip x seeds), point names and folders, and every
// refusal naming the sweep file's line. Specs are resolved, not run (no data is read).
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "experiments/sweeps/sweep_index.h"
#include "experiments/sweeps/sweep_runner.h"
#include "experiments/sweeps/sweep_spec.h"
#include "tests/temp_dir.h"

using namespace tn;
namespace fs = std::filesystem;

namespace {

/// A scratch folder holding a valid base spec, base.yaml.
struct SweepDir : tn::test::TempDir {
  SweepDir() : tn::test::TempDir("sweep") {
    write("base.yaml",
          "model: {arch: decoder, d_model: 32, n_layers: 2, n_heads: 2, diag_layers: 1, vocab_size: 100}\n"
          "data: {train: train.tokens, seq_len: 16}\n"
          "train: {max_steps: 10}\n");
  }
};

/// The ConfigError message of loading `text` as a sweep file.
std::string refusal(const SweepDir& dir, const std::string& text) {
  const std::string file = dir.write("sweep.yaml", text);
  try {
    load_sweep(file);
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("the sweep file was accepted: " << text);
  return "";
}

/// The ConfigError message of reconciling `sweep` with the index in `out` (a changed point).
std::string index_refusal(const SweepSpec& sweep, const std::string& out) {
  try {
    reconcile_index(sweep, out);
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("a changed point was accepted");
  return "";
}
}  // namespace

TEST_CASE("sweep: points x grid x zip x seeds, in that nesting, each a resolved spec") {
  SweepDir dir;
  const std::string file = dir.write("sweep.yaml",
                                     "name: demo\n"
                                     "base: base.yaml\n"
                                     "set: {train.max_steps: 5}\n"
                                     "points:\n"
                                     "  - {name: small, set: {model.d_model: 32}}\n"
                                     "  - {name: wide, set: {model.d_model: 64}}\n"
                                     "grid:\n"
                                     "  model.diag_layers: [0, 2]\n"
                                     "  model.attention.diag.block_size: [8, 16]\n"
                                     "zip: {model.n_heads: [2, 4], model.norm: [rmsnorm, layernorm]}\n"
                                     "seeds: [1, 2]\n");
  const SweepSpec sweep = load_sweep(file);
  CHECK(sweep.name == "demo");
  // 2 named points x (2 x 2) grid x 2 zip x 2 seeds.
  REQUIRE(sweep.points.size() == 32);
  CHECK(sweep.axes == std::vector<std::string>{"model.diag_layers", "model.attention.diag.block_size", "model.n_heads",
                                               "model.norm", "train.seed"});
  const SweepPoint& first = sweep.points[0];
  CHECK(first.name == "small diag_layers=0 block_size=8 n_heads=2 norm=rmsnorm seed=1");
  CHECK(first.dir == "small_diag_layers-0_block_size-8_n_heads-2_norm-rmsnorm_seed-1");
  // Seeds innermost, then zip, then the grid's last axis, then its first, then the named points.
  CHECK(sweep.points[1].name == "small diag_layers=0 block_size=8 n_heads=2 norm=rmsnorm seed=2");
  CHECK(sweep.points[2].name == "small diag_layers=0 block_size=8 n_heads=4 norm=layernorm seed=1");
  CHECK(sweep.points[4].name == "small diag_layers=0 block_size=16 n_heads=2 norm=rmsnorm seed=1");
  CHECK(sweep.points[8].name == "small diag_layers=2 block_size=8 n_heads=2 norm=rmsnorm seed=1");
  CHECK(sweep.points[16].name == "wide diag_layers=0 block_size=8 n_heads=2 norm=rmsnorm seed=1");
  // Each point's spec: base, then set, then its own overrides.
  const ExperimentSpec& s = sweep.points[31].spec;
  CHECK(s.model.d_model == 64);
  CHECK(s.model.diag_layers == 2);
  CHECK(s.model.attention.diag.block_size == 16);
  CHECK(s.model.n_heads == 4);
  CHECK(s.train.seed == 2);
  CHECK(s.train.max_steps == 5);
  CHECK(sweep.points[0].spec.train.seed == 1);
  // Overrides in order (points[i].set, grid, zip, seed), as `train --set` takes them.
  REQUIRE(first.overrides.size() == 6);
  CHECK(first.overrides[0].assignment() == "model.d_model=32");
  CHECK(first.overrides[5].assignment() == "train.seed=1");
  CHECK(first.overrides[1].origin == file + ":8");  // the line of the grid value
}

TEST_CASE("sweep: folder names are readable, unique and filesystem-safe") {
  SweepDir dir;
  const SweepSpec sweep = load_sweep(dir.write("s.yaml",
                                               "base: base.yaml\n"
                                               "grid:\n"
                                               "  data.train: [a.tokens, \"x/y z.tokens\"]\n"
                                               "  model.attention.diag.norm: [srmsnorm]\n"
                                               "  model.norm: [layernorm]\n"));
  REQUIRE(sweep.points.size() == 2);
  // diag.norm and model.norm share their last part: each gets the shortest unique suffix.
  CHECK(sweep.points[0].dir == "train-a.tokens_diag.norm-srmsnorm_model.norm-layernorm");
  CHECK(sweep.points[1].dir == "train-x_y_z.tokens_diag.norm-srmsnorm_model.norm-layernorm");
  CHECK(sweep.name == "s");
  CHECK(safe_name(".hidden") == "_hidden");
  CHECK(point_value_text(nlohmann::json::array({1, "x"})) == "1,x");
  // No axes at all: one point, the base as it is.
  const SweepSpec single = load_sweep(dir.write("one.yaml", "base: base.yaml\n"));
  REQUIRE(single.points.size() == 1);
  CHECK(single.points[0].dir == "default");
  // A spec swept from the command line is named after its file, as a folder can be named.
  std::ifstream base_file(dir.path / "base.yaml");
  const std::string base_text((std::istreambuf_iterator<char>(base_file)), std::istreambuf_iterator<char>());
  SweepCommandLine cli;
  cli.grid = {"train.seed=1,2"};
  const SweepSpec spaced = load_sweep(dir.write("my spec.yaml", base_text), cli);
  CHECK(spaced.name == "my_spec-multirun");
  CHECK(spaced.points.size() == 2);
}

TEST_CASE("sweep: bad sweep files are refused with the file and line") {
  SweepDir dir;
  const std::string f = (dir.path / "sweep.yaml").string();
  std::string e = refusal(dir, "base: base.yaml\ngrid:\n  model.attention.diag.blok_size: [8, 16]\n");
  CHECK(e.find(f + ":3") == 0);
  CHECK(e.find("did you mean `block_size`") != std::string::npos);
  CHECK(e.find("in point `blok_size=8`") != std::string::npos);

  e = refusal(dir, "base: base.yaml\ngrid:\n  model.d_model: [32, abc]\n");
  CHECK(e.find(f + ":3") == 0);
  CHECK(e.find("abc") != std::string::npos);

  e = refusal(dir, "base: base.yaml\nzip:\n  model.d_model: [32, 64]\n  model.n_heads: [2]\n");
  CHECK(e.find(f + ":4") == 0);
  CHECK(e.find("1 values but zip.model.d_model has 2") != std::string::npos);

  e = refusal(dir, "base: base.yaml\npoints:\n  - {name: a, set: {model.d_model: 32}}\n  - {name: b, set: {model.d_model: 32}}\n");
  CHECK(e.find("duplicate points") != std::string::npos);
  CHECK(e.find(f + ":4") == 0);

  e = refusal(dir, "base: base.yaml\npoints:\n  - {name: a}\n  - {name: a, set: {model.d_model: 64}}\n");
  CHECK(e.find("same folder") != std::string::npos);

  dir.write("broken.yaml", "model: {arch: decoder, d_model: 30, n_layers: 2, n_heads: 4}\ndata: {train: t, seq_len: 8}\n"
                           "train: {max_steps: 1}\n");
  e = refusal(dir, "base: broken.yaml\n");
  CHECK(e.find((dir.path / "broken.yaml").string() + ":1") == 0);  // the base's own line
  CHECK(e.find("divisible") != std::string::npos);

  e = refusal(dir, "base: missing.yaml\n");
  CHECK(e.find(f + ":1") == 0);
  e = refusal(dir, "grid: {model.d_model: [32]}\n");
  CHECK(e.find("base: ../quickstart.yaml") != std::string::npos);
  e = refusal(dir, "base: base.yaml\ngrdi: {model.d_model: [32]}\n");
  CHECK(e.find(f + ":2") == 0);
  CHECK(e.find("did you mean `grid`") != std::string::npos);
  e = refusal(dir, "base: base.yaml\nset: {model.d_model: 32}\ngrid: {model.d_model: [32, 64]}\n");
  CHECK(e.find("also in set") != std::string::npos);
  e = refusal(dir, "base: base.yaml\ngrid: {model.d_model: []}\n");
  CHECK(e.find("not a non-empty list") != std::string::npos);
  e = refusal(dir, "base: base.yaml\nseeds: [1, -2]\n");
  CHECK(e.find(f + ":2") == 0);
}

TEST_CASE("sweep: a grid of more points than one sweep runs is refused at once, naming its size") {
  const SweepDir dir;
  std::string grid = "base: base.yaml\ngrid:\n";
  for (const char* key : {"train.seed", "train.max_steps", "train.batch_size"}) {
    grid += std::string("  ") + key + ": [";
    for (int v = 1; v <= 1000; ++v) grid += (v > 1 ? ", " : "") + std::to_string(v);
    grid += "]\n";
  }
  const std::string message = refusal(dir, grid);  // 10^9 points: refused before any is named
  INFO(message);
  CHECK(message.find("sweep.yaml:2: grid: makes 1e+09 points") != std::string::npos);
  CHECK(message.find("split it into several sweeps") != std::string::npos);
}

TEST_CASE("sweep: a point may start from its own base spec, and the sweep then needs none") {
  SweepDir dir;
  dir.write("wide.yaml",
            "model: {arch: decoder, d_model: 64, n_layers: 3, n_heads: 4, diag_layers: 1, vocab_size: 100}\n"
            "data: {train: other.tokens, seq_len: 32}\n"
            "train: {max_steps: 20}\n");
  const SweepSpec s = load_sweep(dir.write("mixed.yaml",
                                           "points:\n"
                                           "  - {name: small, base: base.yaml}\n"
                                           "  - {name: wide, base: wide.yaml, set: {train.max_steps: 7}}\n"
                                           "seeds: [1, 2]\n"));
  CHECK(s.base.empty());
  REQUIRE(s.points.size() == 4);
  CHECK(s.points[0].base == (dir.path / "base.yaml").string());
  CHECK(s.points[0].spec.model.d_model == 32);
  CHECK(s.points[2].base == (dir.path / "wide.yaml").string());
  CHECK(s.points[2].dir == "wide_seed-1");
  CHECK(s.points[2].spec.model.d_model == 64);  // the point's own base
  CHECK(s.points[2].spec.model.n_layers == 3);
  CHECK(s.points[2].spec.train.max_steps == 7);  // then its set
  CHECK(s.points[3].spec.train.seed == 2);
  // With a sweep base, a point without its own starts from the sweep's.
  const SweepSpec both = load_sweep(dir.write("both.yaml",
                                              "base: base.yaml\n"
                                              "points:\n  - {name: a}\n  - {name: b, base: wide.yaml}\n"));
  CHECK(both.points[0].spec.model.d_model == 32);
  CHECK(both.points[1].spec.model.d_model == 64);
  // The same overrides from two bases are two experiments, not duplicates.
  CHECK(load_sweep(dir.write("two.yaml", "points:\n  - {name: a, base: base.yaml}\n  - {name: b, base: wide.yaml}\n"))
            .points.size() == 2);

  const std::string f = (dir.path / "sweep.yaml").string();
  std::string e = refusal(dir, "points:\n  - {name: a, base: base.yaml}\n  - {name: b}\n");
  CHECK(e.find("base: ../quickstart.yaml") != std::string::npos);  // b has no base to start from
  e = refusal(dir, "base: base.yaml\npoints:\n  - {name: a, set: {train.seed: 3}}\nseeds: [1, 2]\n");
  CHECK(e.find("points[0].set.train.seed: is also in seeds") != std::string::npos);
  e = refusal(dir, "points:\n  - {name: a, base: nowhere.yaml}\n");
  CHECK(e.find(f + ":2") == 0);
  CHECK(e.find("points[0].base") != std::string::npos);
  CHECK(e.find("nowhere.yaml is not a file") != std::string::npos);
}

TEST_CASE("sweep index: a changed point is refused by name, added points are accepted") {
  SweepDir dir;
  const SweepSpec two = load_sweep(dir.write("s.yaml", "base: base.yaml\ngrid: {model.d_model: [32, 64]}\n"));
  const std::string out = (dir.path / "out").string();
  fs::create_directories(out);
  SweepIndex index = reconcile_index(two, out);
  REQUIRE(index.points.size() == 2);
  index.points[0].state = PointState::Done;
  index.points[0].exit_code = 0;
  index.points[0].wall_s = 1.5;
  index.points[1].state = PointState::Queued;  // a Slurm task waiting in the queue
  index.points[1].launcher = "slurm";
  index.points[1].slurm_job = "1234";
  index.points[1].slurm_task = 1;
  index.points[1].ranks = 2;
  write_sweep_index(out + "/sweep.json", index);
  const SweepIndex back = read_sweep_index(out + "/sweep.json");
  CHECK(back.points[0].state == PointState::Done);
  CHECK(back.points[0].wall_s == 1.5);
  CHECK(back.points[1].state == PointState::Queued);
  CHECK(back.points[1].slurm_job == std::optional<std::string>("1234"));
  CHECK(back.points[1].slurm_task == std::optional<int>(1));
  CHECK(back.points[1].ranks == std::optional<int>(2));
  CHECK_FALSE(back.points[1].exit_code.has_value());
  CHECK(back.to_json() == index.to_json());

  // One more value: the two known points keep their state, the new one is pending.
  const SweepSpec three = load_sweep(dir.write("s.yaml", "base: base.yaml\ngrid: {model.d_model: [32, 64, 128]}\n"));
  const SweepIndex grown = reconcile_index(three, out);
  REQUIRE(grown.points.size() == 3);
  CHECK(grown.points[0].state == PointState::Done);
  CHECK(grown.points[2].state == PointState::Pending);

  // The same folders with another set: refused, naming the point and the key.
  const SweepSpec changed =
      load_sweep(dir.write("s.yaml", "base: base.yaml\nset: {train.max_steps: 7}\ngrid: {model.d_model: [32, 64]}\n"));
  const std::string what = index_refusal(changed, out);
  CHECK(what.find("point `d_model=32`") != std::string::npos);
  CHECK(what.find("train.max_steps is 7 in this sweep but 10") != std::string::npos);
  // The paper's values are not part of a point: correcting them is accepted.
  const SweepSpec paper = load_sweep(dir.write(
      "s.yaml", "base: base.yaml\nset: {paper.test.accuracy: 0.38}\ngrid: {model.d_model: [32, 64]}\n"));
  CHECK(reconcile_index(paper, out).points.size() == 2);  // not refused
  // A raised train.max_steps is allowed: with another key changed too, the refusal names that key.
  const SweepSpec raised = load_sweep(dir.write(
      "s.yaml", "base: base.yaml\nset: {train.max_steps: 20, train.seed: 9}\ngrid: {model.d_model: [32, 64]}\n"));
  const std::string named = index_refusal(raised, out);
  CHECK(named.find("train.seed is 9 in this sweep") != std::string::npos);
  CHECK(named.find("max_steps") == std::string::npos);
  std::ofstream(out + "/sweep.json") << "{not json";
  CHECK_THROWS_AS(reconcile_index(two, out), DataError);
}

TEST_CASE("sweep: a base's paper values stay with the points they describe, not beside other models") {
  SweepDir dir;
  dir.write("t1.yaml",
            "model: {arch: decoder, d_model: 32, n_layers: 2, n_heads: 2, diag_layers: 1, vocab_size: 100, "
            "token_mixer: norm_attention}\n"
            "data: {train: train.tokens, seq_len: 16}\n"
            "train: {max_steps: 10}\n"
            "paper: {test.accuracy: 0.4103}\n");
  const SweepSpec sweep = load_sweep(dir.write("sweep.yaml",
                                               "base: t1.yaml\n"
                                               "set: {train.max_steps: 5}\n"
                                               "grid: {model.token_mixer: [norm_attention, linear, performer]}\n"
                                               "seeds: [1, 2]\n"));
  REQUIRE(sweep.points.size() == 6);
  for (const SweepPoint& p : sweep.points) {
    const bool t1 = p.spec.model.token_mixer == sweep.points[0].spec.model.token_mixer;
    INFO(p.name);
    CHECK(p.drops_paper == !t1);  // another budget or seed keeps them; another model does not
    CHECK(p.spec.paper == (t1 ? std::map<std::string, double>{{"test.accuracy", 0.4103}} : std::map<std::string, double>{}));
  }
  // Paper values the sweep sets itself describe every point.
  const SweepSpec own = load_sweep(dir.write("own.yaml",
                                             "base: t1.yaml\n"
                                             "grid: {model.token_mixer: [norm_attention, linear]}\n"
                                             "set: {paper.test.accuracy: 0.5}\n"));
  for (const SweepPoint& p : own.points) {
    CHECK_FALSE(p.drops_paper);
    CHECK(p.spec.paper.at("test.accuracy") == 0.5);
  }
}

TEST_CASE("sweep index: a cosine sweep is extended with its schedule (max_steps and total_steps raised together)") {
  SweepDir dir;
  dir.write("cos.yaml",
            "model: {arch: decoder, d_model: 32, n_layers: 2, n_heads: 2, diag_layers: 1, vocab_size: 100}\n"
            "data: {train: train.tokens, seq_len: 16}\n"
            "train: {max_steps: 6, schedule: {name: cosine, warmup_steps: 2}}\n");
  const std::string out = (dir.path / "out").string();
  fs::create_directories(out);
  auto run_all = [&](const SweepSpec& sweep) {
    SweepIndex index = reconcile_index(sweep, out);
    for (PointRecord& p : index.points) p.state = PointState::Done;
    write_file_atomic(out + "/sweep.json", index.to_json().dump(2));
  };
  run_all(load_sweep(dir.write("s.yaml", "base: cos.yaml\ngrid: {model.d_model: [32, 64]}\n")));
  // total_steps left out follows max_steps: raising max_steps raises both, and the points continue.
  const SweepIndex followed = reconcile_index(
      load_sweep(dir.write("s.yaml", "base: cos.yaml\nset: {train.max_steps: 12}\ngrid: {model.d_model: [32, 64]}\n")), out);
  CHECK(followed.points[0].state == PointState::Pending);
  CHECK(followed.points[0].spec["train"]["schedule"]["total_steps"] == 12);
  // Both raised by hand, as train --resume takes them: accepted too (it was refused).
  const SweepIndex both = reconcile_index(
      load_sweep(dir.write("s.yaml", "base: cos.yaml\nset: {train.max_steps: 12, train.schedule.total_steps: 12}\n"
                                     "grid: {model.d_model: [32, 64]}\n")),
      out);
  CHECK(both.points[1].state == PointState::Pending);
  // total_steps changed without a longer run is still another experiment.
  const std::string what = index_refusal(
      load_sweep(dir.write("s.yaml", "base: cos.yaml\nset: {train.schedule.total_steps: 9}\ngrid: {model.d_model: [32, 64]}\n")),
      out);
  CHECK(what.find("total_steps is 9 in this sweep but 6") != std::string::npos);
}
