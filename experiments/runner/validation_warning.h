#pragma once
// What a validation loss far above the training loss likely means, said once it is seen: with
// BatchNorm, evaluation's running statistics (a validation loss of 2.95e+09 on a tiny AAN file
// beside a training loss of 0.69); without it, a split the model does not fit.
#include <string>

namespace tn {

/// The warning for a finite validation loss `valid_loss` beside the training loss `train_loss`
/// of the same step (nats per target), or "" when the validation loss is at most 100 nats or at
/// most 100 times the training loss. `batchnorm`: the model normalises with BatchNorm.
std::string outlying_validation_warning(double valid_loss, double train_loss, bool batchnorm);

}  // namespace tn
