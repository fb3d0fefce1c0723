// `transnormer data stats` on the image readers through the CLI: the table and the JSON for a
// Pathfinder root and CIFAR-10 batches in their published layouts (tests/image_fixtures.h), the
// PNG dump, and bad input (a truncated batch, --images without a folder, a malformed metadata
// line) exiting 2 with the file and record or line.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/platform/io/png_image.h"
#include "tests/app/cli_runner.h"
#include "tests/image_fixtures.h"

using namespace tn::test;
using nlohmann::json;

namespace {
const std::string kModel =
    "model: {arch: encoder, d_model: 16, n_layers: 1, n_heads: 2, max_positions: 1024, head: classification,"
    " num_classes: 10}\ntrain: {max_steps: 1}\n";
}  // namespace

TEST_CASE("cli: data stats on Pathfinder and CIFAR-10, with the images written as PNG") {
  const std::string dir = scratch_dir("image_stats");
  write_pathfinder_tree(dir + "/pf", 10);
  write_text(dir + "/pf.yaml", "task: sequence_classification\n" + kModel + "data: {reader: pathfinder, dir: " + dir +
                                   "/pf, max_examples: 10}\n");
  CliResult r = run_cli("data stats " + dir + "/pf.yaml --out " + dir + "/pf.json --images 1 --images-dir " + dir +
                            "/png --images-scale 4",
                        dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("Pathfinder-32 images 32x32") != std::string::npos);
  CHECK(r.out.find("wrote 3 images (x4)") != std::string::npos);
  const json st = json::parse(slurp(dir + "/pf.json"));
  CHECK(st["splits"]["train"]["examples"] == 8);
  CHECK(st["splits"]["train"]["pixel_mean"].get<double>() == doctest::Approx(127.5));
  int64_t pngs = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir + "/png")) {
    const tn::GrayImage image = tn::read_png_gray(f.path().string());
    CHECK(image.width == 128);
    pngs += 1;
  }
  CHECK(pngs == 3);

  write_cifar_batches(dir + "/cifar", 3);
  write_text(dir + "/cifar.yaml", "task: sequence_classification\n" + kModel + "data: {reader: cifar10, path: " + dir +
                                      "/cifar, valid_size: 5}\n");
  r = run_cli("data stats " + dir + "/cifar.yaml", dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("CIFAR-10 images 32x32") != std::string::npos);
  CHECK(r.out.find("airplane:") != std::string::npos);
}

TEST_CASE("cli: data stats refuses bad image data and options with exit 2, naming file and record or line") {
  const std::string dir = scratch_dir("image_stats_bad");
  const std::string batches = write_cifar_batches(dir + "/cifar", 2);
  write_text(batches + "/data_batch_2.bin", cifar_plain_record(2, 0) + cifar_plain_record(2, 1).substr(0, 500));
  write_text(dir + "/cifar.yaml", "task: sequence_classification\n" + kModel + "data: {reader: cifar10, path: " + dir +
                                      "/cifar, valid_size: 1}\n");
  CliResult r = run_cli("data stats " + dir + "/cifar.yaml", dir);
  CHECK(r.code == 2);
  CHECK(r.err.find("data_batch_2.bin: 3573 bytes is not a whole number of 3,073-byte records") != std::string::npos);
  CHECK(r.err.find("record 2 is cut short after 500 bytes") != std::string::npos);
  r = run_cli("data stats " + dir + "/cifar.yaml --images 2", dir);
  CHECK(r.code == 2);
  CHECK(r.err.find("--images-dir") != std::string::npos);
  write_pathfinder_tree(dir + "/pf", 2);
  write_text(dir + "/pf/metadata/2.npy", "imgs/2 sample_0.png 0 0\nimgs/2 sample_1.png 1 7\n");
  write_text(dir + "/pf.yaml", "task: sequence_classification\n" + kModel + "data: {reader: pathfinder, dir: " + dir +
                                   "/pf}\n");
  r = run_cli("data stats " + dir + "/pf.yaml", dir);
  CHECK(r.code == 2);
  CHECK(r.err.find("metadata/2.npy:2: label \"7\"") != std::string::npos);
}
