#pragma once
// What the data decides about the model, once, for `train` and `train --dry-run` alike.
#include "experiments/spec/spec.h"
#include "experiments/tasks/task.h"

namespace tn {

/// Lets `task` fill in spec.model from its data (vocab_size when the spec leaves it out, the number
/// of classes) and marks vocab_size as given from then on. Throws ConfigError naming
/// model.num_classes and the fix when the spec sets it and the data has another number of classes
/// (a task that sets no classes, such as language modelling, never refuses).
void configure_model_from_data(const Task& task, ExperimentSpec& spec);

}  // namespace tn
