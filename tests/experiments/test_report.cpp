// `report`: run directories and a sweep folder made up by hand with known values. The pooled
// statistics in report.md, report.csv and report.json are exactly those values; failed runs are
// shown, not dropped; plain run directories group by the keys they differ in; unknown metrics
// and axes are refused; the SVG plots are well-formed; paper values sit beside measured ones.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "experiments/reports/report.h"
#include "experiments/reports/report_format.h"
#include "experiments/reports/report_highlights.h"
#include "experiments/plots/svg_plot.h"
#include "tests/temp_dir.h"
#include "tests/experiments/report_fixture.h"

using namespace tn;
using namespace tn::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
/// The CSV as rows of fields (no quoted fields in these fixtures but the problems column).
std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  std::istringstream in(read_file(path));
  std::string line;
  std::getline(in, line);
  auto split = [](const std::string& l) {
    std::vector<std::string> out;
    std::string field;
    bool quoted = false;
    for (char c : l) {
      if (c == '"') quoted = !quoted;
      else if (c == ',' && !quoted) out.push_back(field), field.clear();
      else field += c;
    }
    out.push_back(field);
    return out;
  };
  const std::vector<std::string> head = split(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    const std::vector<std::string> fields = split(line);
    REQUIRE(fields.size() == head.size());
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < head.size(); ++i) row[head[i]] = fields[i];
    rows.push_back(row);
  }
  return rows;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// Adds a row of one run with this flattened config, named `label`, with `stat` for `metric`.
void add_row(ReportInputs& inputs, ReportTable& table, std::vector<std::pair<std::string, json>> flat_config,
             const std::string& label, const std::string& metric, const PooledStat& stat) {
  RunRecord run;
  run.flat_config = std::move(flat_config);
  inputs.runs.push_back(run);
  ReportRow row;
  row.label = label;
  row.runs = {inputs.runs.size() - 1};
  row.metrics[metric] = stat;
  table.rows.push_back(row);
}

/// Replaces `from` by `to` in the config.yaml of the fake run in `dir`.
void edit_fake_config(const fs::path& dir, const std::string& from, const std::string& to) {
  std::string config = read_file((dir / "config.yaml").string());
  config.replace(config.find(from), from.size(), to);
  write_fake_file(dir / "config.yaml", config);
}

bool well_formed_svg(const std::string& svg) {
  const bool starts = svg.rfind("<?xml", 0) == 0 || svg.rfind("<svg", 0) == 0;
  const size_t end = svg.find_last_not_of(" \n");
  return starts && end != std::string::npos && svg.compare(end - 5, 6, "</svg>") == 0;
}
}  // namespace

TEST_CASE("report: a sweep's seeds pooled exactly, failed points shown, paper values beside") {
  TempDir tmp("report_sweep");
  const fs::path sweep = tmp.path / "sweep";
  write_standard_sweep(sweep);
  const ReportResult result = write_report({{sweep.string()}, "", {}, ""});
  CHECK(result.out_dir == sweep.string());
  CHECK(result.rows == 2);
  CHECK(result.runs == 6);
  CHECK(result.done == 4);

  const json j = json::parse(read_file((sweep / "report.json").string()));
  CHECK(j["keys"] == json{"model.attention.linear.normalize"});  // paper.test.ppl overrides are not a key
  CHECK(j["metrics"] == json{"valid.loss", "valid.ppl", "test.loss", "test.ppl"});  // counts left out
  REQUIRE(j["rows"].size() == 2);
  const json& scaling = j["rows"][0];
  CHECK(scaling["label"] == "normalize=scaling");
  CHECK(scaling["state"] == "done");
  CHECK(scaling["metrics"]["valid.ppl"]["mean"].get<double>() == doctest::Approx(12).epsilon(1e-15));
  CHECK(scaling["metrics"]["valid.ppl"]["std"].get<double>() == doctest::Approx(2).epsilon(1e-15));
  CHECK(scaling["metrics"]["valid.ppl"]["n"] == 3);
  CHECK(scaling["metrics"]["test.ppl"]["paper"] == 31.01);
  CHECK(scaling["metrics"]["valid.ppl"]["paper"].is_null());
  CHECK(scaling["wall_s"]["mean"] == 3.0);  // the sweep's wall_s, not train.total_s
  CHECK(scaling["analysis"]["analysis.grad_stats.rsd_mean"]["mean"].get<double>() == doctest::Approx(0.2));
  REQUIRE(scaling["runs"].size() == 3);
  CHECK(scaling["runs"][1]["dir"] == "normalize-scaling_seed-2");
  CHECK(scaling["runs"][1]["seed"] == 2);
  CHECK(scaling["runs"][1]["final"]["valid"]["ppl"] == 12.0);
  const json& srms = j["rows"][1];
  CHECK(srms["state"] == "failed (2 of 3 seeds)");
  CHECK(srms["runs_done"] == 1);
  CHECK(srms["metrics"]["valid.ppl"]["mean"] == 20.0);
  CHECK(srms["metrics"]["valid.ppl"]["std"].is_null());
  CHECK(srms["metrics"]["valid.ppl"]["n"] == 1);
  CHECK(srms["runs"][1]["state"] == "failed");
  CHECK(srms["runs"][1]["problems"][0] == "exit code 1: out of memory (made up)");
  CHECK(srms["runs"][2]["final"].empty());
  CHECK(srms["metrics"]["test.ppl"]["paper"] == 40.0);

  const std::string md = read_file((sweep / "report.md").string());
  CHECK(contains(md, "| normalize=scaling | done | scaling | "));
  CHECK(contains(md, "| **12.0 ± 2.0** | 3 |"));       // the best valid.ppl in bold
  CHECK(contains(md, "| **30 ± 0** | 3 | 31.01 |"));  // test.ppl (tied: the first row), its n, the paper value
  CHECK(contains(md, "| 20 | 1 |"));
  // Highlights: the settings every run shares, and the best point of each metric.
  CHECK(contains(md, "**Shared by every run:** task language_modeling, d_model 32, seq_len 16, batch_size 2, "
                     "max_steps 20, tokens per run 640, params 12.3k."));
  CHECK(contains(md, "- valid.ppl (lower is better): best normalize=scaling, 12.0 ± 2.0; no point is clearly "
                     "behind it (gap > 2 × the larger std)."));
  CHECK(j["shared"]["train.max_steps"] == "20");
  CHECK(j["shared"]["params"] == "12.3k");
  CHECK(j["best"][1]["metric"] == "valid.ppl");
  CHECK(j["best"][1]["row"] == "normalize=scaling");
  // The command that reruns the sweep, and the speed measured beside another point marked.
  CHECK(contains(md, "rerun with `transnormer sweep configs/ablations/scaling_vs_norm.yaml --out " + sweep.string() +
                         " --jobs 2 --threads-per-job 1 --data-root /srv/datasets`"));  // the points' data root
  CHECK(contains(md, "| 5000 † | 1 × 2 |"));  // tokens/s, then the ranks and threads that made it
  CHECK(scaling["ranks"] == 1);
  CHECK(scaling["threads"] == 2);
  CHECK(contains(md, "† tokens/s and wall time measured with up to 2 sweep points running side by side"));
  CHECK(contains(md, "(baseline): the task's reference value on the same split"));
  CHECK(scaling["speed_jobs"] == 2);
  CHECK(contains(md, "| normalize=srmsnorm | failed (2 of 3 seeds) |"));
  CHECK(contains(md, "| 20 | 1 |"));
  CHECK(contains(md, "out of memory (made up)"));
  CHECK(contains(md, "[seed 2](normalize-scaling_seed-2)"));
  CHECK(contains(md, "![Training loss"));

  const auto csv = read_csv((sweep / "report.csv").string());
  REQUIRE(csv.size() == 2);
  CHECK(csv[0].at("point") == "normalize=scaling");
  CHECK(csv[0].at("model.attention.linear.normalize") == "scaling");
  CHECK(csv[0].at("valid.ppl.mean") == "12");
  CHECK(csv[0].at("valid.ppl.std") == "2");
  CHECK(csv[0].at("valid.ppl.n") == "3");
  CHECK(csv[0].at("test.ppl.paper") == "31.01");
  CHECK(csv[0].at("params") == "12345");
  CHECK(csv[1].at("state") == "failed (2 of 3 seeds)");
  CHECK(csv[1].at("valid.ppl.std") == "");
  CHECK(csv[1].at("done") == "1");
  CHECK(contains(csv[1].at("problems"), "out of memory"));

  const std::string html = read_file((sweep / "report.html").string());
  CHECK(contains(html, "<style>"));
  CHECK(contains(html, "<svg"));
  CHECK_FALSE(contains(html, "<?xml"));
  CHECK_FALSE(contains(html, "<script"));
  CHECK(contains(html, "href=\"normalize-scaling_seed-1\""));
  CHECK(contains(html, "12.0 ± 2.0"));
  for (const std::string name : {"train_loss", "valid_loss_curve", "final_valid_ppl", "grad_rsd"}) {
    INFO(name);
    const fs::path svg = sweep / "plots" / (name + ".svg");
    REQUIRE(fs::exists(svg));
    CHECK(well_formed_svg(read_file(svg.string())));
  }
  // Units on the axes (PLplot writes each character as a hexadecimal entity: decode them).
  const auto svg_text = [](const std::string& svg) {
    std::string out;
    for (size_t i = 0; i < svg.size(); ++i) {
      if (svg.compare(i, 3, "&#x") == 0) {
        const size_t end = svg.find(';', i);
        out += static_cast<char>(std::stoi(svg.substr(i + 3, end - i - 3), nullptr, 16));
        i = end;
      } else {
        out += svg[i];
      }
    }
    return out;
  };
  CHECK(contains(svg_text(read_file((sweep / "plots" / "train_loss.svg").string())), "training loss (nats)"));
  CHECK(contains(svg_text(read_file((sweep / "plots" / "final_valid_ppl.svg").string())),
                 "valid.ppl (exp of the loss in nats)"));
  for (const auto& entry : fs::recursive_directory_iterator(sweep))  // atomic writes leave no temporaries
    CHECK_FALSE(contains(entry.path().filename().string(), ".tmp."));
}

TEST_CASE("report: plain run directories group by the config keys that differ") {
  TempDir tmp("report_plain");
  std::vector<std::string> dirs;
  int n = 0;
  for (int d_model : {64, 32})
    for (uint64_t seed : {1, 2}) {
      FakeRun r;
      r.yaml_model = "{d_model: " + std::to_string(d_model) + ", token_mixer: linear}";
      r.seed = seed;
      r.threads = 1 + n % 2;  // threads and seed differ but do not split rows
      r.valid_ppl = d_model == 32 ? 10.0 + 2 * static_cast<double>(seed) : 5.0;
      const fs::path dir = tmp.path / ("run" + std::to_string(n++));
      write_fake_run(dir, r);
      dirs.push_back(dir.string());
    }
  const std::string out = (tmp.path / "out").string();
  write_report({dirs, out, {"valid.ppl"}, "d_model"});
  const json j = json::parse(read_file(out + "/report.json"));
  CHECK(j["keys"] == json{"model.d_model"});
  CHECK(j["by"] == "model.d_model");
  REQUIRE(j["rows"].size() == 2);
  CHECK(j["rows"][0]["label"] == "d_model=32");  // --by: numeric order
  CHECK(j["rows"][0]["metrics"]["valid.ppl"]["mean"] == 13.0);
  CHECK(j["rows"][0]["metrics"]["valid.ppl"]["std"].get<double>() == doctest::Approx(std::sqrt(2.0)));
  CHECK(j["rows"][1]["label"] == "d_model=64");
  CHECK(j["rows"][1]["runs"][0]["dir"] == "../run0");
  CHECK(j["metrics"] == json{"valid.ppl"});
  CHECK(fs::exists(out + "/report.md"));
  CHECK(fs::exists(out + "/plots/final_valid_ppl.svg"));
  const std::string md = read_file(out + "/report.md");
  CHECK(contains(md, "| point | state | d_model | valid.ppl | n | valid.ppl (baseline) |"));
  CHECK_FALSE(contains(md, "test.ppl"));
  // The task's baseline of the same split and metric (summary.json unigram_valid_ppl) sits beside it.
  CHECK(j["rows"][0]["metrics"]["valid.ppl"]["baseline"] == 90.0);
  CHECK(contains(read_file(out + "/report.csv"), "valid.ppl.baseline"));
}

TEST_CASE("report: a key that only relabels another keeps its column but leaves the label") {
  TempDir tmp("report_relabel");
  std::vector<std::string> dirs;
  for (int d_model : {32, 64})
    for (const char* mixer : {"linear", "softmax"}) {
      FakeRun r;  // d_ff follows d_model, as a resolved config has it
      r.yaml_model = "{d_model: " + std::to_string(d_model) + ", token_mixer: " + mixer +
                     ", channel_mixer: {d_ff: " + std::to_string(d_model * 8 / 3) + "}}";
      r.valid_ppl = 10;
      const fs::path dir = tmp.path / (std::to_string(d_model) + mixer);
      write_fake_run(dir, r);
      dirs.push_back(dir.string());
    }
  const std::string out = (tmp.path / "out").string();
  write_report({dirs, out, {}, ""});
  const json j = json::parse(read_file(out + "/report.json"));
  CHECK(j["keys"] == json{"model.channel_mixer.d_ff", "model.d_model", "model.token_mixer"});
  REQUIRE(j["rows"].size() == 4);
  CHECK(j["rows"][0]["label"] == "d_model=32 token_mixer=linear");
  CHECK(j["rows"][0]["keys"]["model.channel_mixer.d_ff"] == "85");

  // A list resolved from another key (model.layers from model.diag_layers), one run each: the
  // pairs never repeat, yet the list leaves the label ("diag_layers=1 layers=[...]" before).
  std::vector<std::string> depth_dirs;
  for (int diag : {0, 1, 2}) {
    FakeRun r;
    std::string layers;
    for (int l = 0; l < 2; ++l) layers += std::string(l ? ", " : "") + (l < diag ? "diag" : "norm");
    r.yaml_model = "{d_model: 32, diag_layers: " + std::to_string(diag) + ", layers: [" + layers + "]}";
    const fs::path dir = tmp.path / ("diag" + std::to_string(diag));
    write_fake_run(dir, r);
    depth_dirs.push_back(dir.string());
  }
  const std::string depth_out = (tmp.path / "depth").string();
  write_report({depth_dirs, depth_out, {}, ""});
  const json d = json::parse(read_file(depth_out + "/report.json"));
  REQUIRE(d["rows"].size() == 3);
  CHECK(d["rows"][1]["label"] == "diag_layers=1");
  CHECK(d["rows"][1]["keys"]["model.layers"].get<std::string>().starts_with("["));  // its column stays
}

TEST_CASE("report: named sweep points that differ only in their base spec differ in its keys") {
  // points: [{name: softmax, base: ...}, {name: t1, base: ...}] with seeds as the only axis: no
  // override names model.token_mixer, yet the rows differ in it and --by orders by it.
  TempDir tmp("report_bases");
  const fs::path sweep = tmp.path / "sweep";
  json points = json::array();
  for (const char* name : {"softmax", "t1"})
    for (uint64_t seed : {1, 2}) {
      const std::string dir = std::string(name) + "_seed-" + std::to_string(seed);
      FakeRun r;
      r.yaml_model = std::string("{d_model: 32, token_mixer: ") + (name[0] == 't' ? "linear" : "softmax") + "}";
      r.seed = seed;
      r.valid_ppl = name[0] == 't' ? 10.0 : 20.0;
      write_fake_run(sweep / dir, r);
      points.push_back(fake_done_point(std::string(name) + " seed=" + std::to_string(seed), dir, {{"train.seed", seed}}));
    }
  write_fake_index(sweep, "bases", {"train.seed"}, points);
  const std::string out = (tmp.path / "out").string();
  write_report({{sweep.string()}, out, {"valid.ppl"}, "token_mixer"});
  const json j = json::parse(read_file(out + "/report.json"));
  CHECK(j["keys"] == json{"model.token_mixer"});  // d_model and the seeds do not split rows
  REQUIRE(j["rows"].size() == 2);
  CHECK(j["rows"][0]["label"] == "t1");  // "linear" before "softmax": the sweep's order reversed
  CHECK(j["rows"][0]["keys"]["model.token_mixer"] == "linear");
  CHECK(j["rows"][0]["metrics"]["valid.ppl"]["n"] == 2);
  CHECK(j["rows"][1]["label"] == "softmax");
  CHECK(fs::exists(out + "/plots/final_valid_ppl.svg"));
}

TEST_CASE("report: --label names a point by a key it inherits from its base as by one it sets") {
  // points: a (sets model.d_model: 64), b (inherits 32 from the base). With --label d_model the
  // second row was named by the sweep, not "d_model=32".
  TempDir tmp("report_label_inherited");
  const fs::path sweep = tmp.path / "sweep";
  json points = json::array();
  for (const char* name : {"a", "b"}) {
    FakeRun r;
    r.yaml_model = std::string("{d_model: ") + (name[0] == 'a' ? "64" : "32") + ", token_mixer: linear}";
    r.valid_ppl = name[0] == 'a' ? 10.0 : 20.0;
    write_fake_run(sweep / name, r);
    points.push_back(fake_done_point(name, name, name[0] == 'a' ? json{{"model.d_model", 64}} : json::object()));
  }
  write_fake_index(sweep, "inherit", {"model.d_model"}, points);
  const std::string out = (tmp.path / "out").string();
  ReportOptions options{{sweep.string()}, out, {"valid.ppl"}, ""};
  options.label = {"d_model"};
  write_report(options);
  const json j = json::parse(read_file(out + "/report.json"));
  REQUIRE(j["rows"].size() == 2);
  CHECK(j["rows"][0]["label"] == "d_model=64");
  CHECK(j["rows"][1]["label"] == "d_model=32");
}

TEST_CASE("report: two sweeps of one name are told apart by folder, and a setting that differs between them is a column") {
  // Sweep a: batch_size 4 (its --set), grid over lr; sweep b: batch_size 2, grid over d_model.
  TempDir tmp("report_two_sweeps");
  for (const char* name : {"a", "b"}) {
    const fs::path sweep = tmp.path / name;
    json points = json::array();
    for (int i = 0; i < 2; ++i) {
      const std::string dir = "p" + std::to_string(i);
      FakeRun r;
      r.valid_ppl = 10.0 + i;
      write_fake_run(sweep / dir, r);
      if (name[0] == 'a') {
        edit_fake_config(sweep / dir, "batch_size: 2", "batch_size: 4");
      }
      points.push_back(fake_done_point(dir, dir, name[0] == 'a' ? json{{"train.optimizer.lr", i ? 0.01 : 0.001}}
                                                               : json{{"model.d_model", i ? 64 : 32}}));
    }
    write_fake_index(sweep, "tiny", {name[0] == 'a' ? "train.optimizer.lr" : "model.d_model"}, points);
  }
  const std::string out = (tmp.path / "out").string();
  write_report({{(tmp.path / "a").string(), (tmp.path / "b").string()}, out, {"valid.ppl"}, ""});
  const json j = json::parse(read_file(out + "/report.json"));
  CHECK(std::find(j["keys"].begin(), j["keys"].end(), "train.batch_size") != j["keys"].end());
  REQUIRE(j["rows"].size() == 4);
  CHECK(j["rows"][0]["keys"]["sweep"] == "a");
  CHECK(j["rows"][2]["keys"]["sweep"] == "b");
  CHECK(j["rows"][0]["keys"]["train.batch_size"] == "4");
  CHECK(j["rows"][2]["keys"]["train.batch_size"] == "2");
}

TEST_CASE("report: rows of one named point crossed with a grid are labelled apart") {
  // points: [{name: cola, ...}] x grid model.d_model: both rows were labelled "cola", and the
  // highlights named "cola, cola".
  TempDir tmp("report_same_name");
  const fs::path sweep = tmp.path / "sweep";
  json points = json::array();
  for (int d_model : {32, 64})
    for (uint64_t seed : {1, 2}) {
      const std::string dir = "cola_d_model-" + std::to_string(d_model) + "_seed-" + std::to_string(seed);
      FakeRun r;
      r.yaml_model = "{d_model: " + std::to_string(d_model) + ", token_mixer: linear}";
      r.seed = seed;
      r.valid_ppl = d_model == 32 ? 10.0 + static_cast<double>(seed) : 30.0 + static_cast<double>(seed);
      write_fake_run(sweep / dir, r);
      points.push_back(fake_done_point("cola d_model=" + std::to_string(d_model) + " seed=" + std::to_string(seed), dir,
                                       {{"model.d_model", d_model}, {"train.seed", seed}}));
    }
  write_fake_index(sweep, "same", {"model.d_model", "train.seed"}, points);
  const std::string out = (tmp.path / "out").string();
  write_report({{sweep.string()}, out, {"valid.ppl"}, ""});
  const json j = json::parse(read_file(out + "/report.json"));
  REQUIRE(j["rows"].size() == 2);
  CHECK(j["rows"][0]["label"] == "cola d_model=32");
  CHECK(j["rows"][1]["label"] == "cola d_model=64");
  // 11.5 ± 0.71 against 31.5 ± 0.71: clearly behind, named apart.
  CHECK(contains(read_file(out + "/report.md"), "best cola d_model=32, 11.50 ± 0.71; clearly behind it (gap > 2 × the "
                                                "larger std): cola d_model=64."));
}

TEST_CASE("report: the rerun command names the sweep folder as the sweep did, beside its sweep file") {
  // The sweep file is relative to where the sweep ran; the folder given to report (a copy, another
  // cwd) is not: the command takes the folder from the points' own --out.
  TempDir tmp("report_rerun");
  const fs::path sweep = tmp.path / "copy";
  write_standard_sweep(sweep);
  json index = json::parse(read_file((sweep / "sweep.json").string()));
  for (json& p : index["points"])
    p["command"] = "transnormer train configs/quickstart.yaml --out runs/ablations/" + p["dir"].get<std::string>() +
                   " --threads 1";
  write_fake_file(sweep / "sweep.json", index.dump());
  const std::string out = (tmp.path / "out").string();
  write_report({{sweep.string()}, out, {"valid.ppl"}, ""});
  CHECK(contains(read_file(out + "/report.md"),
                 "rerun with `transnormer sweep configs/ablations/scaling_vs_norm.yaml --out runs/ablations --jobs 2"));
  // Where the sweep recorded its working folder and --out: the command starts there, every path quoted,
  // so it reruns the same sweep from any folder.
  index["command_line"]["cwd"] = "/home/me/my project";
  index["command_line"]["out"] = "runs/my sweep";
  write_fake_file(sweep / "sweep.json", index.dump());
  write_report({{sweep.string()}, out, {"valid.ppl"}, ""});
  CHECK(contains(read_file(out + "/report.md"),
                 "rerun with `cd '/home/me/my project' && transnormer sweep configs/ablations/scaling_vs_norm.yaml "
                 "--out 'runs/my sweep' --jobs 2"));
}

TEST_CASE("report highlights: rows that learn other data are not ranked against each other") {
  // Three rows: two ListOps, one Text (data.reader); accuracies 0.30 ± 0.01, 0.36 ± 0.01, 0.58 ± 0.01.
  ReportInputs inputs;
  ReportTable table;
  table.metrics = {"valid.accuracy"};
  const char* readers[3] = {"listops", "listops", "imdb"};
  const double acc[3] = {0.30, 0.36, 0.58};
  for (size_t r = 0; r < 3; ++r)
    add_row(inputs, table, {{"data.reader", json(readers[r])}, {"model.d_model", json(64)}}, "row" + std::to_string(r),
            "valid.accuracy", PooledStat{acc[r], 0.01, 3});
  const ReportHighlights h = report_highlights(inputs, table);
  // ListOps: row1 best, row0 clearly behind. Text has one row: alone, it is nobody's best, and the
  // ListOps rows are not behind a Text accuracy.
  REQUIRE(h.best.size() == 1);
  CHECK(h.best[0].group == "data.reader listops");
  CHECK(h.best[0].row == 1);
  CHECK(h.best[0].clearly_worse == std::vector<size_t>{0});
  CHECK(is_best(h, "valid.accuracy", 1));
  CHECK_FALSE(is_best(h, "valid.accuracy", 2));
  CHECK_FALSE(is_best(h, "valid.accuracy", 0));
  CHECK(describe_best(table, h.best[0]).starts_with("valid.accuracy (higher is better) among the rows of data.reader "
                                                     "listops: best row1"));
}

TEST_CASE("report highlights: a masked LM's perplexity is not ranked against a causal LM's") {
  ReportInputs inputs;
  ReportTable table;
  table.metrics = {"valid.ppl"};
  const char* tasks[2] = {"language_modeling", "masked_lm"};
  for (size_t r = 0; r < 2; ++r)
    add_row(inputs, table, {{"task", json(tasks[r])}, {"data.reader", json("wikitext")}}, tasks[r], "valid.ppl",
            PooledStat{r == 0 ? 100.0 : 5.0, 1.0, 3});
  ReportHighlights h = report_highlights(inputs, table);
  CHECK(h.best.empty());  // each alone in its task: neither best, neither behind the other (5 < 100 says nothing)
  // A second causal LM: ranked against the first, not against the masked LM's 5.
  add_row(inputs, table, {{"task", json("language_modeling")}, {"data.reader", json("wikitext")}}, "lm2", "valid.ppl",
          PooledStat{90.0, 1.0, 3});
  h = report_highlights(inputs, table);
  REQUIRE(h.best.size() == 1);
  CHECK(h.best[0].group == "task language_modeling");
  CHECK(h.best[0].row == 2);
  CHECK(h.best[0].clearly_worse == std::vector<size_t>{0});
}

TEST_CASE("report highlights: a report of one row calls it nobody's best (no bold)") {
  ReportInputs inputs;
  ReportTable table;
  table.metrics = {"valid.ppl"};
  add_row(inputs, table, {{"data.reader", json("wikitext")}}, "only", "valid.ppl", PooledStat{100.0, 1.0, 3});
  const ReportHighlights h = report_highlights(inputs, table);
  CHECK(h.best.empty());
  CHECK_FALSE(is_best(h, "valid.ppl", 0));
}

TEST_CASE("report highlights: a row scored on part of its splits is neither best nor behind, the limit is shared") {
  // Three rows of one data: accuracies 0.50 ± 0.01 (full), 0.70 ± 0.01 (limit_eval_batches 2), 0.40 ± 0.01 (full).
  // Without the limit the 0.70 row would be best; with it, 0.50 is best and 0.40 clearly behind.
  ReportInputs inputs;
  ReportTable table;
  table.metrics = {"valid.accuracy"};
  const double acc[3] = {0.50, 0.70, 0.40};
  for (size_t r = 0; r < 3; ++r) {
    std::vector<std::pair<std::string, json>> flat = {{"data.reader", json("imdb")}};
    if (r == 1) flat.emplace_back("train.limit_eval_batches", json(2));
    add_row(inputs, table, flat, "row" + std::to_string(r), "valid.accuracy", PooledStat{acc[r], 0.01, 3});
  }
  ReportHighlights h = report_highlights(inputs, table);
  REQUIRE(h.best.size() == 1);
  CHECK(h.best[0].row == 0);
  CHECK(h.best[0].clearly_worse == std::vector<size_t>{2});
  CHECK_FALSE(is_best(h, "valid.accuracy", 1));
  CHECK(h.unranked == std::vector<size_t>{1});
  CHECK(describe_unranked(table, h) == "Not ranked: row1 (evaluated on at most train.limit_eval_batches batches of "
                                       "each split, as a smoke test is).");
  CHECK_FALSE(contains(describe_shared(h), "limit_eval_batches"));  // not every run has it

  for (RunRecord& run : inputs.runs)  // a smoke sweep: every row partial, one limit
    if (run.flat_config.size() == 1) run.flat_config.emplace_back("train.limit_eval_batches", json(2));
  h = report_highlights(inputs, table);
  CHECK(h.best.empty());
  CHECK(contains(describe_shared(h), "limit_eval_batches 2"));
}

TEST_CASE("report: a null final metric (a NaN evaluation) is left out of the mean and of n") {
  TempDir tmp("report_null_metric");
  const fs::path sweep = tmp.path / "sweep";
  write_standard_sweep(sweep);  // normalize=scaling: valid.ppl 10, 12, 14 over seeds 1..3
  const fs::path summary = sweep / "normalize-scaling_seed-3" / "summary.json";
  json s = json::parse(read_file(summary.string()));
  s["valid"]["ppl"] = nullptr;
  write_fake_file(summary, s.dump());
  write_report({{sweep.string()}, "", {"valid.ppl"}, ""});
  const json row = json::parse(read_file((sweep / "report.json").string()))["rows"][0];
  CHECK(row["metrics"]["valid.ppl"]["n"] == 2);
  CHECK(row["metrics"]["valid.ppl"]["mean"] == 11.0);
}

TEST_CASE("report: unknown metrics and axes are refused, naming what there is") {
  TempDir tmp("report_refuse");
  const fs::path sweep = tmp.path / "sweep";
  write_standard_sweep(sweep);
  try {
    write_report({{sweep.string()}, "", {"valid.ppl", "valid.accuracy"}, ""});
    FAIL("an unknown metric was accepted");
  } catch (const ConfigError& e) {
    CHECK(contains(e.what(), "valid.accuracy"));
    CHECK(contains(e.what(), "valid.ppl, valid.tokens, test.loss"));
  }
  CHECK_THROWS_AS(write_report({{sweep.string()}, "", {}, "d_model"}), ConfigError);
  CHECK_NOTHROW(write_report({{sweep.string()}, (tmp.path / "by").string(), {}, "normalize"}));
  // A DIR that is neither a sweep folder nor a run directory, and one that does not exist.
  fs::create_directories(tmp.path / "empty");
  try {
    write_report({{(tmp.path / "empty").string()}, "", {}, ""});
    FAIL("an empty folder was accepted");
  } catch (const DataError& e) {
    CHECK(contains(e.what(), "empty"));
    CHECK(contains(e.what(), "sweep.json"));
    CHECK(contains(e.what(), "config.yaml"));
  }
  CHECK_THROWS_AS(write_report({{(tmp.path / "missing").string()}, "", {}, ""}), DataError);
  write_fake_file(tmp.path / "bad" / "sweep.json", "{\"name\": \"x\"}");
  CHECK_THROWS_WITH_AS(write_report({{(tmp.path / "bad").string()}, "", {}, ""}),
                       doctest::Contains("missing \"axes\""), DataError);
}

TEST_CASE("report: locality curves and a run directory reported on its own") {
  TempDir tmp("report_locality");
  const fs::path run = tmp.path / "run";
  FakeRun r;
  r.valid_ppl = 11;
  write_fake_run(run, r);
  write_fake_file(run / "locality.json",
                  R"({"seq_len": 16, "r": [0.25, 0.5, 0.75, 1.0],
                      "layers": [{"layer": 0, "mixer": "diag", "l": [0.6, 0.8, 0.9, 1.0]}],
                      "mean": [0.6, 0.8, 0.9, 1.0]})");
  const ReportResult result = write_report({{run.string()}, "", {}, ""});
  CHECK(result.out_dir == run.string());
  const std::string svg = read_file((run / "plots" / "locality.svg").string());
  CHECK(well_formed_svg(svg));
  const json j = json::parse(read_file((run / "report.json").string()));
  CHECK(j["rows"][0]["label"] == "run");
  CHECK(j["rows"][0]["runs"][0]["dir"] == ".");
  CHECK(j["rows"][0]["metrics"]["valid.ppl"]["mean"] == 11.0);
}

TEST_CASE("report: the wall time of a resumed run directory counts every session") {
  TempDir tmp("report_resumed_wall");
  const fs::path run = tmp.path / "run";
  FakeRun r;
  r.valid_ppl = 11;
  write_fake_run(run, r);  // one session: total_s 2.0 beside 0.128 s training and 0.5 s evaluating
  json summary = json::parse(read_file((run / "summary.json").string()));
  write_report({{run.string()}, "", {}, ""});
  CHECK(json::parse(read_file((run / "report.json").string()))["rows"][0]["wall_s"]["mean"] == 2.0);
  // Resumed: its last session took 4 s, all sessions trained 30 s and evaluated 5 s.
  summary["train"]["total_s"] = 4.0;
  summary["train"]["wall_s"] = 30.0;
  summary["train"]["eval_s"] = 5.0;
  write_fake_file(run / "summary.json", summary.dump());
  write_report({{run.string()}, "", {}, ""});
  CHECK(json::parse(read_file((run / "report.json").string()))["rows"][0]["wall_s"]["mean"] == 35.0);
}

TEST_CASE("report: a run directory stopped by a signal shows its step and how to resume it") {
  TempDir tmp("report_stopped");
  const fs::path run = tmp.path / "run";
  FakeRun r;  // no summary: 20 training-log lines of max_steps 40
  r.steps = 20;
  write_fake_run(run, r);
  edit_fake_config(run, "max_steps: 20", "max_steps: 40");
  write_fake_file(run / "checkpoint.safetensors", "");  // what the resume reads, here only its name
  write_fake_file(run / "run.json", R"({"sessions": [{"command": "transnormer train x.yaml", "outcome": "stopped"}]})");
  write_report({{run.string()}, "", {}, ""});
  const json j = json::parse(read_file((run / "report.json").string()));
  CHECK(j["rows"][0]["state"] == "stopped (1 of 1 seed): step 20/40 (50 %)");
  std::string md = read_file((run / "report.md").string());
  CHECK(contains(md, "stopped by a signal before its last step; continue it with `transnormer train --resume " +
                         fs::absolute(run).string() + "`"));
  // Killed: run.json still says running, and no process holds the folder.
  write_fake_file(run / "run.json", R"({"sessions": [{"command": "transnormer train x.yaml", "outcome": "running"}]})");
  write_report({{run.string()}, "", {}, ""});
  md = read_file((run / "report.md").string());
  CHECK(contains(md, "killed (its process ended without a word) before its last step; continue it with"));
  // A smoke test keeps no checkpoint: run it again.
  fs::remove(run / "checkpoint.safetensors");
  write_fake_file(run / "run.json", R"({"sessions": [{"command": "transnormer train x.yaml --smoke", "outcome": "stopped"}]})");
  write_report({{run.string()}, "", {}, ""});
  md = read_file((run / "report.md").string());
  CHECK(contains(md, "no checkpoint to resume from (a smoke test keeps none): run it again"));
  CHECK_FALSE(contains(md, "--resume"));
}

TEST_CASE("report: seeds of a point whose settings differ (one resumed by hand to more steps) are flagged") {
  TempDir tmp("report_mixed");
  const fs::path sweep = tmp.path / "sweep";
  json points = json::array();
  for (uint64_t seed : {1, 2}) {
    const std::string dir = "seed-" + std::to_string(seed);
    FakeRun r;
    r.seed = seed;
    r.valid_ppl = 10.0 + static_cast<double>(seed);
    write_fake_run(sweep / dir, r);
    if (seed == 2) {
      edit_fake_config(sweep / dir, "max_steps: 20", "max_steps: 42");
    }
    points.push_back(fake_done_point("seed=" + std::to_string(seed), dir, {{"train.seed", seed}}));
  }
  write_fake_index(sweep, "mixed", {"train.seed"}, points);
  write_report({{sweep.string()}, "", {"valid.ppl"}, ""});
  const json j = json::parse(read_file((sweep / "report.json").string()));
  CHECK(j["rows"][0]["state"] == "done (pooled runs differ: train.max_steps 20, 42)");
}

TEST_CASE("report: a run directory with diverged.json is shown as diverged, out of the statistics") {
  TempDir tmp("report_diverged");
  std::vector<std::string> dirs;
  for (uint64_t seed : {1, 2}) {
    FakeRun r;
    r.seed = seed;
    if (seed == 1) r.valid_ppl = 10;
    const fs::path dir = tmp.path / ("seed" + std::to_string(seed));
    write_fake_run(dir, r);
    if (seed == 2) write_fake_file(dir / "diverged.json", R"({"step": 7, "error": "the loss became non-finite at step 7"})");
    dirs.push_back(dir.string());
  }
  const std::string out = (tmp.path / "out").string();
  write_report({dirs, out, {"valid.ppl"}, ""});
  const json j = json::parse(read_file(out + "/report.json"));
  REQUIRE(j["rows"].size() == 1);
  CHECK(j["rows"][0]["state"] == "diverged (1 of 2 seeds)");
  CHECK(j["rows"][0]["metrics"]["valid.ppl"]["n"] == 1);
  CHECK(j["rows"][0]["runs"][1]["problems"][0] == "diverged at step 7: the loss became non-finite at step 7");
  CHECK(contains(read_file(out + "/report.md"), "(diverged): diverged at step 7"));
}

TEST_CASE("svg plots: well-formed for empty, log-scale and category plots, and no stream is leaked") {
  LinePlot empty;
  empty.title = "nothing # here <&>";
  CHECK(well_formed_svg(render_line_plot(empty)));
  LinePlot curve;
  curve.log_y = true;
  curve.series.push_back({"a", {1, 2, 3}, {1000, 100, std::nan("")}, {900, 90, 1}, {1100, 110, 1}, false});
  curve.series.push_back({"uniform", {0, 3}, {0, 3}, {}, {}, true});
  PointPlot points;
  points.categories = {"x", "a much longer category label than the slot"};
  points.series.push_back({"s", {0, 1}, {1, 2}, {0.1, std::nan("")}});
  for (int i = 0; i < 40; ++i) {  // PLplot has a fixed number of streams: each call must free its own
    REQUIRE(well_formed_svg(render_line_plot(curve)));
    REQUIRE(well_formed_svg(render_point_plot(points)));
  }
}

TEST_CASE("report formatting: mean ± std to the std's precision, exact CSV numbers, relative links") {
  CHECK(format_stat(pool({10, 12, 14})) == "12.0 ± 2.0");
  CHECK(format_stat(pool({261.1, 261.6, 262.5})) == "261.73 ± 0.71");
  CHECK(format_stat(pool({5})) == "5");
  CHECK(format_stat(pool({3.4012, 3.4012})) == "3.4012 ± 0");
  CHECK(format_stat(pool({})) == "");
  CHECK(exact_number(0.1) == "0.1");
  CHECK(exact_number(12) == "12");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"x\"") == "\"say \"\"x\"\"\"");
  CHECK(md_cell("a|b") == "a\\|b");
  CHECK(relative_link("/r/sweep/p1", "/r/sweep") == "p1");
  CHECK(relative_link("/r/a", "/r/report") == "../a");
}

TEST_CASE("report highlights: the best mean of each metric, and the rows clearly behind it") {
  CHECK(lower_is_better("valid.ppl"));
  CHECK(lower_is_better("test.loss"));
  CHECK(lower_is_better("valid.error"));
  CHECK_FALSE(lower_is_better("valid.accuracy"));
  CHECK_FALSE(lower_is_better("dev_matched.mcc"));
  CHECK_FALSE(lower_is_better("valid.pearson"));

  // Hand-made rows: valid.ppl 10 ± 1, 13 ± 1, 11 ± 2, 14 (one seed); valid.accuracy the other way.
  ReportTable table;
  table.metrics = {"valid.ppl", "valid.accuracy"};
  const double ppl[4][3] = {{10, 1, 3}, {13, 1, 3}, {11, 2, 3}, {14, 0, 1}};
  const double acc[4][3] = {{0.80, 0.01, 3}, {0.70, 0.01, 3}, {0.79, 0.02, 3}, {0.90, 0, 1}};
  for (int r = 0; r < 4; ++r) {
    ReportRow row;
    row.label = "row" + std::to_string(r);
    row.metrics["valid.ppl"] = PooledStat{ppl[r][0], ppl[r][1], static_cast<size_t>(ppl[r][2])};
    row.metrics["valid.accuracy"] = PooledStat{acc[r][0], acc[r][1], static_cast<size_t>(acc[r][2])};
    table.rows.push_back(row);
  }
  const ReportHighlights h = report_highlights(ReportInputs{}, table);
  CHECK(h.shared.empty());  // no run has a config or a parameter count
  REQUIRE(h.best.size() == 2);
  // valid.ppl: row0 (10 ± 1) is best; row1 is 3 behind > 2 × max(1, 1); row2 is 1 behind < 2 × 2;
  // row3 has one seed, so no std and no verdict.
  CHECK(h.best[0].row == 0);
  CHECK(h.best[0].lower_is_better);
  CHECK(h.best[0].clearly_worse == std::vector<size_t>{1});
  CHECK(is_best(h, "valid.ppl", 0));
  CHECK_FALSE(is_best(h, "valid.ppl", 1));
  // valid.accuracy: higher is better, so row3 (0.90, one seed) is best, and with no std of its own
  // nothing is called clearly behind it.
  CHECK(h.best[1].row == 3);
  CHECK(h.best[1].clearly_worse.empty());
  CHECK(describe_best(table, h.best[0]) ==
        "valid.ppl (lower is better): best row0, 10.0 ± 1.0; clearly behind it (gap > 2 × the larger std): row1.");
}

TEST_CASE("report: a plots/ that is a link, or a report file that is one, is refused and what it leads to untouched") {
  TempDir tmp("report_links");
  const fs::path run = tmp.path / "run";
  FakeRun r;
  r.valid_ppl = 11;
  write_fake_run(run, r);
  write_fake_file(run / "locality.json",
                  R"({"seq_len": 16, "r": [0.5, 1.0], "layers": [], "mean": [0.8, 1.0]})");
  const fs::path out = tmp.path / "out";
  write_report({{run.string()}, out.string(), {}, ""});
  std::vector<std::string> plots;
  for (const auto& entry : fs::directory_iterator(out / "plots")) plots.push_back(entry.path().filename().string());
  REQUIRE(!plots.empty());
  // The user moves the plots into a folder of their own and leaves a link to it: every SVG there is
  // theirs now. A report that would write (or delete, as no longer drawn) them through the link is
  // refused.
  const fs::path mine = tmp.path / "mine";
  fs::rename(out / "plots", mine);
  fs::create_directory_symlink(mine, out / "plots");
  for (const std::string& name : plots) write_fake_file(mine / name, "the user's " + name);
  fs::remove(run / "locality.json");  // the next report draws no locality plot: it was deleted as stale
  const std::string refusal = (out / "plots").string() + " is a symbolic link";
  CHECK_THROWS_WITH_AS(write_report({{run.string()}, out.string(), {}, ""}), doctest::Contains(refusal.c_str()),
                       ConfigError);
  for (const std::string& name : plots) CHECK(read_file((mine / name).string()) == "the user's " + name);

  fs::remove(out / "plots");
  const fs::path victim = tmp.path / "victim.md";
  write_fake_file(victim, "the user's notes");
  fs::remove(out / "report.md");
  fs::create_symlink(victim, out / "report.md");
  CHECK_THROWS_AS(write_report({{run.string()}, out.string(), {}, ""}), ConfigError);
  CHECK(read_file(victim.string()) == "the user's notes");
}

TEST_CASE("report: run directories differing in many keys are named by their folders, --label and --columns choose") {
  TempDir tmp("report_labels");
  std::vector<std::string> dirs;
  const char* names[] = {"t1_mean", "t1_last"};
  for (int i = 0; i < 2; ++i) {
    FakeRun r;
    r.yaml_model = i == 0 ? "{d_model: 32, token_mixer: linear, dropout: 0.1, n_heads: 2}"
                          : "{d_model: 64, token_mixer: softmax, dropout: 0.2, n_heads: 4}";
    r.valid_ppl = 10 + i;
    const fs::path dir = tmp.path / names[i];
    write_fake_run(dir, r);
    dirs.push_back(dir.string());
  }
  const std::string out = (tmp.path / "out").string();
  write_report({dirs, out, {}, ""});
  json j = json::parse(read_file(out + "/report.json"));
  REQUIRE(j["rows"].size() == 2);
  CHECK(j["rows"][0]["label"] == "t1_mean");  // four keys differ: the folder names the row
  CHECK(j["rows"][1]["label"] == "t1_last");
  std::string md = read_file(out + "/report.md");
  CHECK(contains(md, "Rows are in the order the run directories were given."));
  CHECK_FALSE(contains(md, "sweep file"));  // there is none
  CHECK(contains(md, "| point | state | d_model | dropout | n_heads | token_mixer |"));

  // --label names rows by the keys given; --columns keeps those key columns only (the JSON all).
  write_report({dirs, out, {}, "", {"token_mixer"}, {"d_model", "model.token_mixer"}});
  j = json::parse(read_file(out + "/report.json"));
  CHECK(j["rows"][0]["label"] == "token_mixer=linear");
  md = read_file(out + "/report.md");
  CHECK(contains(md, "| point | state | d_model | token_mixer | valid."));
  CHECK(j["rows"][0]["keys"].size() == 4);
  CHECK(contains(read_file(out + "/report.csv"), "point,state,runs,done,model.d_model,model.token_mixer,valid"));
  write_report({dirs, out, {}, "", {"dir"}, {}});
  CHECK(json::parse(read_file(out + "/report.json"))["rows"][1]["label"] == "t1_last");
  // A name that is no varying key is refused, listing the keys.
  CHECK_THROWS_WITH_AS(write_report({dirs, out, {}, "", {}, {"lr"}}),
                       doctest::Contains("--columns lr: not a key the runs differ in; the keys are model.d_model"),
                       tn::ConfigError);
}
