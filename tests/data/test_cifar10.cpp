// The cifar10 reader on small batch files written here in the exact binary format (a label byte,
// then the red, green and blue 32 x 32 planes), with grayscale levels worked out by hand from
// Pillow's convert('L'): the archive and the unpacked folder read the same images, the 45,000 /
// 5,000 style split is deterministic per seed, and truncated files, bad labels and missing batches
// are DataErrors naming the file and record.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/platform/config/json_section.h"
#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "data/readers/cifar10.h"
#include "data/readers/cifar10_spec.h"
#include "data/readers/registry.h"
#include "tests/image_fixtures.h"
#include "tests/temp_dir.h"
#include "tests/data_error.h"

using namespace tn;
using tn::test::cifar_plain_record;
using tn::test::cifar_record;
using tn::test::Rgb;
using nlohmann::json;
using tn::test::data_error;

namespace {

int run(const std::string& command) { return std::system(command.c_str()); }

}  // namespace

TEST_CASE("cifar10: grayscale is Pillow's convert('L') luma, rounded") {
  // (19595·255 + 32768) >> 16 = 5,029,493 >> 16 = 76 (5,029,493 / 65,536 = 76.74): pure red.
  CHECK(cifar10_gray(255, 0, 0) == 76);
  // (38470·255 + 32768) >> 16 = 9,842,618 >> 16 = 150 (150.19): pure green.
  CHECK(cifar10_gray(0, 255, 0) == 150);
  // (7471·255 + 32768) >> 16 = 1,937,873 >> 16 = 29 (29.57): pure blue.
  CHECK(cifar10_gray(0, 0, 255) == 29);
  // The weights sum to 65,536: white stays 255, black 0.
  CHECK(cifar10_gray(255, 255, 255) == 255);
  CHECK(cifar10_gray(0, 0, 0) == 0);
  // 19595·10 + 38470·200 + 7471·30 = 195,950 + 7,694,000 + 224,130 = 8,114,080; + 32,768 = 8,146,848;
  // >> 16 = 124 (124.31).
  CHECK(cifar10_gray(10, 200, 30) == 124);
  // The +0x8000 rounds: G = 1 alone is 38,470 / 65,536 = 0.587 → 1; B = 1 alone is 0.114 → 0.
  CHECK(cifar10_gray(0, 1, 0) == 1);
  CHECK(cifar10_gray(0, 0, 1) == 0);
}

TEST_CASE("cifar10: a batch's records, labels and row-major pixels") {
  std::string bytes = cifar_record(3, [](int i) { return i == 0 ? Rgb{255, 0, 0} : i == 1 ? Rgb{0, 255, 0} : Rgb{0, 0, 255}; });
  bytes += cifar_record(9, [](int i) { return i == 33 ? Rgb{10, 200, 30} : Rgb{255, 255, 255}; });
  const std::vector<ImageExample> r = parse_cifar10_batch(bytes, "test_batch.bin", "x/test_batch.bin");
  REQUIRE(r.size() == 2);
  CHECK(r[0].id == "test_batch.bin#1");
  CHECK(r[0].line == 1);
  CHECK(r[0].label == 3);
  REQUIRE(r[0].pixels.size() == 1024);
  CHECK(r[0].pixels[0] == 76);
  CHECK(r[0].pixels[1] == 150);
  CHECK(r[0].pixels[1023] == 29);
  CHECK(r[1].id == "test_batch.bin#2");
  CHECK(r[1].label == 9);
  CHECK(r[1].pixels[33] == 124);  // row 1, column 1
  CHECK(r[1].pixels[32] == 255);
}

TEST_CASE("cifar10: the archive and the unpacked folder read the same images") {
  test::TempDir tmp("cifar10");
  const std::string folder = test::write_cifar_batches(tmp.path / "src", 4, "a\nb\nc\nd\ne\nf\ng\nh\ni\n  j \r\n\n");
  REQUIRE(run("tar -czf " + tmp.file("cifar-10-binary.tar.gz") + " -C " + tmp.file("src") + " cifar-10-batches-bin") == 0);
  std::filesystem::create_directories(tmp.path / "packed");
  std::filesystem::copy_file(tmp.file("cifar-10-binary.tar.gz"), tmp.file("packed/cifar-10-binary.tar.gz"));
  const Cifar10Data ref = read_cifar10(folder);
  REQUIRE(ref.train.size() == 20);
  REQUIRE(ref.test.size() == 3);
  CHECK(ref.class_names.size() == 10);
  CHECK(ref.class_names[9] == "j");  // from batches.meta.txt, trimmed
  // data_batch_1..5 in order: record 3 of data_batch_2 is train[4 + 2], gray 2*16 + 2 = 34, label 4.
  CHECK(ref.train[6].id == "data_batch_2.bin#3");
  CHECK(ref.train[6].pixels[500] == 34);
  CHECK(ref.train[6].label == 4);
  CHECK(ref.test[2].pixels[0] == 1);  // (19595 + 38470 + 7471 + 32768) >> 16 = 98,304 >> 16 = 1
  CHECK(ref.test[2].pixels[1] == 1);  // G = 1 alone rounds up
  for (const std::string& path :
       {tmp.file("cifar-10-binary.tar.gz"), tmp.file("packed"), tmp.file("src"), folder}) {
    CAPTURE(path);
    const Cifar10Data d = read_cifar10(path);
    REQUIRE(d.train.size() == ref.train.size());
    REQUIRE(d.test.size() == ref.test.size());
    for (size_t i = 0; i < d.train.size(); ++i) {
      CHECK(d.train[i].id == ref.train[i].id);
      CHECK(d.train[i].label == ref.train[i].label);
      CHECK(d.train[i].pixels == ref.train[i].pixels);
    }
    CHECK(d.test[0].pixels == ref.test[0].pixels);
    CHECK(d.class_names == ref.class_names);
  }
  // Without batches.meta.txt the standard names.
  std::filesystem::remove(tmp.file("src/cifar-10-batches-bin/batches.meta.txt"));
  CHECK(read_cifar10(folder).class_names == cifar10_class_names());
  CHECK(cifar10_class_names().front() == "airplane");
  CHECK(cifar10_class_names().back() == "truck");
  CHECK(read_cifar10(folder, false).test.empty());
}

TEST_CASE("cifar10: truncated files, bad labels and missing batches name the file and record") {
  test::TempDir tmp("cifar10_bad");
  const std::string two = cifar_plain_record(1, 0) + cifar_plain_record(1, 1);
  // 2 whole records and 100 bytes of a third: record 3 breaks.
  const std::string cut = data_error([&] { parse_cifar10_batch(two + two.substr(0, 100), "data_batch_1.bin", "d/data_batch_1.bin"); });
  CHECK(cut.find("d/data_batch_1.bin: 6246 bytes is not a whole number of 3,073-byte records") != std::string::npos);
  CHECK(cut.find("record 3 is cut short after 100 bytes") != std::string::npos);
  CHECK(data_error([&] { parse_cifar10_batch(two.substr(0, 3072), "b", "w"); }).find("record 1 is cut short") !=
        std::string::npos);
  std::string bad = two;
  bad[kCifar10Record] = 10;  // record 2's label byte
  CHECK(data_error([&] { parse_cifar10_batch(bad, "b", "w"); }).find("w: record 2 (byte offset 3073): label byte 10 is not a class 0-9") !=
        std::string::npos);
  CHECK(data_error([&] { parse_cifar10_batch("", "b", "w"); }).find("w: is empty") != std::string::npos);
  CHECK(data_error([&] { parse_cifar10_meta("a\nb\n", "m.txt"); }).find("m.txt: holds 2 class names, expected 10") !=
        std::string::npos);

  const std::string folder = test::write_cifar_batches(tmp.path / "src", 2);
  write_file_atomic(folder + "/data_batch_4.bin", two + two.substr(0, 10));
  CHECK(data_error([&] { read_cifar10(folder); }).find("data_batch_4.bin: 6156 bytes") != std::string::npos);
  // The same file inside the archive: archive:member and the record.
  REQUIRE(run("tar -czf " + tmp.file("c.tar.gz") + " -C " + tmp.file("src") + " cifar-10-batches-bin") == 0);
  const std::string in_archive = data_error([&] { read_cifar10(tmp.file("c.tar.gz")); });
  CHECK(in_archive.find("c.tar.gz:cifar-10-batches-bin/data_batch_4.bin: 6156 bytes") != std::string::npos);
  CHECK(in_archive.find("record 3 is cut short") != std::string::npos);
  std::filesystem::remove(folder + "/data_batch_4.bin");
  CHECK(data_error([&] { read_cifar10(folder); }).find("holds no cifar-10-batches-bin/data_batch_4.bin") !=
        std::string::npos);
  // A truncated archive names the archive; a missing path says so.
  const std::string bytes = read_file(tmp.file("c.tar.gz"));
  tmp.write("cut.tar.gz", bytes.substr(0, bytes.size() / 2));
  CHECK(data_error([&] { read_cifar10(tmp.file("cut.tar.gz")); }).find("cut.tar.gz") != std::string::npos);
  CHECK(data_error([&] { read_cifar10(tmp.file("absent")); }).find("no such file") != std::string::npos);
}

TEST_CASE("cifar10 spec: valid_size held out by a seeded permutation, deterministic per seed") {
  test::TempDir tmp("cifar10_spec");
  test::write_cifar_batches(tmp.path / "src", 4);
  const auto resolve = [](const json& j) { return resolve_data_spec(JsonSection(j, "data")); };
  const auto spec = resolve(json{{"reader", "cifar10"}, {"path", tmp.file("src")}, {"valid_size", 5}, {"split_seed", 7}});
  const auto* source = dynamic_cast<const ImageSource*>(spec.get());
  REQUIRE(source != nullptr);
  CHECK(spec->tokens_per_sample() == 1024);
  CHECK(source->width() == 32);
  CHECK(source->label_names() == cifar10_class_names());
  const std::vector<ImageSplit> s = source->read_images("/unused");
  REQUIRE(s.size() == 3);
  CHECK(s[0].name == "train");
  CHECK(s[0].rows.size() == 15);
  CHECK(s[1].name == "valid");
  CHECK(s[1].role == SentenceSplit::Role::Valid);
  CHECK(s[1].rows.size() == 5);
  CHECK(s[2].name == "test");
  CHECK(s[2].rows.size() == 3);
  CHECK(s[2].rows[0].id == "test_batch.bin#1");  // the test split in file order
  std::set<std::string> ids;
  for (int k = 0; k < 2; ++k)
    for (const ImageExample& e : s[k].rows) ids.insert(e.id);
  CHECK(ids.size() == 20);  // every training record once
  const auto ids_of = [](const ImageSplit& split) {
    std::vector<std::string> out;
    for (const ImageExample& e : split.rows) out.push_back(e.id);
    return out;
  };
  // The same seed picks the same images in the same order; another seed other ones.
  CHECK(ids_of(source->read_images("/unused")[1]) == ids_of(s[1]));
  const auto other = resolve(json{{"reader", "cifar10"}, {"path", tmp.file("src")}, {"valid_size", 5}, {"split_seed", 8}});
  CHECK(ids_of(dynamic_cast<const ImageSource*>(other.get())->read_images("/unused")[1]) != ids_of(s[1]));
  // valid_size 0: no valid split; test: false: no test split.
  const auto bare = resolve(json{{"reader", "cifar10"}, {"path", tmp.file("src")}, {"valid_size", 0}, {"test", false}});
  const auto only = dynamic_cast<const ImageSource*>(bare.get())->read_images("/unused");
  REQUIRE(only.size() == 1);
  CHECK(only[0].rows.size() == 20);
  // Too many held out for the data: a ConfigError naming the key.
  const auto greedy = resolve(json{{"reader", "cifar10"}, {"path", tmp.file("src")}, {"valid_size", 20}});
  CHECK_THROWS_WITH_AS(dynamic_cast<const ImageSource*>(greedy.get())->read_images("/unused"),
                       doctest::Contains("data.valid_size: 20 leaves no training image"), ConfigError);
}

TEST_CASE("cifar10 spec: defaults, JSON round trip and refused keys") {
  const auto resolve = [](const json& j) { return resolve_data_spec(JsonSection(j, "data")); };
  const auto spec = resolve(json{{"reader", "cifar10"}});
  CHECK(spec->to_json().dump() ==
        R"({"reader":"cifar10","path":"lra/cifar10","valid_size":5000,"split_seed":42,"test":true})");
  CHECK(resolve(json::parse(spec->to_json().dump()))->equals(*spec));
  CHECK_FALSE(resolve(json{{"reader", "cifar10"}, {"split_seed", 1}})->equals(*spec));
  CHECK_THROWS_WITH_AS(resolve(json{{"reader", "cifar10"}, {"valid_sise", 10}}), doctest::Contains("valid_size"),
                       ConfigIssue);
  CHECK_THROWS_AS(resolve(json{{"reader", "cifar10"}, {"valid_size", -1}}), ConfigIssue);
  CHECK_THROWS_AS(resolve(json{{"reader", "cifar10"}, {"path", ""}}), ConfigIssue);
}
