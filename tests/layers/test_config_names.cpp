// One table per enum, and a count guard for each: every enum of the model config
// (layers/config/model_config.h) has exactly one table giving each enumerator its one name (the
// name lists of layers/config/config_names.h, the mixer table, the input table). The enumerators
// are counted from the header's own text, so an enumerator added without a table entry fails here,
// not in a user's config.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "layers/attention/mixer_table.h"
#include "layers/config/config_names.h"
#include "layers/config/model_config.h"
#include "layers/inputs/input_table.h"
#include "tests/test_paths.h"

using namespace tn;

namespace {

/// enum name → its enumerators' count, read from `enum class Name { A, B, C };` in model_config.h.
std::map<std::string, size_t> enumerator_counts() {
  std::ifstream in(test::source_dir() + "/layers/config/model_config.h");
  std::stringstream text;
  text << in.rdbuf();
  const std::string source = text.str();
  std::map<std::string, size_t> counts;
  const std::regex decl(R"(enum class (\w+) \{([^}]*)\};)");
  for (auto it = std::sregex_iterator(source.begin(), source.end(), decl); it != std::sregex_iterator(); ++it) {
    const std::string body = (*it)[2];
    counts[(*it)[1]] = static_cast<size_t>(std::count(body.begin(), body.end(), ',')) + 1;
  }
  return counts;
}

/// Distinct names and distinct values: with as many entries as the enum has enumerators, the
/// table names every one exactly once.
template <class E>
void check_table(const NameList<E>& names, size_t enumerators, const char* what) {
  INFO(what);
  CHECK(names.size() == enumerators);
  std::set<std::string> spellings;
  std::set<E> values;
  for (const auto& [name, value] : names) {
    CHECK(spellings.insert(name).second);
    CHECK(values.insert(value).second);
    CHECK(name_of(value, names) == name);
  }
}

}  // namespace

TEST_CASE("config names: every enum of the model config has one table naming each enumerator once") {
  const std::map<std::string, size_t> counts = enumerator_counts();
  // Every enum of the header is guarded below; a new enum needs its table and a line here.
  CHECK(counts.size() == 13);
  check_table(arch_names(), counts.at("Arch"), "Arch");
  check_table(kernel_names(), counts.at("Kernel"), "Kernel");
  check_table(norm_names(), counts.at("NormKind"), "NormKind");
  check_table(activation_names(), counts.at("Activation"), "Activation");
  check_table(channel_mixer_names(), counts.at("ChannelMixerKind"), "ChannelMixerKind");
  check_table(positional_names(), counts.at("Positional"), "Positional");
  check_table(relative_names(), counts.at("Relative"), "Relative");
  check_table(head_names(), counts.at("HeadKind"), "HeadKind");
  check_table(pooling_names(), counts.at("Pooling"), "Pooling");
  check_table(classifier_names(), counts.at("Classifier"), "Classifier");
  check_table(diag_inner_names(), counts.at("DiagInner"), "DiagInner");
  // The library's mixers: those add_mixer added (this binary's walkthrough example) have kinds
  // past the enum's.
  NameList<MixerKind> library_mixers;
  for (const auto& choice : mixer_choices())
    if (static_cast<int>(choice.second) < kFirstAddedMixerKind) library_mixers.push_back(choice);
  check_table(library_mixers, counts.at("MixerKind"), "MixerKind (the mixer table)");
  CHECK(library_mixers.size() == counts.at("MixerKind"));
  NameList<InputKind> inputs;  // the library's: those add_input added have kinds past the enum's
  for (const InputEntry& entry : input_table())
    if (static_cast<int>(entry.kind) < kFirstAddedInputKind) inputs.emplace_back(std::string(entry.name), entry.kind);
  check_table(inputs, counts.at("InputKind"), "InputKind (the input table)");
}

TEST_CASE("config names: to_string writes back the name the table reads") {
  for (const auto& [name, value] : kernel_names()) CHECK(to_string(value) == name);
  for (const auto& [name, value] : norm_names()) CHECK(to_string(value) == name);
  for (const auto& [name, value] : activation_names()) CHECK(to_string(value) == name);
  for (const auto& [name, value] : positional_names()) CHECK(to_string(value) == name);
  for (const auto& [name, value] : relative_names()) CHECK(to_string(value) == name);
  for (const auto& [name, value] : mixer_choices()) CHECK(to_string(value) == name);
  // A value outside its table is an error, not a made-up name.
  CHECK_THROWS_AS(name_of(static_cast<Kernel>(99), kernel_names()), ShapeError);
}
