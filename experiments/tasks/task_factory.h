#pragma once
// What every task factory checks first, written once: the model's arch and head, and the data kind
// the reader yields. Each throws ConfigError naming the spec file, the key and what the task needs.
#include <string>
#include <string_view>

#include "core/error.h"
#include "experiments/spec/spec.h"
#include "layers/config/config_names.h"

namespace tn {

/// Throws ConfigError (`model:`) unless the spec's model is `arch` with `head`.
inline void require_model(const ExperimentSpec& spec, std::string_view task, Arch arch, HeadKind head) {
  if (spec.model.arch != arch || spec.model.head != head)
    throw ConfigError(spec.path + ": model: the " + std::string(task) + " task needs arch: " +
                      name_of(arch, arch_names()) + " with head: " + name_of(head, head_names()));
}

/// The spec's reader as the data kind `Source` (TextSource, SentenceSource, ImageSource); throws
/// ConfigError (`data.reader:`) naming what the task reads, `reads` (e.g. "a text reader such as
/// wikitext"), when it yields another kind.
template <class Source>
const Source& require_source(const ExperimentSpec& spec, std::string_view task, std::string_view yields,
                             std::string_view reads) {
  const auto* source = dynamic_cast<const Source*>(spec.data.get());
  if (!source)
    throw ConfigError(spec.path + ": data.reader: " + spec.data->reader() + " does not yield " + std::string(yields) +
                      "; " + std::string(task) + " reads " + std::string(reads));
  return *source;
}

}  // namespace tn
