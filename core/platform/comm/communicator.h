#pragma once
// The ranks of a data-parallel job, as the runner and the ops see them: rank, size, sums across
// ranks, broadcast, barrier. One process is a world of size 1 (every call returns at once); a
// process started by an MPI launcher (mpirun, or srun --mpi=pmix under Slurm) joins the MPI world
// when the build has MPI (core/platform/comm/mpi/). Nothing outside core/platform/comm calls MPI.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tn {

class Communicator {
 public:
  virtual ~Communicator() = default;
  /// This process's place in the world, 0 <= rank() < size().
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Sums data[0..n) element-wise across ranks, in place: every rank ends with the same values.
  /// Large buffers go in calls of at most kMaxSumFloats elements (Open MPI allocates a temporary
  /// buffer per call; above about 16 MB that costs more than the sum).
  virtual void sum(float* data, int64_t n) = 0;
  virtual void sum(double* data, int64_t n) = 0;
  virtual void sum(int64_t* data, int64_t n) = 0;
  /// The element-wise maximum across ranks, in place.
  virtual void max(int64_t* data, int64_t n) = 0;
  /// Replaces data[0..n) on every rank with rank `root`'s values.
  virtual void broadcast(float* data, int64_t n, int root) = 0;
  /// Replaces `bytes` on every rank with rank `root`'s (any length).
  virtual void broadcast(std::string& bytes, int root) = 0;
  /// Every rank's `bytes`, in rank order, on rank `root` (empty on the other ranks).
  virtual std::vector<std::string> gather(const std::string& bytes, int root) = 0;
  /// Returns when every rank has called it.
  virtual void barrier() = 0;

  static constexpr int64_t kMaxSumFloats = int64_t{1} << 22;  // 4M elements per call
};

/// The world of this process: the MPI world once start_world() joined one, else a world of one.
/// Only the app reads it; the runner, the steps and the tasks are handed their ranks.
Communicator& world();

/// A world of one process (rank 0 of 1): what a task evaluates with, and a step sums over, unless
/// given other ranks.
Communicator& single_process();

/// Whether an MPI launcher started this process (mpirun's OMPI_COMM_WORLD_SIZE, PMIx's PMIX_RANK,
/// PMI's PMI_RANK in the environment).
bool launched_by_mpi();

/// Joins the MPI world when an MPI launcher started this process; a plain process stays a world
/// of one (no MPI start-up cost). Throws ConfigError when a launcher started several ranks but
/// this build has no MPI (the message says how to build with it), or when `srun -n N` started N
/// copies without MPI (SLURM_STEP_NUM_TASKS > 1: they would share their outputs).
void start_world(int* argc, char*** argv);

/// Leaves the MPI world after a clean end (MPI_Finalize); does nothing for a world of one. Not
/// called after an error: a rank that exits with an error makes the launcher end the others.
void stop_world();

/// Whether this build can join an MPI world.
bool built_with_mpi();

namespace detail {
/// The world a build with MPI joins (core/platform/comm/mpi/mpi_communicator.cpp).
std::unique_ptr<Communicator> make_mpi_world(int* argc, char*** argv);
void finalize_mpi_world();
}  // namespace detail

}  // namespace tn
