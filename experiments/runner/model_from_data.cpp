#include "experiments/runner/model_from_data.h"

#include <string>

#include "core/error.h"

namespace tn {

void configure_model_from_data(const Task& task, ExperimentSpec& spec) {
  const int64_t given = spec.model.num_classes;
  task.configure_model(spec.model, spec.vocab_size_given, spec.path);
  spec.vocab_size_given = true;
  if (spec.num_classes_given && spec.model.num_classes != given)
    throw ConfigError(spec.path + ": model.num_classes=" + std::to_string(given) + ", but the data has " +
                      std::to_string(spec.model.num_classes) +
                      (spec.model.num_classes == 1 ? " output (a regression)" : " classes") + "; set " +
                      std::to_string(spec.model.num_classes) + " or remove the key to take it from the data");
}

}  // namespace tn
