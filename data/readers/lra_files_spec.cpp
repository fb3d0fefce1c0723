#include "data/readers/lra_files_spec.h"

namespace tn {

nlohmann::ordered_json LraFilesSpec::to_json() const {
  nlohmann::ordered_json out = {{"reader", reader()}};
  const nlohmann::ordered_json split_files = files.to_json();  // items() does not keep a temporary alive
  for (const auto& [key, value] : split_files.items()) out[key] = value;
  out["max_length"] = max_length;
  out["tokenizer"] = tokenizer.to_json();
  return out;
}

bool LraFilesSpec::equals(const DataSpec& other) const {
  const auto* o = dynamic_cast<const LraFilesSpec*>(&other);
  return o && o->reader() == reader() && o->files == files && o->max_length == max_length &&
         o->tokenizer == tokenizer;
}

std::vector<SentenceSplit> LraFilesSpec::read_sentences(const std::string& data_root) const {
  std::vector<SentenceSplit> out;
  out.push_back(read_split(files.path(data_root, files.train), "train", SentenceSplit::Role::Train));
  if (!files.valid.empty())
    out.push_back(read_split(files.path(data_root, files.valid), "valid", SentenceSplit::Role::Valid));
  if (!files.test.empty())
    out.push_back(read_split(files.path(data_root, files.test), "test", SentenceSplit::Role::Test));
  return out;
}

std::string LraFilesSpec::prediction_text(int32_t predicted_class, double) const {
  const std::vector<std::string> names = target().label_names;
  return predicted_class >= 0 && predicted_class < static_cast<int32_t>(names.size()) ? names[predicted_class]
                                                                                        : std::to_string(predicted_class);
}

void resolve_lra_files_spec(const JsonSection& s, LraFilesSpec& spec, const std::vector<std::string>& extra_keys) {
  std::vector<std::string> keys = {"reader", "dir", "train", "valid", "test", "max_length", "tokenizer"};
  keys.insert(keys.end(), extra_keys.begin(), extra_keys.end());
  s.check_keys(keys, true);
  spec.files = resolve_split_files(s, spec.files);
  spec.max_length = s.at_least("max_length", s.integer("max_length", spec.max_length), 2,
                               "give the longest sequence in symbols, <eos> included (LRA: 2048 for ListOps)");
  spec.tokenizer = resolve_tokenizer(s, "tokenizer", spec.tokenizer);
  if (spec.tokenizer.kind != TokenizerSpec::Kind::Char && spec.tokenizer.kind != TokenizerSpec::Kind::ListOps)
    s.fail("tokenizer", "must be a symbol tokenizer for the " + spec.reader() + " reader",
           "use char or listops (the LRA tasks build their vocabulary from the training split)");
}

}  // namespace tn
