// The pathfinder reader on a small tree written here in the LRA release's layout (metadata/<n>.npy
// text files, imgs/<n>/*.png): metadata files in the order of their numbers, lines in file order,
// the 80/10/10 split deterministic per seed, max_examples, and each refusal (a short line, a label
// outside 0/1, a missing image, a PNG of another size) naming the metadata file and line.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/platform/config/json_section.h"
#include "core/error.h"
#include "core/platform/io/png_image.h"
#include "data/readers/pathfinder.h"
#include "data/readers/pathfinder_spec.h"
#include "data/readers/registry.h"
#include "tests/image_fixtures.h"
#include "tests/temp_dir.h"
#include "tests/data_error.h"

using namespace tn;
using nlohmann::json;
using tn::test::data_error;


TEST_CASE("pathfinder: metadata lines, fields 0, 1 and 3, blank lines skipped") {
  const std::vector<PathfinderEntry> e =
      parse_pathfinder_metadata("imgs/0 sample_0.png 0 1 1.0 14\r\n\nimgs/0  sample_1.png\t1 0\n", "m/0.npy");
  REQUIRE(e.size() == 2);
  CHECK(e[0].image == "imgs/0/sample_0.png");
  CHECK(e[0].label == 1);
  CHECK(e[0].line == 1);
  CHECK(e[1].image == "imgs/0/sample_1.png");
  CHECK(e[1].label == 0);
  CHECK(e[1].line == 3);
  CHECK(e[1].metadata == "m/0.npy");
  CHECK(data_error([] { parse_pathfinder_metadata("imgs/0 a.png 0 1\nimgs/0 b.png 1\n", "m/0.npy"); })
            .find("m/0.npy:2: 3 fields, expected at least 4") != std::string::npos);
  CHECK(data_error([] { parse_pathfinder_metadata("imgs/0 a.png 0 2\n", "m/0.npy"); })
            .find("m/0.npy:1: label \"2\" (field 4) is not 0 or 1") != std::string::npos);
  CHECK(data_error([] { parse_pathfinder_metadata("imgs/0 a.png 0 1.0\n", "m/0.npy"); }).find("label \"1.0\"") !=
        std::string::npos);
  CHECK(data_error([] { parse_pathfinder_metadata(std::string("\x93NUMPY\x01\x00", 8), "m/0.npy"); })
            .find("m/0.npy: is a binary NumPy file") != std::string::npos);
}

TEST_CASE("pathfinder: metadata files by number, images in order, max_examples") {
  test::TempDir tmp("pathfinder");
  test::write_pathfinder_tree(tmp.path, 5);
  const std::vector<std::string> files = pathfinder_metadata_files(tmp.path.string());
  REQUIRE(files.size() == 2);
  CHECK(std::filesystem::path(files[0]).filename() == "2.npy");
  const std::vector<ImageExample> all = read_pathfinder(tmp.path.string(), 32);
  REQUIRE(all.size() == 10);
  CHECK(all[0].id == "imgs/2/sample_0.png");
  CHECK(all[5].id == "imgs/10/sample_0.png");
  CHECK(all[5].line == 1);
  CHECK(all[6].label == 1);
  REQUIRE(all[6].pixels.size() == 1024);
  CHECK(all[6].pixels[0] == 1001 % 256);  // image (10, 1): seed 1001
  CHECK(all[6].pixels[1023] == (1023 + 1001) % 256);
  const std::vector<ImageExample> first = read_pathfinder(tmp.path.string(), 32, 7);
  REQUIRE(first.size() == 7);
  CHECK(first[6].id == "imgs/10/sample_1.png");
  CHECK(read_pathfinder(tmp.path.string(), 32, 100).size() == 10);
}

TEST_CASE("pathfinder: each refusal names the metadata file and line") {
  test::TempDir tmp("pathfinder_bad");
  test::write_pathfinder_tree(tmp.path, 3);
  const std::string root = tmp.path.string();
  const auto err = [&] { return data_error([&] { read_pathfinder(root, 32); }); };
  tmp.write("metadata/2.npy", "imgs/2 sample_0.png 0 0\nimgs/2 sample_1.png 1\n");
  CHECK(err().find("metadata/2.npy:2: 3 fields, expected at least 4") != std::string::npos);
  tmp.write("metadata/2.npy", "imgs/2 sample_0.png 0 0\nimgs/2 sample_1.png 1 -1\n");
  CHECK(err().find("metadata/2.npy:2: label \"-1\"") != std::string::npos);
  tmp.write("metadata/2.npy", "imgs/2 sample_0.png 0 0\nimgs/2 sample_1.png 1 1\nimgs/2 sample_9.png 9 1\n");
  CHECK(err().find("metadata/2.npy:3: the image imgs/2/sample_9.png is missing") != std::string::npos);
  tmp.write("metadata/2.npy", "imgs/2 sample_0.png 0 0\nimgs/2 sample_1.png 1 1\n");
  test::write_pattern_png(tmp.file("imgs/2/sample_1.png"), 16, 0);
  CHECK(err().find("metadata/2.npy:2: imgs/2/sample_1.png is 16x16, expected 32x32") != std::string::npos);
  tmp.write("imgs/2/sample_1.png", "not a png");
  CHECK(err().find("metadata/2.npy:2: ") != std::string::npos);
  CHECK(err().find("not a readable PNG") != std::string::npos);
  tmp.write("metadata/x1.npy", "");
  CHECK(err().find("x1.npy: a metadata file's name is its batch number") != std::string::npos);
  std::filesystem::remove_all(tmp.path / "metadata");
  CHECK(err().find("metadata: no such folder") != std::string::npos);
  std::filesystem::create_directories(tmp.path / "metadata");
  CHECK(err().find("holds no <n>.npy metadata file") != std::string::npos);
  tmp.write("metadata/0.npy", "\n");
  CHECK(err().find("list no image") != std::string::npos);
}

TEST_CASE("pathfinder spec: 80/10/10 by a seeded permutation, deterministic per seed") {
  test::TempDir tmp("pathfinder_spec");
  test::write_pathfinder_tree(tmp.path, 10);
  const auto resolve = [](const json& j) { return resolve_data_spec(JsonSection(j, "data")); };
  const auto spec = resolve(json{{"reader", "pathfinder"}, {"dir", tmp.path.string()}});
  const auto* source = dynamic_cast<const ImageSource*>(spec.get());
  REQUIRE(source != nullptr);
  CHECK(source->dataset_name() == "Pathfinder-32");
  CHECK(source->label_names() == std::vector<std::string>{"0", "1"});
  CHECK(spec->tokens_per_sample() == 1024);
  const std::vector<ImageSplit> s = source->read_images("/unused");
  REQUIRE(s.size() == 3);
  CHECK(s[0].rows.size() == 16);
  CHECK(s[1].rows.size() == 2);
  CHECK(s[2].rows.size() == 2);
  CHECK(s[2].role == SentenceSplit::Role::Test);
  std::set<std::string> ids;
  for (const ImageSplit& split : s)
    for (const ImageExample& e : split.rows) ids.insert(e.id);
  CHECK(ids.size() == 20);
  const auto ids_of = [](const ImageSplit& split) {
    std::vector<std::string> out;
    for (const ImageExample& e : split.rows) out.push_back(e.id);
    return out;
  };
  CHECK(ids_of(source->read_images("/unused")[0]) == ids_of(s[0]));
  const auto reseeded = resolve(json{{"reader", "pathfinder"}, {"dir", tmp.path.string()}, {"split_seed", 1}});
  CHECK(ids_of(dynamic_cast<const ImageSource*>(reseeded.get())->read_images("/unused")[0]) != ids_of(s[0]));
  // max_examples first, then the split: 10 images → 8 / 1 / 1; a zero share leaves its split out.
  const auto small = resolve(json{{"reader", "pathfinder"}, {"dir", tmp.path.string()}, {"max_examples", 10},
                                  {"split", {0.9, 0.1, 0}}});
  const auto few = dynamic_cast<const ImageSource*>(small.get())->read_images("/unused");
  REQUIRE(few.size() == 2);
  CHECK(few[0].rows.size() == 9);
  CHECK(few[1].name == "valid");
  for (const ImageSplit& split : few)
    for (const ImageExample& e : split.rows) CHECK(e.id.find("imgs/2/") == 0);  // the first 10: all of 2.npy
}

TEST_CASE("pathfinder spec: defaults, JSON round trip and refused values") {
  const auto resolve = [](const json& j) { return resolve_data_spec(JsonSection(j, "data")); };
  const auto spec = resolve(json{{"reader", "pathfinder"}});
  CHECK(spec->to_json().dump() ==
        R"({"reader":"pathfinder","dir":"lra/pathfinder32/curv_contour_length_14","image_size":32,)"
        R"("split":[0.8,0.1,0.1],"split_seed":42,"max_examples":null})");
  CHECK(resolve(json::parse(spec->to_json().dump()))->equals(*spec));
  const auto capped = resolve(json{{"reader", "pathfinder"}, {"max_examples", 100}});
  CHECK_FALSE(capped->equals(*spec));
  CHECK(resolve(json::parse(capped->to_json().dump()))->equals(*capped));
  CHECK_THROWS_WITH_AS(resolve(json{{"reader", "pathfinder"}, {"split", {0.8, 0.1}}}),
                       doctest::Contains("data.split: must be a list of three numbers"), ConfigIssue);
  CHECK_THROWS_WITH_AS(resolve(json{{"reader", "pathfinder"}, {"split", {0.8, 0.1, 0.2}}}),
                       doctest::Contains("data.split: sums to"), ConfigIssue);
  CHECK_THROWS_AS(resolve(json{{"reader", "pathfinder"}, {"split", {0.0, 0.5, 0.5}}}), ConfigIssue);
  CHECK_THROWS_AS(resolve(json{{"reader", "pathfinder"}, {"split", {1.2, -0.1, -0.1}}}), ConfigIssue);
  CHECK_THROWS_AS(resolve(json{{"reader", "pathfinder"}, {"max_examples", 0}}), ConfigIssue);
  CHECK_THROWS_WITH_AS(resolve(json{{"reader", "pathfinder"}, {"max_example", 5}}), doctest::Contains("max_examples"),
                       ConfigIssue);
}

TEST_CASE("pathfinder: image paths stay inside the dataset's root, refused at metadata:line") {
  test::TempDir tmp("pathfinder_escape");
  test::write_pathfinder_tree(tmp.path / "set", 2);
  const std::string root = (tmp.path / "set").string();
  const auto err = [&] { return data_error([&] { read_pathfinder(root, 32); }); };
  // A PNG beside the dataset, which a line or a link could reach.
  test::write_pattern_png(tmp.file("outside.png"), 32, 7);
  for (const std::string& line : {"../.. etc/shadow 1 0", "/proc/self environ 1 0", "imgs/2 ../../outside.png 1 0",
                                  "imgs/2/.. ../outside.png 1 0", "/ etc/passwd 1 1"}) {
    CAPTURE(line);
    tmp.write("set/metadata/2.npy", "imgs/2 sample_0.png 0 0\n" + line + "\n");
    const std::string message = err();
    CHECK(message.find("metadata/2.npy:2: the image path") != std::string::npos);
    CHECK(message.find("leaves the dataset") != std::string::npos);
  }
  // A symbolic link inside the set that leads out: to a PNG outside, to /proc/self/environ.
  tmp.write("set/metadata/2.npy", "imgs/2 sample_0.png 0 0\nimgs/2 sample_1.png 1 1\n");
  std::filesystem::remove(tmp.path / "set/imgs/2/sample_1.png");
  std::filesystem::create_symlink(tmp.file("outside.png"), tmp.path / "set/imgs/2/sample_1.png");
  std::string message = err();
  CHECK(message.find("metadata/2.npy:2: the image imgs/2/sample_1.png leads outside the dataset's root") !=
        std::string::npos);
  std::filesystem::remove(tmp.path / "set/imgs/2/sample_1.png");
  std::filesystem::create_symlink("/proc/self/environ", tmp.path / "set/imgs/2/sample_1.png");
  CHECK(err().find("leads outside the dataset's root") != std::string::npos);
  // A link that stays inside is read; so is a root that is itself a link.
  std::filesystem::remove(tmp.path / "set/imgs/2/sample_1.png");
  std::filesystem::create_symlink("sample_0.png", tmp.path / "set/imgs/2/sample_1.png");
  std::filesystem::create_directory_symlink(tmp.path / "set", tmp.path / "link");
  CHECK(read_pathfinder(tmp.file("link"), 32).size() == 4);
  // A metadata file that is a link out of the dataset is not read.
  tmp.write("elsewhere.npy", "imgs/2 sample_0.png 0 0\n");
  std::filesystem::create_symlink(tmp.file("elsewhere.npy"), tmp.path / "set/metadata/3.npy");
  CHECK(err().find("the metadata file leads outside the dataset's root") != std::string::npos);
}
