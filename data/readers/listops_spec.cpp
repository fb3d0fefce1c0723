#include "data/readers/listops_spec.h"

#include "data/readers/listops.h"

namespace tn {

ListOpsSpec::ListOpsSpec() {
  files = {"lra/listops-1000", "basic_train.tsv", "basic_val.tsv", "basic_test.tsv"};
  max_length = 2048;
  tokenizer.kind = TokenizerSpec::Kind::ListOps;
}

SentenceTarget ListOpsSpec::target() const {
  SentenceTarget t;
  t.num_classes = 10;
  t.label_names = listops_labels();
  t.metrics = {"accuracy"};
  return t;
}

SentenceSplit ListOpsSpec::read_split(const std::string& path, const std::string& name,
                                      SentenceSplit::Role role) const {
  return read_listops_split(path, name, role);
}

std::shared_ptr<const DataSpec> resolve_listops_spec(const JsonSection& section) {
  auto spec = std::make_shared<ListOpsSpec>();
  resolve_lra_files_spec(section, *spec);
  return spec;
}

}  // namespace tn
