#pragma once
// Registers the walkthrough examples of this folder, once per process, as their lines in the
// library's tables would: the labelled_lines reader (add_reader) and the shuffled_classification
// task (add_task).
#include "data/readers/registry.h"
#include "experiments/tasks/registry.h"
#include "tests/experiments/walkthroughs/labelled_lines_spec.h"
#include "tests/experiments/walkthroughs/shuffled_classification.h"

namespace tn::walkthrough {

inline void register_examples() {
  static const bool added = [] {
    add_reader({"labelled_lines", "the reader walkthrough's example: label<TAB>text lines, characters",
                &resolve_labelled_lines_spec});
    add_task({"shuffled_classification",
              "the task walkthrough's example: texts classified with their characters shuffled (loss, accuracy)",
              &make_shuffled_classification});
    return true;
  }();
  (void)added;
}

}  // namespace tn::walkthrough
