// `transnormer forward --checkpoint model.safetensors --input input.json [--output out.json] [--grads]`
// One forward (and backward) pass in the format of the golden fixtures' expected.json (tests/golden/README.md).
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

#include "app/verbs.h"
#include "core/runtime/dnnl/engine.h"
#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/dir_lock.h"
#include "experiments/inspection/forward.h"
#include "layers/persistence/checkpoint.h"

namespace tn::app {
namespace {
struct ForwardArgs {
  std::string checkpoint, input, output;
  bool grads = false;
  int threads = 0;
};

/// --output checked before the pass: a file in an existing folder, and not the --input file.
void check_output(const ForwardArgs& a) {
  if (a.output.empty()) return;
  check_output_file(a.output, "--output");
  std::error_code ec;
  if (std::filesystem::equivalent(a.output, a.input, ec))
    throw ConfigError("--output " + a.output + " is the --input file; write the output to another file");
}
}  // namespace

Action add_forward_verb(CLI::App& app) {
  auto args = std::make_shared<ForwardArgs>();
  CLI::App* sub = app.add_subcommand("forward", "Score token ids: loss, logits, gradient norms");
  sub->add_option("--checkpoint", args->checkpoint, "model.safetensors, or a run folder (its checkpoint)")->required();
  sub->add_option("--input", args->input, "input.json (golden fixture format)")->required();
  sub->add_option("--output", args->output, "write the JSON here instead of stdout");
  sub->add_flag("--grads", args->grads, "also run backward and report gradient norms");
  sub->add_option("--threads", args->threads, "threads (default: all cores)")->check(CLI::Range(0, 1024));
  return [args]() {
    check_output(*args);
    set_num_threads(args->threads);
    LoadedCheckpoint ckpt = load_checkpoint(checkpoint_file(args->checkpoint));  // a run folder: its checkpoint
    const nlohmann::json input = parse_forward_input(read_file(args->input), args->input);
    const nlohmann::json out = run_forward(*ckpt.model, input, args->grads, args->input);
    if (args->output.empty())
      std::cout << out.dump() << std::endl;
    else
      write_file_atomic(args->output, out.dump(2) + "\n");
    return 0;
  };
}

}  // namespace tn::app
