#include "experiments/tasks/task.h"

#include "core/error.h"

namespace tn {

std::vector<std::string> Task::write_submission(TransNormerModel& /*model*/, const std::string& split,
                                                int64_t /*batch_size*/, const std::string& /*dir*/) const {
  throw ConfigError("split \"" + split +
                    "\": this task has no per-example predictions to submit; predict runs the classification tasks "
                    "(sentence_prediction, sequence_classification, retrieval)");
}

}  // namespace tn
