// A safetensors file's header is checked against the file before anything it sizes is allocated
// (hostile-input campaign, class 2): the header length against the file's size and the format's
// 100,000,000-byte limit, the header readable alone (read_safetensors_header), the tensors read
// from the file one by one rather than the whole file first, and a FIFO refused without blocking.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "core/platform/io/safetensors.h"
#include "tests/temp_dir.h"

using namespace tn;
using tn::test::TempDir;

namespace {

/// The DataError message loading `path` gives ("" when it loads).
std::string load_error(const std::string& path) {
  try {
    (void)load_safetensors(path);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

/// 8-byte little-endian `length`, then `header`.
std::string with_length(uint64_t length, const std::string& header) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &length, 8);
  return out + header;
}

}  // namespace

TEST_CASE("safetensors limits: a header length over the format's 100,000,000 bytes is refused before it is read") {
  TempDir dir("st_header_cap");
  const std::string path = dir.file("huge_header.safetensors");
  {
    std::ofstream out(path, std::ios::binary);
    out << with_length(120'000'000, "{}");
  }
  // A sparse file of 130 MB: the header length lies within it, so only the cap refuses it.
  std::filesystem::resize_file(path, 130'000'000);
  const std::string message = load_error(path);
  INFO(message);
  CHECK(message.find(path) != std::string::npos);
  CHECK(message.find("header length 120000000 is over the format's limit of 100000000 bytes") != std::string::npos);
  CHECK_THROWS_WITH_AS(read_safetensors_header(path), doctest::Contains("over the format's limit"), DataError);
}

TEST_CASE("safetensors limits: the header reads alone, with every entry's shape, dtype and range") {
  TempDir dir("st_header_only");
  const std::string path = dir.file("t.safetensors");
  save_safetensors(path, {{"a", Tensor::zeros({3, 4})}, {"b", Tensor::zeros({5})}}, {{"transnormer.config", "{}"}});
  const SafetensorsHeader header = read_safetensors_header(path);
  REQUIRE(header.entries.size() == 2);
  CHECK(header.entries[0].name == "a");
  CHECK(header.entries[0].shape == Shape{3, 4});
  CHECK(header.entries[0].dtype == "F32");
  CHECK(header.entries[1].begin == 48);
  CHECK(header.values() == 17);
  CHECK(header.metadata.at("transnormer.config") == "{}");
  CHECK(header.data_offset + 68 == std::filesystem::file_size(path));
  // A header that claims a large tensor whose data the (sparse) file holds reads without its data.
  const std::string big = dir.file("big.safetensors");
  const std::string text = R"({"w":{"dtype":"F32","shape":[4096,4096],"data_offsets":[0,67108864]}})";
  {
    std::ofstream out(big, std::ios::binary);
    out << with_length(text.size(), text);
  }
  std::filesystem::resize_file(big, 8 + text.size() + 67108864);
  const SafetensorsHeader claimed = read_safetensors_header(big);
  CHECK(claimed.values() == 4096 * 4096);
}

TEST_CASE("safetensors limits: a FIFO or a file cut short while read is refused naming it, without blocking") {
  TempDir dir("st_fifo");
  const std::string fifo = dir.file("pipe.safetensors");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string message = load_error(fifo);  // no writer: an open that blocked would hang here
  CHECK(message.find(fifo) != std::string::npos);
  CHECK(message.find("not a regular file") != std::string::npos);
}

TEST_CASE("safetensors limits: tensors of every dtype still load when read one by one from the file") {
  TempDir dir("st_pieces");
  const std::string path = dir.file("pieces.safetensors");
  // 300,000 BF16 values: more than one piece of the converting read.
  const int64_t n = 300000;
  std::string data(static_cast<size_t>(2 * n), '\0');
  for (int64_t i = 0; i < n; ++i) {
    const float value = static_cast<float>(i % 251);
    uint32_t bits = 0;
    std::memcpy(&bits, &value, 4);
    const uint16_t top = static_cast<uint16_t>(bits >> 16);
    std::memcpy(data.data() + 2 * i, &top, 2);
  }
  const std::string header =
      R"({"x":{"dtype":"BF16","shape":[300000],"data_offsets":[0,600000]}})";
  {
    std::ofstream out(path, std::ios::binary);
    out << with_length(header.size(), header) << data;
  }
  const SafetensorsFile file = load_safetensors(path);
  const Tensor& x = file.tensors.at("x");
  REQUIRE(x.numel() == n);
  bool same = true;
  for (int64_t i = 0; i < n; ++i) same = same && x.data()[i] == static_cast<float>(i % 251);
  CHECK(same);
}
