#include "data/readers/imdb.h"

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "data/readers/tar_members.h"
#include "data/text/utf8.h"

namespace tn {

namespace fs = std::filesystem;

namespace {
const char* const kHint =
    "`transnormer data fetch` fetches aclImdb_v1.tar.gz from ai.stanford.edu/~amaas/data/sentiment into "
    "<data root>/lra/imdb; data.path may name the archive, a folder of archives, or the unpacked aclImdb/";
/// The longest review file taken: 1 MiB, far above aclImdb's longest (about 14 KB). A larger one is
/// refused before it is read.
constexpr uint64_t kMaxReviewBytes = uint64_t{1} << 20;

/// Where a review goes: split (0 train, 1 test), label, numeric id and rating; false for any other
/// file (README, urls_*.txt, train/unsup/...).
struct ReviewKey {
  int split = 0, label = 0;
  long id = 0, rating = 0;
};

bool review_key(const std::string& entry, ReviewKey& key) {
  const fs::path p(entry);
  const std::string stem = p.stem().string(), label = p.parent_path().filename().string(),
                    split = p.parent_path().parent_path().filename().string();
  if (p.extension() != ".txt" || (label != "pos" && label != "neg") || (split != "train" && split != "test"))
    return false;
  const size_t underscore = stem.find('_');
  if (underscore == std::string::npos || underscore == 0 || underscore + 1 == stem.size()) return false;
  if (!std::all_of(stem.begin(), stem.end(), [](char c) { return (c >= '0' && c <= '9') || c == '_'; })) return false;
  if (underscore > 9 || stem.size() - underscore - 1 > 9) return false;  // not aclImdb's <id>_<rating>: skipped
  key = {split == "test", label == "pos", std::stol(stem.substr(0, underscore)), std::stol(stem.substr(underscore + 1))};
  return true;
}

void add_review(ImdbReviews& out, const ReviewKey& key, std::string text, const std::string& where) {
  if (const size_t bad = invalid_utf8_at(text); bad != std::string::npos)
    throw DataError(where + ": is not valid UTF-8 (bad byte at offset " + std::to_string(bad) +
                    "); aclImdb reviews are UTF-8: fetch the archive again");
  SentenceExample e;
  e.id = std::string(key.split ? "test/" : "train/") + (key.label ? "pos/" : "neg/") + std::to_string(key.id) + "_" +
         std::to_string(key.rating);
  e.a = std::move(text);
  e.label = key.label;
  e.line = key.id;  // sorting key only; reviews have no lines
  (key.split ? out.test : out.train).push_back(std::move(e));
}

void read_archive(const std::string& path, bool with_test, ImdbReviews& out) {
  ReviewKey key;
  read_tar_members(
      path, [&](const std::string& name) { return review_key(name, key) && (with_test || !key.split); },
      [&](const std::string& name, std::string text) {
        review_key(name, key);
        add_review(out, key, std::move(text), path + ":" + name);
      },
      kHint, kMaxReviewBytes);
  out.sources.push_back(path);
}

void read_folder(const fs::path& root, bool with_test, ImdbReviews& out) {
  for (const char* split : {"train", "test"})
    for (const char* label : {"pos", "neg"}) {
      if (!with_test && std::string(split) == "test") continue;
      const fs::path dir = root / split / label;
      if (!fs::is_directory(dir)) continue;
      for (const fs::directory_entry& f : fs::directory_iterator(dir)) {
        ReviewKey key;
        if (f.is_regular_file() && review_key(fs::relative(f.path(), root.parent_path()).string(), key))
          add_review(out, key, read_file(f.path().string(), kMaxReviewBytes, "an aclImdb review"), f.path().string());
      }
    }
  out.sources.push_back(root.string());
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

bool is_archive(const fs::path& p) {
  const std::string name = p.filename().string();
  for (const char* ext : {".tar", ".tar.gz", ".tgz", ".tar.xz", ".tar.bz2"})
    if (name.size() > std::string(ext).size() && name.ends_with(ext)) return true;
  return false;
}
}  // namespace

ImdbReviews read_imdb(const std::string& path, bool with_test) {
  ImdbReviews out;
  std::error_code ec;
  const fs::path p(path);
  if (!fs::exists(p, ec)) throw DataError(path + ": no such file or folder (" + std::string(kHint) + ")");
  if (!fs::is_directory(p, ec)) {
    read_archive(path, with_test, out);
  } else if (fs::is_directory(p / "aclImdb", ec)) {
    read_folder(p / "aclImdb", with_test, out);
  } else if (fs::is_directory(p / "train", ec) || fs::is_directory(p / "test", ec)) {
    read_folder(p, with_test, out);
  } else {
    std::vector<fs::path> archives;
    for (const fs::directory_entry& f : fs::directory_iterator(p))
      if (f.is_regular_file() && is_archive(f.path())) archives.push_back(f.path());
    std::sort(archives.begin(), archives.end());
    for (const fs::path& a : archives) read_archive(a.string(), with_test, out);
  }
  for (auto* split : {&out.train, &out.test}) {
    if (split == &out.test && !with_test) continue;
    std::sort(split->begin(), split->end(), [](const SentenceExample& a, const SentenceExample& b) {
      return std::tie(a.label, a.line, a.id) < std::tie(b.label, b.line, b.id);
    });
    for (size_t i = 1; i < split->size(); ++i)
      if ((*split)[i].id == (*split)[i - 1].id)
        throw DataError(path + ": holds the review " + (*split)[i].id + " twice (read from " + join(out.sources) +
                        "): two copies of the same archive? keep one, or point data.path at one archive");
    for (SentenceExample& e : *split) e.line = 0;  // the id was the sort key; reviews have no lines
    const bool has_pos = std::any_of(split->begin(), split->end(), [](const auto& e) { return e.label == 1; });
    const bool has_neg = std::any_of(split->begin(), split->end(), [](const auto& e) { return e.label == 0; });
    if (!has_pos || !has_neg)
      throw DataError(path + ": holds no aclImdb/" + (split == &out.train ? "train" : "test") + "/" +
                      (has_pos ? "neg" : "pos") + "/*.txt review (" + kHint + ")");
  }
  return out;
}

}  // namespace tn
