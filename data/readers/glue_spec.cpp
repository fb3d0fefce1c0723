#include "data/readers/glue_spec.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "data/data_root.h"
#include "data/readers/glue.h"
#include "data/readers/split_files.h"

namespace tn {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string stem(const std::string& file) { return std::filesystem::path(file).stem().string(); }

/// data.task: a GLUE name; the nearest one is found case-insensitively ("sst2" -> "SST-2").
const GlueTask* resolve_task(const JsonSection& s) {
  std::vector<std::string> names, lowered;
  for (const GlueTask& task : glue_tasks()) {
    names.emplace_back(task.name);
    lowered.push_back(lower(names.back()));
  }
  std::string all;
  for (const std::string& name : names) all += (all.empty() ? "" : ", ") + name;
  if (!s.has("task")) s.fail("task", "is required", "add data.task: one of " + all);
  const std::string given = s.string("task", "");
  if (const GlueTask* task = find_glue_task(given)) return task;
  const std::string near = nearest_key(lower(given), lowered);
  std::string fix = "use one of " + all;
  if (!near.empty()) {
    const auto k = static_cast<size_t>(std::find(lowered.begin(), lowered.end(), near) - lowered.begin());
    fix = "did you mean `" + names[k] + "`?" + (lower(given) == near ? " (GLUE names are case-sensitive)" : "");
  }
  s.fail("task", "is not a GLUE task: \"" + given + "\"; expected one of " + all, fix);
}

/// A file key: absent = the default, null = not read, else a non-empty string.
std::string glue_file_key(const JsonSection& s, const std::string& key, const std::string& fallback) {
  return optional_file_key(s, key, fallback, "give a file name inside data.dir, or null for none");
}

/// A list of file names: absent = the default; null or [] = none.
std::vector<std::string> file_list(const JsonSection& s, const std::string& key, std::vector<std::string> fallback) {
  const nlohmann::json* v = s.find(key);
  if (!v) return fallback;
  if (v->is_null()) return {};
  if (!v->is_array())
    s.fail(key, "expected a list of file names, got " + describe_json(*v), "write e.g. [dev_mismatched.tsv], or [] for none");
  std::vector<std::string> out;
  for (const nlohmann::json& item : *v) {
    if (!item.is_string() || item.get<std::string>().empty())
      s.fail(key, "expected a list of file names, found the entry " + describe_json(item),
             "write each entry as a file name inside data.dir");
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::vector<std::string> strings(const std::vector<std::string_view>& views) {
  return {views.begin(), views.end()};
}

}  // namespace

nlohmann::ordered_json GlueSpec::to_json() const {
  return {{"reader", reader()},
          {"task", std::string(task->name)},
          {"dir", dir},
          {"train", nullable_file(train)},
          {"valid", nullable_file(valid)},
          {"extra_valid", extra_valid},
          {"test", nullable_file(test)},
          {"extra_test", extra_test},
          {"max_positions", max_positions},
          {"bpe_dir", bpe_dir},
          {"dict", dict}};
}

bool GlueSpec::equals(const DataSpec& other) const {
  const auto* o = dynamic_cast<const GlueSpec*>(&other);
  return o && task == o->task && dir == o->dir && train == o->train && valid == o->valid &&
         extra_valid == o->extra_valid && test == o->test && extra_test == o->extra_test &&
         max_positions == o->max_positions && bpe_dir == o->bpe_dir && dict == o->dict;
}

SentenceTarget GlueSpec::target() const {
  SentenceTarget t;
  t.regression = task->regression;
  t.num_classes = task->num_classes();
  t.label_names = strings(task->labels);
  if (task->regression) {
    t.target_min = task->target_min;
    t.target_max = task->target_max;
  }
  t.metrics = strings(task->metrics);
  return t;
}

std::string GlueSpec::file_path(const std::string& data_root, const std::string& file) const {
  if (std::filesystem::path(file).is_absolute()) return file;
  return data_path(data_root, (std::filesystem::path(dir) / file).string());
}

std::string GlueSpec::bpe_path(const std::string& data_root) const { return data_path(data_root, bpe_dir); }
std::string GlueSpec::dict_path(const std::string& data_root) const { return data_path(data_root, dict); }

std::vector<SentenceSplit> GlueSpec::read_sentences(const std::string& data_root) const {
  std::vector<SentenceSplit> splits;
  const auto read = [&](GlueFileKind kind, const std::string& file, bool extra) {
    SentenceSplit split = read_glue_split(*task, kind, file_path(data_root, file));
    if (extra) split.name = stem(file);
    splits.push_back(std::move(split));
  };
  if (!train.empty()) read(GlueFileKind::Train, train, false);
  if (!valid.empty()) read(GlueFileKind::Dev, valid, false);
  for (const std::string& file : extra_valid) read(GlueFileKind::Dev, file, true);
  if (!test.empty()) read(GlueFileKind::Test, test, false);
  for (const std::string& file : extra_test) read(GlueFileKind::Test, file, true);
  return splits;
}

std::shared_ptr<const DataSpec> resolve_glue_spec(const JsonSection& s) {
  s.check_keys({"reader", "task", "dir", "train", "valid", "extra_valid", "test", "extra_test", "max_positions",
                "bpe_dir", "dict"},
               true);
  auto d = std::make_shared<GlueSpec>();
  d->task = resolve_task(s);
  const GlueTask& task = *d->task;
  d->dir = s.string("dir", "glue/" + std::string(task.name));
  if (d->dir.empty()) s.fail("dir", "is empty", "give the task's folder, e.g. glue/" + std::string(task.name));
  d->train = glue_file_key(s, "train", std::string(task.train_file));
  d->valid = glue_file_key(s, "valid", std::string(task.dev_files.front()));
  std::vector<std::string> dev_rest(task.dev_files.begin() + 1, task.dev_files.end());
  d->extra_valid = file_list(s, "extra_valid", dev_rest);
  d->test = glue_file_key(s, "test", std::string(task.test_files.front().test_file));
  std::vector<std::string> test_rest;
  for (size_t k = 1; k < task.test_files.size(); ++k) test_rest.emplace_back(task.test_files[k].test_file);
  d->extra_test = file_list(s, "extra_test", test_rest);
  d->max_positions = s.at_least("max_positions", s.integer("max_positions", d->max_positions), 2,
                                "use the model's learned positions, e.g. 512");
  d->bpe_dir = s.string("bpe_dir", d->bpe_dir);
  if (d->bpe_dir.empty()) s.fail("bpe_dir", "is empty", "give the GPT-2 BPE folder, e.g. gpt2_bpe");
  d->dict = s.string("dict", d->dict);
  if (d->dict.empty()) s.fail("dict", "is empty", "give the fairseq dictionary, e.g. gpt2_bpe/dict.txt");

  std::set<std::string> names = {"train", "valid", "test"};
  for (const auto& [key, files] : {std::pair{"extra_valid", &d->extra_valid}, std::pair{"extra_test", &d->extra_test}})
    for (const std::string& file : *files)
      if (!names.insert(stem(file)).second)
        s.fail(key, "names the split `" + stem(file) + "` twice, or a split called train/valid/test",
               "each extra file becomes a split named by its stem: give distinct file names");
  return d;
}

TokenizerSpec GlueSpec::text_tokenizer() const {
  TokenizerSpec t;
  t.kind = TokenizerSpec::Kind::Gpt2;
  t.bpe_dir = bpe_dir;
  t.dict = dict;
  return t;
}

std::string GlueSpec::submission_name(const std::string& file) const { return glue_submission_file(*task, file); }

std::string GlueSpec::prediction_text(int32_t predicted_class, double score) const {
  return task->regression ? glue_score_text(*task, score) : glue_class_text(*task, predicted_class);
}

}  // namespace tn
