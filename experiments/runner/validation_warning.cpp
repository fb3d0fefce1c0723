#include "experiments/runner/validation_warning.h"

#include <fmt/format.h>

#include <algorithm>

namespace tn {

std::string outlying_validation_warning(double valid_loss, double train_loss, bool batchnorm) {
  if (!(valid_loss > 100.0 && valid_loss > 100.0 * train_loss)) return "";
  const std::string head = fmt::format("the validation loss {:.3g} is {:.3g} times the training loss {:.3g}", valid_loss,
                                       valid_loss / std::max(train_loss, 1e-12), train_loss);
  if (batchnorm)
    return head +
           ". With BatchNorm, evaluation normalises with the running statistics averaged over training batches; a "
           "split whose batches differ from those (a tiny set, other lengths or padding), or too few steps for the "
           "averages to settle, pushes the activations far out of range (docs/model.md, BatchNorm). The weights are "
           "likely fine: compare after more steps, with evaluation batches like the training ones, or with a "
           "SRMSNorm model";
  return head +
         ": the model fits the training batches but not the validation split (overfitting, or a split from "
         "another distribution or vocabulary)";
}

}  // namespace tn
