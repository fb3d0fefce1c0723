#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/safetensors.h"
#include "tests/temp_dir.h"
#include "tests/test_paths.h"

using namespace tn;
using tn::test::TempDir;
namespace fs = std::filesystem;

namespace {

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// A safetensors file from a literal header and data section.
std::string st_bytes(const std::string& header, const std::string& data) {
  const uint64_t length = header.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &length, 8);
  return out + header + data;
}

template <typename T>
std::string raw(std::initializer_list<T> values) {
  std::string out;
  for (T value : values) out.append(reinterpret_cast<const char*>(&value), sizeof(T));
  return out;
}

/// The DataError message `path` produces when loaded ("" when it loads).
std::string load_error(const std::string& path) {
  try {
    load_safetensors(path);
  } catch (const DataError& err) {
    return err.what();
  }
  return "";
}

/// Writes `bytes` to `path` and checks that loading throws a DataError naming the path and
/// containing `expect`.
void check_rejected(const std::string& path, const std::string& bytes, const std::string& expect) {
  write_bytes(path, bytes);
  const std::string message = load_error(path);
  INFO("message: " << message);
  CHECK(message.find(path) != std::string::npos);
  CHECK(message.find(expect) != std::string::npos);
}

}  // namespace

TEST_CASE("safetensors: loads the dec_t1 golden checkpoint") {
  const std::string path = test::golden_root() + "/dec_t1/model.safetensors";
  const SafetensorsFile file = load_safetensors(path);

  REQUIRE(file.tensors.count("embed_tokens.weight") == 1);
  const Tensor& embed = file.tensors.at("embed_tokens.weight");
  CHECK(embed.shape() == Shape{100, 64});
  // First values, read independently with Python's struct module.
  CHECK(embed.data()[0] == doctest::Approx(-0.028300529345870018).epsilon(1e-7));
  CHECK(embed.data()[1] == doctest::Approx(0.1538429856300354).epsilon(1e-7));
  CHECK(embed.data()[2] == doctest::Approx(-0.15085335075855255).epsilon(1e-7));
  CHECK(file.tensors.at("layers.0.channel_mixer.w3.weight").shape() == Shape{64, 170});
  CHECK(file.tensors.at("layers.0.channel_mixer.w1.bias").shape() == Shape{170});
  CHECK(file.tensors.at("layers.0.token_mixer.urpe.theta").shape() == Shape{8});
  CHECK(file.tensors.at("layers.0.token_mixer.urpe.householder").shape() == Shape{16});

  REQUIRE(file.metadata.count("transnormer.config") == 1);
  const auto config = nlohmann::json::parse(file.metadata.at("transnormer.config"));
  CHECK(config.at("arch") == "decoder");
  CHECK(config.at("d_model") == 64);
}

TEST_CASE("safetensors: re-saving a reference file is byte-identical") {
  TempDir dir("st_resave");
  for (const std::string rel : {"dec_t1/model.safetensors", "dec_softmax/model.safetensors",
                                "dec_softmax/grads.safetensors"}) {
    const std::string original = test::golden_root() + "/" + rel;
    const SafetensorsFile file = load_safetensors(original);
    const std::string copy = dir.file("copy.safetensors");
    save_safetensors(copy, file.tensors, file.metadata);
    INFO(rel);
    CHECK(read_file(copy) == read_file(original));
  }
}

TEST_CASE("safetensors: round trip with non-ASCII metadata, scalars and empty tensors") {
  TempDir dir("st_roundtrip");
  const std::string path = dir.file("round.safetensors");
  std::map<std::string, Tensor> tensors;
  tensors["b.weight"] = Tensor::from({2, 3}, {1.5f, -2.0f, 0.0f, 1e-30f, 3.25f, -0.0f});
  tensors["a.scalar"] = Tensor::from({}, {42.0f});
  tensors["c.empty"] = Tensor::empty({0, 3});
  tensors["d.odd"] = Tensor::from({3}, {std::numeric_limits<float>::infinity(), 7.0f, -1.0f});
  const std::map<std::string, std::string> metadata = {
      {"transnormer.vocab", R"(["<pad>","<eos>","<unk>","café","日本語","😀","\"q\"","a\\b"])"},
      {"transnormer.config", "{\"arch\": \"decoder\"}\nline two\ttab"},
      {"ключ", "значение"},
  };
  save_safetensors(path, tensors, metadata);

  const SafetensorsFile back = load_safetensors(path);
  CHECK(back.metadata == metadata);
  REQUIRE(back.tensors.size() == tensors.size());
  for (const auto& entry : tensors) {
    const std::string& name = entry.first;
    const Tensor& tensor = entry.second;
    INFO(name);
    const Tensor& loaded = back.tensors.at(name);
    CHECK(loaded.shape() == tensor.shape());
    CHECK(loaded.to_vector() == tensor.to_vector());
  }

  // Layout: header length is a multiple of 8, space-padded, ASCII only (Python's ensure_ascii),
  // tensors in name order with offsets tiling the data section, __metadata__ last.
  const std::string bytes = read_file(path);
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  CHECK(header_len % 8 == 0);
  const std::string header = bytes.substr(8, header_len);
  for (unsigned char c : header) CHECK(c < 0x80);
  CHECK(header.find("caf\\u00e9") != std::string::npos);
  CHECK(header.find("\\ud83d\\ude00") != std::string::npos);  // 😀 as a surrogate pair
  CHECK(header.rfind("{\"a.scalar\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]},", 0) ==
        0);
  CHECK(header.find("\"c.empty\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[28,28]}") !=
        std::string::npos);
  CHECK(header.find("\"__metadata__\"") > header.find("\"d.odd\""));
  CHECK(bytes.size() == 8 + header_len + 4 * (1 + 6 + 0 + 3));
}

TEST_CASE("safetensors: metadata is left out when empty, and a re-save replaces the file") {
  TempDir dir("st_nometa");
  const std::string path = dir.file("plain.safetensors");
  save_safetensors(path, {{"x", Tensor::from({2}, {1.0f, 2.0f})}}, {});
  CHECK(read_file(path).find("__metadata__") == std::string::npos);
  CHECK(load_safetensors(path).metadata.empty());
  save_safetensors(path, {{"y", Tensor::from({1}, {3.0f})}}, {{"k", "v"}});
  const SafetensorsFile file = load_safetensors(path);
  CHECK(file.tensors.count("x") == 0);
  CHECK(file.tensors.at("y").to_vector() == std::vector<float>{3.0f});
  CHECK(file.metadata.at("k") == "v");
}

TEST_CASE("safetensors: converts every accepted dtype to f32") {
  TempDir dir("st_dtypes");
  const std::string path = dir.file("dtypes.safetensors");
  std::string data;
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  auto add = [&](const std::string& name, const std::string& dtype, const std::string& bytes,
                 int64_t count) {
    header[name] = {{"dtype", dtype},
                    {"shape", {count}},
                    {"data_offsets", {data.size(), data.size() + bytes.size()}}};
    data += bytes;
  };
  add("f32", "F32", raw<float>({1.5f, -2.25f}), 2);
  add("f64", "F64", raw<double>({0.1, -1e300}), 2);
  // F16: 1.0, -2.0, 65504 (max), smallest subnormal 2^-24, +inf, 0.
  add("f16", "F16", raw<uint16_t>({0x3C00, 0xC000, 0x7BFF, 0x0001, 0x7C00, 0x0000}), 6);
  // BF16: 1.0, -3.0, 1e-40-ish subnormal bit pattern 0x0001 -> 2^-133.
  add("bf16", "BF16", raw<uint16_t>({0x3F80, 0xC040, 0x0001}), 3);
  add("i64", "I64", raw<int64_t>({-5, int64_t{1} << 40}), 2);
  add("i32", "I32", raw<int32_t>({-7, 123456}), 2);
  add("i16", "I16", raw<int16_t>({-32768, 32767}), 2);
  add("i8", "I8", raw<int8_t>({-128, 127}), 2);
  add("u8", "U8", raw<uint8_t>({0, 255}), 2);
  add("bool", "BOOL", raw<uint8_t>({0, 1, 1}), 3);
  write_bytes(path, st_bytes(header.dump(), data));

  const SafetensorsFile file = load_safetensors(path);
  auto values = [&](const char* name) { return file.tensors.at(name).to_vector(); };
  CHECK(values("f32") == std::vector<float>{1.5f, -2.25f});
  CHECK(values("f64")[0] == 0.1f);
  CHECK(std::isinf(values("f64")[1]));
  const std::vector<float> f16 = values("f16");
  CHECK(f16[0] == 1.0f);
  CHECK(f16[1] == -2.0f);
  CHECK(f16[2] == 65504.0f);
  CHECK(f16[3] == std::ldexp(1.0f, -24));
  CHECK(std::isinf(f16[4]));
  CHECK(f16[5] == 0.0f);
  const std::vector<float> bf16 = values("bf16");
  CHECK(bf16[0] == 1.0f);
  CHECK(bf16[1] == -3.0f);
  CHECK(bf16[2] == std::ldexp(1.0f, -133));
  CHECK(values("i64") == std::vector<float>{-5.0f, 1099511627776.0f});
  CHECK(values("i32") == std::vector<float>{-7.0f, 123456.0f});
  CHECK(values("i16") == std::vector<float>{-32768.0f, 32767.0f});
  CHECK(values("i8") == std::vector<float>{-128.0f, 127.0f});
  CHECK(values("u8") == std::vector<float>{0.0f, 255.0f});
  CHECK(values("bool") == std::vector<float>{0.0f, 1.0f, 1.0f});
}

TEST_CASE("safetensors: corrupt or missing files throw DataError naming the path") {
  TempDir dir("st_corrupt");
  const std::string path = dir.file("bad.safetensors");
  const std::string golden = read_file(test::golden_root() + "/dec_t1/model.safetensors");
  const std::string one_f32 = raw<float>({1.0f});
  auto entry = [](const std::string& dtype, const std::string& shape, const std::string& offsets) {
    return "{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":" + offsets + "}";
  };

  SUBCASE("missing file and directory") {
    const std::string missing = dir.file("nope.safetensors");
    CHECK(load_error(missing).find(missing) != std::string::npos);
    CHECK(load_error(missing).find("no such file") != std::string::npos);
    CHECK(load_error(dir.path.string()).find("directory") != std::string::npos);
  }
  SUBCASE("truncated") {
    check_rejected(path, "", "truncated");
    check_rejected(path, "abc", "truncated");
    check_rejected(path, golden.substr(0, golden.size() - 100), "outside the data section");
    check_rejected(path, golden.substr(0, 5000), "runs past the end of the file");
  }
  SUBCASE("header length huge") {
    std::string bytes = golden;
    const uint64_t huge = std::numeric_limits<uint64_t>::max();
    std::memcpy(bytes.data(), &huge, 8);
    check_rejected(path, bytes, "runs past the end of the file");
    const uint64_t near_end = golden.size() - 7;
    std::memcpy(bytes.data(), &near_end, 8);
    check_rejected(path, bytes, "runs past the end of the file");
  }
  SUBCASE("bad JSON header") {
    check_rejected(path, st_bytes("{\"a\":", ""), "not valid JSON");
    check_rejected(path, st_bytes("[1, 2]  ", ""), "not a JSON object");
    check_rejected(path, st_bytes("{\"a\":\"\xff\xfe\"}", ""), "not valid JSON");
    check_rejected(path, st_bytes("{\"a\":7}", ""), "not an object");
    check_rejected(path, st_bytes("{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", one_f32),
                   "dtype");
  }
  SUBCASE("unknown dtype") {
    check_rejected(path, st_bytes("{\"a\":" + entry("F8_E4M3", "[4]", "[0,4]") + "}", one_f32),
                   "unsupported dtype");
  }
  SUBCASE("offsets outside the data section") {
    check_rejected(path, st_bytes("{\"a\":" + entry("F32", "[1]", "[4,8]") + "}", one_f32),
                   "outside the data section");
    check_rejected(path, st_bytes("{\"a\":" + entry("F32", "[1]", "[4,0]") + "}", one_f32),
                   "outside the data section");
    check_rejected(path, st_bytes("{\"a\":" + entry("F32", "[1]", "[-4,0]") + "}", one_f32),
                   "non-negative integer");
    check_rejected(path, st_bytes("{\"a\":" + entry("F32", "[1]", "[0]") + "}", one_f32),
                   "data_offsets");
    check_rejected(
        path, st_bytes("{\"a\":" + entry("F32", "[1]", "[0,18446744073709551615]") + "}", one_f32),
        "outside the data section");
  }
  SUBCASE("overlaps, holes and trailing bytes") {
    const std::string two = raw<float>({1.0f, 2.0f});
    check_rejected(path,
                   st_bytes("{\"a\":" + entry("F32", "[1]", "[0,4]") +
                                ",\"b\":" + entry("F32", "[2]", "[0,8]") + "}",
                            two),
                   "overlap");
    check_rejected(path,
                   st_bytes("{\"a\":" + entry("F32", "[1]", "[4,8]") + "}", two), "hole");
    check_rejected(path,
                   st_bytes("{\"a\":" + entry("F32", "[1]", "[0,4]") + "}", two), "trailing");
  }
  SUBCASE("shape * dtype size != byte range") {
    check_rejected(path, st_bytes("{\"a\":" + entry("F32", "[2]", "[0,4]") + "}", one_f32),
                   "needs");
    check_rejected(path, st_bytes("{\"a\":" + entry("F64", "[1]", "[0,4]") + "}", one_f32),
                   "needs");
    check_rejected(path,
                   st_bytes("{\"a\":" + entry("F32", "[4294967296,4294967296,4]", "[0,4]") + "}",
                            one_f32),
                   "needs more bytes");
    check_rejected(path, st_bytes("{\"a\":" + entry("F32", "[1.5]", "[0,4]") + "}", one_f32),
                   "shape entry");
    check_rejected(path, st_bytes("{\"a\":" + entry("F32", "[-1]", "[0,4]") + "}", one_f32),
                   "shape entry");
  }
  SUBCASE("metadata that is not a string map") {
    check_rejected(path, st_bytes("{\"__metadata__\":{\"k\":3}}", ""), "not a string");
    check_rejected(path, st_bytes("{\"__metadata__\":[1]}", ""), "__metadata__");
  }
}

TEST_CASE("safetensors: random and mutated bytes never crash the reader") {
  TempDir dir("st_fuzz");
  const std::string path = dir.file("fuzz.safetensors");
  std::mt19937_64 gen(7);

  // Pure random bytes, with and without a plausible header length.
  for (int trial = 0; trial < 40; ++trial) {
    std::string bytes(8 + gen() % 300, '\0');
    for (char& c : bytes) c = static_cast<char>(gen());
    if (trial % 2) {
      const uint64_t length = gen() % (bytes.size() - 7);
      std::memcpy(bytes.data(), &length, 8);
    }
    write_bytes(path, bytes);
    CHECK(load_error(path).find(path) != std::string::npos);
  }

  // Byte flips in the header of a small valid file: either it still loads or it throws DataError.
  std::map<std::string, Tensor> tensors = {{"a", Tensor::from({2, 2}, {1, 2, 3, 4})},
                                           {"b", Tensor::from({3}, {5, 6, 7})}};
  save_safetensors(path, tensors, {{"transnormer.config", "{}"}});
  const std::string valid = read_file(path);
  uint64_t header_len = 0;
  std::memcpy(&header_len, valid.data(), 8);
  for (int trial = 0; trial < 120; ++trial) {
    std::string bytes = valid;
    for (int flip = 0; flip < 1 + trial % 3; ++flip)
      bytes[8 + gen() % header_len] = static_cast<char>(gen());
    write_bytes(path, bytes);
    try {
      load_safetensors(path);
    } catch (const DataError& err) {
      CHECK(std::string(err.what()).find(path) != std::string::npos);
    }
  }
}

TEST_CASE("safetensors: save rejects names that cannot be written") {
  TempDir dir("st_savebad");
  const std::string path = dir.file("bad.safetensors");
  CHECK_THROWS_AS(save_safetensors(path, {{"__metadata__", Tensor::zeros({1})}}, {}), DataError);
  CHECK_THROWS_AS(save_safetensors(path, {{"a", Tensor::zeros({1})}}, {{"k", "\xff"}}), DataError);
  CHECK_THROWS_AS(save_safetensors(path, {{"a", Tensor()}}, {}), ShapeError);
  CHECK_THROWS_AS(save_safetensors(dir.file("no/such/dir/x.safetensors"),
                                   {{"a", Tensor::zeros({1})}}, {}),
                  IoError);  // a failed write is a runtime failure, not bad data
  CHECK_FALSE(fs::exists(path));
}
