#include "app/verb_data_pathfinder.h"

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

#include "core/platform/process/stop_signal.h"
#include "data/generators/pathfinder_files.h"
#include "data/generators/pathfinder_generator.h"

namespace tn::app {
namespace {

struct PathfinderArgs {
  PathfinderSetOptions set;
  std::string out;
  bool overwrite = false;
  int64_t contour_length = 14, distractor_length = 0, distractors = 0;
  double continuity = 1.0;
  // Set when given: the distractor counts default to LRA's rule for the contour length.
  CLI::Option* distractor_length_option = nullptr;
  CLI::Option* distractors_option = nullptr;
};

/// LRA's curv_contour_length_<L> parameters, with the options given on the command line.
PathfinderParams params_of(const PathfinderArgs& a) {
  PathfinderParams p = PathfinderParams::for_contour_length(a.contour_length);
  if (a.distractor_length_option->count() > 0) {
    p.distractor_length = a.distractor_length;
    p.num_distractor_snakes = a.distractor_length > 0 ? 20 / a.distractor_length : 0;
  }
  if (a.distractors_option->count() > 0) p.num_distractor_snakes = a.distractors;
  p.continuity = a.continuity;
  return p;
}

int run_generate_pathfinder(const PathfinderArgs& args) {
  const PathfinderParams p = params_of(args);
  p.validate();
  args.set.validate();
  check_pathfinder_output(args.out, args.overwrite);  // before the work, not after it
  spdlog::info(
      "pathfinder: generating {} images of {} x {} in {} batches of up to {} into {} (contour length {}, "
      "{} distractors of {} paddles, continuity {}, seed {})",
      args.set.count, p.window, p.window, args.set.batches(), args.set.batch_size, args.out, p.contour_length,
      p.num_distractor_snakes, p.distractor_length, p.continuity, args.set.seed);
  install_stop_handlers();  // SIGTERM/SIGINT: remove the unfinished set, keep any old one, exit 143/130
  const PathfinderGenerator generator(p);
  PathfinderSetOptions set = args.set;
  set.stop_requested = stop_signal;
  const PathfinderSetSummary s = write_pathfinder_set(args.out, generator, set, args.overwrite);
  if (s.stopped_by) {
    spdlog::warn("pathfinder: stopped by {} before the set was complete; what it wrote was removed and {} is as "
                 "it was",
                 signal_name(s.stopped_by), args.out);
    return exit_code_for_signal(s.stopped_by);
  }
  const auto n = static_cast<double>(s.images);
  spdlog::info(
      "pathfinder: {} images in {:.1f} s ({:.0f} images/s), {:.1f} % positive; per image {:.2f} target "
      "pairs sampled, {:.2f} distractors placed, {:.1f} % of pixels lit ({:.1f} % at level 128 or above), "
      "marker centres at level {:.1f} on average ({:.1f} % at 255)",
      s.images, s.seconds, n / s.seconds, 100.0 * static_cast<double>(s.positives) / n,
      static_cast<double>(s.pair_attempts) / n, static_cast<double>(s.distractors) / n,
      100.0 * static_cast<double>(s.lit_pixels) / (n * static_cast<double>(p.window * p.window)),
      100.0 * static_cast<double>(s.bright_pixels) / (n * static_cast<double>(p.window * p.window)),
      static_cast<double>(s.marker_level) / (2.0 * n), 100.0 * static_cast<double>(s.markers_full) / (2.0 * n));
  spdlog::info("pathfinder: {}/imgs/0..{}/sample_<i>.png and {}/metadata/0..{}.npy", args.out, s.batches - 1, args.out,
               s.batches - 1);
  return 0;
}

}  // namespace

std::pair<CLI::App*, Action> add_generate_pathfinder(CLI::App& generate) {
  auto args = std::make_shared<PathfinderArgs>();
  CLI::App* sub = generate.add_subcommand(
      "pathfinder",
      "LRA Pathfinder (Linsley et al. 2018; snakes2.py): two dashed contours and distractors on 32 x 32, positive "
      "when both markers sit on one contour; LRA's curv_contour_length_14 parameters, not bit-identical to the "
      "released images; writes imgs/<batch>/sample_<i>.png and metadata/<batch>.npy");
  sub->add_option("--out", args->out, "folder of the set (created when missing; must be empty)")->required();
  sub->add_option("--count", args->set.count, "images to generate (LRA: 200000)")->required();
  sub->add_option("--seed", args->set.seed, "seed of the generator (0 .. 2^64-1); image i depends on (seed, i) only")
      ->capture_default_str()
      ->check(seed_check());
  sub->add_option("--batch-size", args->set.batch_size, "images per imgs/<batch> folder and metadata file")
      ->capture_default_str();
  sub->add_option("--contour-length", args->contour_length,
                  "paddles per target contour (LRA: 14; 9 and 6 are the easier sets)")
      ->capture_default_str();
  args->distractor_length_option = sub->add_option("--distractor-length", args->distractor_length,
                                                   "paddles per distractor (default: contour length / 3)");
  args->distractors_option =
      sub->add_option("--distractors", args->distractors, "distractor contours (default: 20 / distractor length)");
  sub->add_option("--continuity", args->continuity, "turn penalty: lower allows sharper turns")->capture_default_str();
  sub->add_flag("--overwrite", args->overwrite, "replace the Pathfinder set (imgs/, metadata/) already in --out");
  return {sub, [args]() { return run_generate_pathfinder(*args); }};
}

}  // namespace tn::app
