#pragma once
// Reading the Large Movie Review Dataset v1.0 (Maas et al. 2011, aclImdb), the text of LRA's Text
// task: every `aclImdb/{train,test}/{pos,neg}/<id>_<rating>.txt`, one review per file, label neg 0,
// pos 1 (as the HF `imdb` dataset the official loaders read). Reads the archive as published
// (aclImdb_v1.tar.gz, through libarchive: any tar compression), several archives that split it
// (aclImdb_train.tar.xz + aclImdb_test.tar.xz), or the unpacked folder. train/unsup and the other
// files are skipped.
#include <string>
#include <vector>

#include "data/readers/reader.h"

namespace tn {

/// The labelled reviews of both splits, each sorted by (label, id, rating) so that the order does
/// not depend on the archive's; ids are "train/pos/123_8".
struct ImdbReviews {
  std::vector<SentenceExample> train, test;
  std::vector<std::string> sources;  // the archives or folders read
};

/// Reads `path`: an archive file; or a folder holding aclImdb/ (or being it, with train/ and
/// test/), else holding archives (*.tar, *.tar.gz, *.tgz, *.tar.xz, *.tar.bz2), each read.
/// Throws DataError naming the path (missing; a truncated or corrupt archive, with libarchive's
/// message; a review that is not UTF-8, naming archive:entry; no pos/neg review of a split), each
/// with the fix. with_test false: the test reviews are skipped (test stays empty) and need not exist.
ImdbReviews read_imdb(const std::string& path, bool with_test = true);

}  // namespace tn
