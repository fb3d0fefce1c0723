// The MPI world (built only when CMake finds MPI): MPI_COMM_WORLD with the C API, started with
// MPI_THREAD_FUNNELED (only the main thread communicates; OpenMP threads compute). Errors keep
// MPI's default handler, MPI_ERRORS_ARE_FATAL: a failed call, or a rank that dies, ends the job
// through the launcher instead of leaving the others waiting.
#include <mpi.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/platform/comm/communicator.h"

namespace tn {
namespace {

template <class T>
MPI_Datatype mpi_type();
template <>
MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <>
MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
template <>
MPI_Datatype mpi_type<int64_t>() { return MPI_INT64_T; }

class MpiWorld final : public Communicator {
 public:
  MpiWorld() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void sum(float* data, int64_t n) override { sum_chunked(data, n); }
  void sum(double* data, int64_t n) override { sum_chunked(data, n); }
  void sum(int64_t* data, int64_t n) override { sum_chunked(data, n); }
  void max(int64_t* data, int64_t n) override {
    MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  }

  void broadcast(float* data, int64_t n, int root) override {
    for (int64_t at = 0; at < n; at += kMaxSumFloats) {
      const int count = static_cast<int>(std::min(kMaxSumFloats, n - at));
      MPI_Bcast(data + at, count, MPI_FLOAT, root, MPI_COMM_WORLD);
    }
  }

  void broadcast(std::string& bytes, int root) override {
    int64_t length = static_cast<int64_t>(bytes.size());
    MPI_Bcast(&length, 1, MPI_INT64_T, root, MPI_COMM_WORLD);
    bytes.resize(static_cast<size_t>(length));
    for (int64_t at = 0; at < length; at += kMaxChunkBytes) {
      const int count = static_cast<int>(std::min(kMaxChunkBytes, length - at));
      MPI_Bcast(bytes.data() + at, count, MPI_CHAR, root, MPI_COMM_WORLD);
    }
  }

  std::vector<std::string> gather(const std::string& bytes, int root) override {
    // Point to point, one rank at a time: the lengths vary and may exceed an int's count.
    std::vector<std::string> all;
    if (rank_ != root) {
      send(bytes, root);
      return all;
    }
    all.resize(static_cast<size_t>(size_));
    for (int r = 0; r < size_; ++r) all[static_cast<size_t>(r)] = r == root ? bytes : receive(r);
    return all;
  }

  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }

 private:
  static constexpr int64_t kMaxChunkBytes = int64_t{1} << 26;
  static constexpr int kGatherTag = 7;

  template <class T>
  void sum_chunked(T* data, int64_t n) {
    for (int64_t at = 0; at < n; at += kMaxSumFloats) {
      const int count = static_cast<int>(std::min(kMaxSumFloats, n - at));
      MPI_Allreduce(MPI_IN_PLACE, data + at, count, mpi_type<T>(), MPI_SUM, MPI_COMM_WORLD);
    }
  }

  void send(const std::string& bytes, int to) {
    const int64_t length = static_cast<int64_t>(bytes.size());
    MPI_Send(&length, 1, MPI_INT64_T, to, kGatherTag, MPI_COMM_WORLD);
    for (int64_t at = 0; at < length; at += kMaxChunkBytes) {
      const int count = static_cast<int>(std::min(kMaxChunkBytes, length - at));
      MPI_Send(bytes.data() + at, count, MPI_CHAR, to, kGatherTag, MPI_COMM_WORLD);
    }
  }

  std::string receive(int from) {
    int64_t length = 0;
    MPI_Recv(&length, 1, MPI_INT64_T, from, kGatherTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    std::string bytes(static_cast<size_t>(length), '\0');
    for (int64_t at = 0; at < length; at += kMaxChunkBytes) {
      const int count = static_cast<int>(std::min(kMaxChunkBytes, length - at));
      MPI_Recv(bytes.data() + at, count, MPI_CHAR, from, kGatherTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return bytes;
  }

  int rank_ = 0, size_ = 1;
};

}  // namespace

namespace detail {

std::unique_ptr<Communicator> make_mpi_world(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  if (provided < MPI_THREAD_FUNNELED) throw std::runtime_error("MPI: this MPI library lacks MPI_THREAD_FUNNELED");
  return std::make_unique<MpiWorld>();
}

void finalize_mpi_world() { MPI_Finalize(); }

}  // namespace detail
}  // namespace tn
