// The generic find-or-create cache behind the matmul, reorder, eltwise and batch-norm primitives.
#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/runtime/dnnl/primitive_cache.h"

using namespace tn;

TEST_CASE("PrimitiveCache: make runs once per key, later gets return the same value") {
  PrimitiveCache<int, std::string> cache;
  int made = 0;
  auto make = [&made](int k) { return [&made, k] { ++made; return "v" + std::to_string(k); }; };
  const auto a = cache.get(1, make(1));
  const auto b = cache.get(2, make(2));
  const auto a2 = cache.get(1, make(99));  // found: make(99) is not called
  CHECK(*a == "v1");
  CHECK(*b == "v2");
  CHECK(a2 == a);
  CHECK(made == 2);
  CHECK(cache.size() == 2);
}

TEST_CASE("PrimitiveCache: a bounded cache drops its entries when full, handed-out values survive") {
  PrimitiveCache<int, std::vector<int>> cache(2);
  const auto first = cache.get(1, [] { return std::vector<int>{1, 1}; });
  cache.get(2, [] { return std::vector<int>{2}; });
  CHECK(cache.size() == 2);
  cache.get(3, [] { return std::vector<int>{3}; });  // full: 1 and 2 are dropped
  CHECK(cache.size() == 1);
  CHECK(*first == std::vector<int>{1, 1});  // still alive through its shared_ptr
  int made = 0;
  const auto again = cache.get(1, [&made] { ++made; return std::vector<int>{1, 1}; });
  CHECK(made == 1);  // rebuilt
  CHECK(again != first);
}

TEST_CASE("PrimitiveCache: a throwing make stores nothing, and racing threads build a key once") {
  PrimitiveCache<int, int> cache;
  CHECK_THROWS_AS(cache.get(7, []() -> int { throw std::runtime_error("no primitive"); }),
                  std::runtime_error);
  CHECK(cache.size() == 0);

  std::atomic<int> made{0};
  std::vector<std::thread> threads;
  std::vector<int> seen(8, -1);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] { seen[t] = *cache.get(5, [&made] { ++made; return 42; }); });
  for (auto& th : threads) th.join();
  CHECK(made == 1);
  CHECK(seen == std::vector<int>(8, 42));
}
