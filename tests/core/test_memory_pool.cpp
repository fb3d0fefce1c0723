// The caching allocator's size classes and its bound (core/runtime/memory_pool.h).
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/runtime/memory_pool.h"
#include "core/runtime/tensor.h"

using namespace tn;

TEST_CASE("memory pool: size classes by hand") {
  CHECK(pool_size_class(1) == 1);
  CHECK(pool_size_class(256) == 256);
  CHECK(pool_size_class(257) == 288);     // ⌊log2 257⌋ = 8, step 2^(8-3) = 32: 9 · 32
  CHECK(pool_size_class(1000) == 1024);   // ⌊log2 1000⌋ = 9, step 64: 16 · 64
  CHECK(pool_size_class(1025) == 1152);   // ⌊log2 1025⌋ = 10, step 128: 9 · 128
  CHECK(pool_size_class(4096) == 4096);
  for (int64_t n = 257; n < 100000; n += 37) {
    const int64_t c = pool_size_class(n);
    REQUIRE(c >= n);
    REQUIRE(static_cast<double>(c) <= 1.125 * static_cast<double>(n) + 1);
  }
}

TEST_CASE("memory pool: buffers of one size class are reused, whatever the exact size") {
  pool_release_cached();
  { Tensor a = Tensor::empty({1000, 129}); }  // 129,000 floats: ⌊log2⌋ = 16, step 8,192, class 131,072
  const size_t mallocs = pool_stats().mallocs;
  for (int64_t rows = 1000; rows < 1016; ++rows) {
    Tensor t = Tensor::empty({rows, 129});  // 129,000 .. 131,064 floats: the same class
    CHECK(t.numel() == rows * 129);
  }
  CHECK(pool_stats().mallocs == mallocs);
  pool_release_cached();
  CHECK(pool_stats().cached_bytes == 0);
}

TEST_CASE("memory pool: a smaller request takes a cached buffer up to twice its size (best fit)") {
  pool_release_cached();
  { Tensor long_batch = Tensor::empty({4096, 128}); }  // 524,288 floats, cached on release
  const size_t mallocs = pool_stats().mallocs;
  {
    Tensor shorter = Tensor::empty({3000, 128});  // class 393,216: the cached 524,288 fits (< 2x)
    CHECK(pool_stats().mallocs == mallocs);
    Tensor second = Tensor::empty({3000, 128});  // nothing cached fits any more: a malloc
    CHECK(pool_stats().mallocs == mallocs + 1);
  }
  { Tensor tiny = Tensor::empty({100, 128}); }  // 12,800 floats: the cached buffers are over 2x, not used
  CHECK(pool_stats().mallocs == mallocs + 2);
  pool_release_cached();
}

TEST_CASE("memory pool: between steps, when little is live, a new shape does not empty the cache") {
  pool_release_cached();
  // A "step" of 640 MiB live (above the 512 MiB floor), all freed at its end.
  {
    std::vector<Tensor> step;
    for (int i = 0; i < 10; ++i) step.push_back(Tensor::empty({1 << 24}));  // 64 MiB each
  }
  CHECK(pool_stats().cached_bytes == size_t{10} << 26);
  // The next step starts with a shape never seen: the cache stays (it is not above the peak).
  { Tensor other = Tensor::empty({3, 5}); }
  CHECK(pool_stats().cached_bytes >= size_t{10} << 26);
  pool_release_cached();
}

namespace {
/// This process's resident memory, in bytes (/proc/self/statm: pages).
size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t total_pages = 0, resident_pages = 0;
  statm >> total_pages >> resident_pages;
  return resident_pages * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}
}  // namespace

TEST_CASE("memory pool: released buffers go back to the system, even below glibc's raised mmap threshold") {
  pool_release_cached();
  // Freeing a 24 MiB malloc block raises glibc's mmap threshold to 24 MiB: through malloc, the
  // 8 MiB buffers below would then come from the heap, between the small tensors kept after each,
  // and freeing them would leave holes the heap keeps, returning nothing to the system.
  void* volatile block = std::calloc(size_t{24} << 20, 1);  // volatile: the pair is not elided
  std::free(block);
  const size_t before = resident_bytes();
  std::vector<Tensor> pins;
  {
    std::vector<Tensor> step;
    for (int i = 0; i < 32; ++i) {
      step.push_back(Tensor::zeros({int64_t{2} << 20}));  // 8 MiB, touched
      pins.push_back(Tensor::zeros({int64_t{1} << 16}));  // 256 KiB, stays
    }
    CHECK(resident_bytes() >= before + (size_t{200} << 20));
  }
  pool_release_cached();
  // The 256 MiB went back; the pins stay. Under AddressSanitizer the shadow of the unmapped
  // buffers (1/8 of them, 32 MiB) stays resident too (the sanitizer CI stage).
  size_t allowance = size_t{40} << 20;
#if defined(__SANITIZE_ADDRESS__)
  allowance += size_t{32} << 20;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  allowance += size_t{32} << 20;
#endif
#endif
  CHECK(resident_bytes() < before + allowance);
}

namespace {
/// The VmFlags of the mapping holding addr in /proc/self/smaps ("" when none holds it).
std::string vm_flags_of(const void* addr) {
  std::ifstream smaps("/proc/self/smaps");
  const auto a = reinterpret_cast<uintptr_t>(addr);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) {  // a mapping's first line
      inside = a >= lo && a < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}
}  // namespace

TEST_CASE("memory pool: buffers of 2 MiB and more ask for transparent huge pages") {
  if (!std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) {
    MESSAGE("this kernel has no transparent huge pages: nothing to check");
    return;
  }
  pool_release_cached();  // fresh mappings, not cached ones
  const Tensor big = Tensor::zeros({int64_t{2} << 20});     // 8 MiB
  const Tensor mapped = Tensor::zeros({int64_t{3} << 17});  // 1.5 MiB: mapped, small pages
  const std::string big_flags = vm_flags_of(big.data());
  const std::string small_flags = vm_flags_of(mapped.data());
  REQUIRE(!big_flags.empty());
  REQUIRE(!small_flags.empty());
  CHECK(big_flags.find(" hg") != std::string::npos);
  CHECK(small_flags.find(" hg") == std::string::npos);
}
