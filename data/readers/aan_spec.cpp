#include "data/readers/aan_spec.h"

#include "data/readers/aan.h"

namespace tn {

AanSpec::AanSpec() {
  files = {"lra/aan", "new_aan_pairs.train.tsv", "new_aan_pairs.eval.tsv", "new_aan_pairs.test.tsv"};
  max_length = 4000;
  tokenizer.kind = TokenizerSpec::Kind::Char;
}

SentenceTarget AanSpec::target() const {
  SentenceTarget t;
  t.num_classes = 2;
  t.label_names = {"0", "1"};
  t.metrics = {"accuracy"};
  return t;
}

SentenceSplit AanSpec::read_split(const std::string& path, const std::string& name, SentenceSplit::Role role) const {
  return read_aan_split(path, name, role);
}

std::shared_ptr<const DataSpec> resolve_aan_spec(const JsonSection& section) {
  auto spec = std::make_shared<AanSpec>();
  resolve_lra_files_spec(section, *spec);
  return spec;
}

}  // namespace tn
