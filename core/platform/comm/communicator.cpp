#include "core/platform/comm/communicator.h"

#include <cstdlib>
#include <string>

#include "core/error.h"

namespace tn {
namespace {

/// A world of one process: sums and broadcasts leave the data as it is.
class SingleProcess final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void sum(float*, int64_t) override {}
  void sum(double*, int64_t) override {}
  void sum(int64_t*, int64_t) override {}
  void max(int64_t*, int64_t) override {}
  void broadcast(float*, int64_t, int) override {}
  void broadcast(std::string&, int) override {}
  std::vector<std::string> gather(const std::string& bytes, int) override { return {bytes}; }
  void barrier() override {}
};

}  // namespace

Communicator& single_process() {
  static SingleProcess one;
  return one;
}

namespace {

std::unique_ptr<Communicator>& world_slot() {
  static std::unique_ptr<Communicator> slot = std::make_unique<SingleProcess>();
  return slot;
}

bool joined_mpi = false;

/// The number of ranks the launcher started, from its environment (1 when none says).
int launcher_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "SLURM_NTASKS"}) {
    if (const char* v = std::getenv(name); v && *v) return std::atoi(v);
  }
  return 1;
}

}  // namespace

Communicator& world() { return *world_slot(); }

bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (const char* v = std::getenv(name); v && *v) return true;
  return false;
}

#ifdef TN_HAVE_MPI
bool built_with_mpi() { return true; }
#else
bool built_with_mpi() { return false; }
namespace detail {
std::unique_ptr<Communicator> make_mpi_world(int*, char***) { return nullptr; }
void finalize_mpi_world() {}
}  // namespace detail
#endif

void start_world(int* argc, char*** argv) {
  if (!launched_by_mpi()) {
    // `srun -n N` without --mpi=pmix starts N copies that know nothing of each other: each would
    // run the whole command and write the same files.
    const char* step_tasks = std::getenv("SLURM_STEP_NUM_TASKS");
    if (step_tasks && std::atoi(step_tasks) > 1)
      throw ConfigError("srun started " + std::string(step_tasks) +
                        " copies of transnormer without MPI, which would each write the same outputs; start them "
                        "with `srun --mpi=pmix` (data-parallel training), or with -n 1");
    return;
  }
  if (!built_with_mpi()) {
    if (launcher_world_size() > 1)
      throw ConfigError("an MPI launcher started " + std::to_string(launcher_world_size()) +
                        " ranks, but this transnormer was built without MPI; install libopenmpi-dev and "
                        "rebuild (cmake finds it), or run one process without mpirun");
    return;
  }
  world_slot() = detail::make_mpi_world(argc, argv);
  joined_mpi = true;
}

void stop_world() {
  if (!joined_mpi) return;
  world_slot() = std::make_unique<SingleProcess>();
  detail::finalize_mpi_world();
  joined_mpi = false;
}

}  // namespace tn
