#pragma once
// The `listops` reader: LRA ListOps (Tay et al. 2021; the paper, §3.3), ten classes, one
// expression per example, l_max 2048 (data/readers/listops.h parses the files).
//   data: {reader: listops, dir: lra/listops-1000, train: basic_train.tsv, valid: basic_val.tsv,
//          test: basic_test.tsv, max_length: 2048, tokenizer: {type: listops, min_freq: 1}}
#include <memory>

#include "data/readers/lra_files_spec.h"

namespace tn {

class ListOpsSpec final : public LraFilesSpec {
 public:
  ListOpsSpec();
  std::string reader() const override { return "listops"; }
  std::string dataset_name() const override { return "ListOps"; }
  bool pairs() const override { return false; }
  /// 10 classes "0".."9", accuracy.
  SentenceTarget target() const override;

 protected:
  SentenceSplit read_split(const std::string& path, const std::string& name, SentenceSplit::Role role) const override;
};

/// Resolves a `data:` section with reader listops. Throws ConfigIssue at the key with the fix.
std::shared_ptr<const DataSpec> resolve_listops_spec(const JsonSection& section);

}  // namespace tn
