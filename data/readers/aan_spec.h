#pragma once
// The `aan` reader: LRA Retrieval on the ACL Anthology Network (Tay et al. 2021; the paper,
// §3.3): pairs of documents, two classes, each document character-level with l_max 4000
// (data/readers/aan.h parses the files).
//   data: {reader: aan, dir: lra/aan, train: new_aan_pairs.train.tsv, valid: new_aan_pairs.eval.tsv,
//          test: new_aan_pairs.test.tsv, max_length: 4000, tokenizer: {type: char, min_freq: 1}}
#include <memory>

#include "data/readers/lra_files_spec.h"

namespace tn {

class AanSpec final : public LraFilesSpec {
 public:
  AanSpec();
  std::string reader() const override { return "aan"; }
  std::string dataset_name() const override { return "AAN"; }
  bool pairs() const override { return true; }
  /// 2 classes "0" (not linked), "1" (linked), accuracy.
  SentenceTarget target() const override;

 protected:
  SentenceSplit read_split(const std::string& path, const std::string& name, SentenceSplit::Role role) const override;
};

/// Resolves a `data:` section with reader aan. Throws ConfigIssue at the key with the fix.
std::shared_ptr<const DataSpec> resolve_aan_spec(const JsonSection& section);

}  // namespace tn
