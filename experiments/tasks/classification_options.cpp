#include "experiments/tasks/classification_options.h"

namespace tn {

namespace {
const std::vector<std::pair<std::string, ClassificationOptions::Batching>> kBatching = {
    {"by_length", ClassificationOptions::Batching::ByLength}, {"shuffled", ClassificationOptions::Batching::Shuffled}};
}

nlohmann::ordered_json ClassificationOptions::to_json() const {
  return {{"batching", batching == Batching::ByLength ? "by_length" : "shuffled"}, {"max_tokens", max_tokens}};
}

bool ClassificationOptions::equals(const TaskOptions& other) const {
  const auto* o = dynamic_cast<const ClassificationOptions*>(&other);
  return o && o->batching == batching && o->max_tokens == max_tokens;
}

std::shared_ptr<const TaskOptions> resolve_classification_options(const JsonSection& s,
                                                                  const ClassificationOptions& defaults) {
  s.check_keys({"name", "batching", "max_tokens"}, true);
  auto o = std::make_shared<ClassificationOptions>(defaults);
  o->batching = s.choice("batching", o->batching, kBatching);
  o->max_tokens = s.at_least("max_tokens", s.integer("max_tokens", o->max_tokens), 0,
                             "use 0 for no cap, or a number of padded positions per batch");
  if (o->max_tokens > 0 && o->batching != ClassificationOptions::Batching::ByLength)
    s.fail("max_tokens", "applies to batching: by_length only", "remove it, or set batching: by_length",
           {"batching"});
  return o;
}

}  // namespace tn
