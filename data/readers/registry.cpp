#include "data/readers/registry.h"
#include "core/platform/config/registry_table.h"

#include <stdexcept>
#include <string>

#include "data/readers/aan_spec.h"
#include "data/readers/cifar10_spec.h"
#include "data/readers/glue_spec.h"
#include "data/readers/imdb_spec.h"
#include "data/readers/listops_spec.h"
#include "data/readers/pathfinder_spec.h"
#include "data/readers/wikitext_spec.h"

namespace tn {

namespace {
std::vector<ReaderEntry>& table_of_readers() {
  static std::vector<ReaderEntry> table = {
      {"wikitext", "WikiText-layout .tokens files: one line of whitespace-separated words each",
       &resolve_wikitext_spec},
      {"glue", "GLUE .tsv files of one task (data.task: CoLA, SST-2, MRPC, QQP, STS-B, MNLI, QNLI, RTE, WNLI)",
       &resolve_glue_spec},
      {"listops", "LRA ListOps .tsv files (Source<TAB>Target): nested MIN/MAX/MED/SM expressions, 10 classes",
       &resolve_listops_spec},
      {"imdb", "LRA Text: the aclImdb reviews (archive or folder), characters, neg/pos", &resolve_imdb_spec},
      {"aan", "LRA Retrieval: AAN .tsv pairs (label, ids, two documents), characters, linked or not",
       &resolve_aan_spec},
      {"cifar10", "LRA Image: CIFAR-10's binary batches (archive or folder) in grayscale, 32x32, 10 classes",
       &resolve_cifar10_spec},
      {"pathfinder", "LRA Pathfinder: metadata/<n>.npy lines and grayscale PNGs (32x32), connected or not",
       &resolve_pathfinder_spec},
  };
  return table;
}
}  // namespace

const std::vector<ReaderEntry>& reader_table() { return table_of_readers(); }

void add_reader(const ReaderEntry& entry) { append_named(table_of_readers(), entry, "add_reader", "a reader"); }

std::shared_ptr<const DataSpec> resolve_data_spec(const JsonSection& section) {
  std::vector<std::pair<std::string, const ReaderEntry*>> names;
  for (const ReaderEntry& entry : reader_table()) names.emplace_back(std::string(entry.name), &entry);
  const ReaderEntry* entry = section.choice<const ReaderEntry*>("reader", &reader_table().front(), names);
  return entry->resolve(section);
}

}  // namespace tn
