// `data stats` on the image readers, on small datasets in the published layouts
// (tests/image_fixtures.h), with every number worked out by hand: examples, label counts, the
// majority baseline, the image size, the pixel levels' mean and std; and the PNG dump (names with
// split, index and label, nearest-neighbour enlargement read back pixel by pixel).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/png_image.h"
#include "experiments/inspection/data_stats.h"
#include "experiments/inspection/image_dump.h"
#include "experiments/inspection/image_stats.h"
#include "experiments/spec/spec.h"
#include "tests/image_fixtures.h"
#include "tests/temp_dir.h"

using namespace tn;

namespace {

/// A spec of a small encoder with `data` as its data section, written into `tmp` and loaded.
ExperimentSpec image_spec(const test::TempDir& tmp, const std::string& data) {
  const std::string path = tmp.write(
      "spec.yaml", "task: sequence_classification\nmodel: {arch: encoder, d_model: 16, n_layers: 1, n_heads: 2,"
                   " max_positions: 1024, head: classification, num_classes: 10}\ntrain: {max_steps: 1}\ndata: " + data +
                   "\n");
  return load_spec(path);
}

}  // namespace

TEST_CASE("image stats: CIFAR-10 counts, majority baseline and pixel moments by hand") {
  test::TempDir tmp("stats_cifar");
  test::write_cifar_batches(tmp.path, 2);
  const ExperimentSpec spec = image_spec(tmp, "{reader: cifar10, path: " + tmp.path.string() + ", valid_size: 0}");
  const nlohmann::ordered_json s = data_stats(spec, "/unused");
  CHECK(s["reader"] == "cifar10");
  CHECK(s["dataset"] == "CIFAR-10");
  CHECK(s["image"]["width"] == 32);
  CHECK(s["image"]["height"] == 32);
  // Train: record k of batch b has label (b + k) % 10: labels 1,2 2,3 3,4 4,5 5,6. Classes 2-5 hold
  // two each; the first of them, bird (2), is the majority class: 2 of 10.
  CHECK(s["majority_class"] == "bird");
  const auto& train = s["splits"]["train"];
  CHECK(train["examples"] == 10);
  CHECK(train["labels"]["airplane"] == 0);
  CHECK(train["labels"]["automobile"] == 1);
  CHECK(train["labels"]["bird"] == 2);
  CHECK(train["majority_accuracy"].get<double>() == doctest::Approx(0.2));
  // Levels b*16 + k: 16 17 32 33 48 49 64 65 80 81, mean 48.5; squared deviations
  // 2·(32.5² + 31.5² + 16.5² + 15.5² + 0.5²) = 5,122.5 over 10 = 512.25, std 22.6329.
  CHECK(train["pixel_mean"].get<double>() == doctest::Approx(48.5));
  CHECK(train["pixel_std"].get<double>() == doctest::Approx(std::sqrt(512.25)));
  // Test: labels cat, truck, airplane; no bird. Levels: 76 + 150 + 1,022·29 (red, green, blue),
  // 124 + 1,023·255, 1,024·1 = 291,877 over 3,072 pixels.
  const auto& test_split = s["splits"]["test"];
  CHECK(test_split["examples"] == 3);
  CHECK(test_split["labels"]["cat"] == 1);
  CHECK(test_split["majority_accuracy"].get<double>() == 0.0);
  CHECK(test_split["pixel_mean"].get<double>() == doctest::Approx(291877.0 / 3072.0));
  const std::string table = data_stats_table(s);
  CHECK(table.find("CIFAR-10 images 32x32, majority class bird") != std::string::npos);
  CHECK(table.find("pixel mean") != std::string::npos);
  CHECK(table.find("48.50") != std::string::npos);
  // A valid split: 8 + 2 of the 10.
  const ExperimentSpec held = image_spec(tmp, "{reader: cifar10, path: " + tmp.path.string() + ", valid_size: 2}");
  const nlohmann::ordered_json h = data_stats(held, "/unused");
  CHECK(h["splits"]["train"]["examples"] == 8);
  CHECK(h["splits"]["valid"]["examples"] == 2);
}

TEST_CASE("image stats: Pathfinder counts and uniform pixel levels") {
  test::TempDir tmp("stats_pathfinder");
  test::write_pathfinder_tree(tmp.path, 5);
  const ExperimentSpec spec =
      image_spec(tmp, "{reader: pathfinder, dir: " + tmp.path.string() + ", split: [1.0, 0.0, 0.0]}");
  const nlohmann::ordered_json s = data_stats(spec, "/unused");
  CHECK(s["dataset"] == "Pathfinder-32");
  REQUIRE(s["splits"].size() == 1);
  const auto& train = s["splits"]["train"];
  CHECK(train["examples"] == 10);
  CHECK(train["labels"]["0"] == 6);  // i % 2 for i = 0..4 in each of two files
  CHECK(train["labels"]["1"] == 4);
  CHECK(s["majority_class"] == "0");
  CHECK(train["majority_accuracy"].get<double>() == doctest::Approx(0.6));
  // Each image holds every level 0..255 exactly four times: mean 127.5, std sqrt((256² - 1) / 12).
  CHECK(train["pixel_mean"].get<double>() == doctest::Approx(127.5));
  CHECK(train["pixel_std"].get<double>() == doctest::Approx(std::sqrt((256.0 * 256.0 - 1.0) / 12.0)));
  const nlohmann::ordered_json official =
      data_stats(image_spec(tmp, "{reader: pathfinder, dir: " + tmp.path.string() + "}"), "/unused");
  CHECK(official["splits"]["train"]["examples"] == 8);
  CHECK(official["splits"]["valid"]["examples"] == 1);
  CHECK(official["splits"]["test"]["examples"] == 1);
}

TEST_CASE("image stats: the PNG dump, named by split, index and label, enlarged by nearest neighbour") {
  test::TempDir tmp("stats_dump");
  test::write_cifar_batches(tmp.path, 2);
  const ExperimentSpec spec = image_spec(tmp, "{reader: cifar10, path: " + tmp.path.string() + ", valid_size: 2}");
  DataStatsOptions options;
  options.images = 2;
  options.images_dir = tmp.file("dump");
  const nlohmann::ordered_json s = data_stats(spec, "/unused", options);
  CHECK(s["images"]["files"] == 6);  // 2 from each of train, valid, test
  CHECK(s["images"]["scale"] == 8);
  CHECK(data_stats_table(s).find("wrote 6 images (x8) to") != std::string::npos);
  // Test example 0 is test_batch's first record (cat): pixel 0 red (76), pixel 1 green (150), the
  // rest blue (29); at x8 the 256 x 256 image holds 8 x 8 blocks.
  const GrayImage cat = read_png_gray(tmp.file("dump/test_00000_label3_cat.png"));
  REQUIRE(cat.width == 256);
  REQUIRE(cat.height == 256);
  CHECK(cat.pixels[0] == 76);
  CHECK(cat.pixels[7 * 256 + 7] == 76);
  CHECK(cat.pixels[8] == 150);
  CHECK(cat.pixels[7 * 256 + 15] == 150);
  CHECK(cat.pixels[16] == 29);
  CHECK(cat.pixels[8 * 256] == 29);
  CHECK(std::filesystem::exists(tmp.file("dump/test_00001_label9_truck.png")));
  int64_t train_files = 0, valid_files = 0;
  for (const auto& f : std::filesystem::directory_iterator(tmp.file("dump"))) {
    train_files += f.path().filename().string().rfind("train_0000", 0) == 0;
    valid_files += f.path().filename().string().rfind("valid_0000", 0) == 0;
  }
  CHECK(train_files == 2);
  CHECK(valid_files == 2);
  // Asked without a folder, or of a reader without images: ConfigError before anything is read.
  options.images_dir = "";
  CHECK_THROWS_WITH_AS(data_stats(spec, "/unused", options), doctest::Contains("--images-dir"), ConfigError);
  options.images_dir = tmp.file("dump");
  const ExperimentSpec text = image_spec(tmp, "{reader: listops, dir: " + tmp.file("absent") + ", max_length: 64}");
  CHECK_THROWS_WITH_AS(data_stats(text, "/unused", options), doctest::Contains("the listops reader yields no images"),
                       ConfigError);
}

TEST_CASE("image dump: file names and nearest-neighbour enlargement") {
  const std::vector<std::string> cifar = {"airplane", "auto mobile"};
  CHECK(dump_file_name("train", 3, 0, cifar) == "train_00003_label0_airplane.png");
  CHECK(dump_file_name("valid", 12, 1, cifar) == "valid_00012_label1_auto-mobile.png");
  CHECK(dump_file_name("test", 0, 1, {"0", "1"}) == "test_00000_label1.png");
  const GrayImage small{2, 1, {10, 200}};
  const GrayImage big = upscale_nearest(small, 3);
  CHECK(big.width == 6);
  CHECK(big.height == 3);
  CHECK(big.pixels == std::vector<uint8_t>{10, 10, 10, 200, 200, 200, 10, 10, 10, 200, 200, 200, 10, 10, 10, 200, 200, 200});
  CHECK(upscale_nearest(small, 1).pixels == small.pixels);
  const PixelMoments m = pixel_moments({ImageExample{"a", {0, 255}, 0, 1}, ImageExample{"b", {0, 255}, 1, 2}});
  CHECK(m.mean == 127.5);
  CHECK(m.std == 127.5);
}
