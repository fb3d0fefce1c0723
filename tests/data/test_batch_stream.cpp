// The one training stream (data/batching/batch_stream.h): epoch_order against the reference's
// pinned values, plans, the saved place (resume replays the same batches), the older state form,
// and sharding by rank.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "data/batching/batch_stream.h"
#include "data/batching/length_batches.h"

using namespace tn;

TEST_CASE("batch stream: epoch_order matches the reference's pinned values") {
  CHECK(epoch_order(10, 1, 0) == std::vector<int64_t>{9, 7, 4, 0, 3, 8, 2, 5, 1, 6});
  CHECK(epoch_order(10, 1, 1) == std::vector<int64_t>{1, 6, 3, 2, 4, 5, 9, 8, 0, 7});
  CHECK(epoch_order(0, 1, 0).empty());
  CHECK(epoch_order(1, 5, 3) == std::vector<int64_t>{0});
  CHECK_THROWS_AS(epoch_order(-1, 1, 0), ShapeError);

  // A permutation every epoch, different between epochs and seeds.
  std::vector<int64_t> order = epoch_order(766, 1, 4);
  CHECK(order != epoch_order(766, 1, 5));
  CHECK(order != epoch_order(766, 2, 4));
  std::sort(order.begin(), order.end());
  std::vector<int64_t> all(766);
  std::iota(all.begin(), all.end(), int64_t{0});
  CHECK(order == all);
}

namespace {
BatchStream shuffled_stream(int64_t n, int64_t batch, uint64_t seed) {
  return BatchStream(n, [=](uint64_t e) { return shuffled_batches(n, batch, seed, e); }, "item");
}
}  // namespace

TEST_CASE("batch stream: shuffled batches cut epoch_order, the last batch smaller") {
  const EpochPlan plan = shuffled_batches(10, 4, 1, 0);
  REQUIRE(plan.size() == 3);
  CHECK(plan[0] == std::vector<int64_t>{9, 7, 4, 0});
  CHECK(plan[1] == std::vector<int64_t>{3, 8, 2, 5});
  CHECK(plan[2] == std::vector<int64_t>{1, 6});
  CHECK_THROWS_AS(shuffled_batches(10, 0, 1, 0), ShapeError);
}

TEST_CASE("batch stream: serves the plan in order, then the next epoch's") {
  BatchStream s = shuffled_stream(10, 4, 1);
  std::vector<int64_t> ids;
  s.next(ids);
  CHECK(ids == std::vector<int64_t>{9, 7, 4, 0});
  s.next(ids);
  s.next(ids);
  CHECK(ids == std::vector<int64_t>{1, 6});
  CHECK(s.epochs_done() == doctest::Approx(1.0));
  s.next(ids);  // epoch 1: epoch_order(10, 1, 1) = [1,6,3,2,...]
  CHECK(s.epoch() == 1);
  CHECK(ids == std::vector<int64_t>{1, 6, 3, 2});
  CHECK(s.epochs_done() == doctest::Approx(1.4));
}

TEST_CASE("batch stream: a restored place continues with the same batches") {
  BatchStream a = shuffled_stream(10, 4, 7);
  std::vector<int64_t> ids;
  for (int i = 0; i < 4; ++i) a.next(ids);  // epoch 1, one batch in
  const nlohmann::json place = a.state();
  CHECK(place == nlohmann::json{{"epoch", 1}, {"position", 4}});
  BatchStream b = shuffled_stream(10, 4, 7);
  b.restore(place, "state.json");
  std::vector<int64_t> from_a, from_b;
  for (int i = 0; i < 5; ++i) {
    a.next(from_a);
    b.next(from_b);
    CHECK(from_a == from_b);
  }
}

TEST_CASE("batch stream: the older {epoch, batch} form and bad places") {
  const std::vector<int64_t> lengths = {5, 3, 8, 8, 2, 9, 1, 4};
  const BatchLimits limits{.max_sentences = 3};
  BatchStream s(8, [&](uint64_t e) { return length_batches(lengths, limits, 3, e); }, "example");
  const EpochPlan epoch2 = length_batches(lengths, limits, 3, 2);
  s.restore({{"epoch", 2}, {"batch", 1}}, "old.json");
  std::vector<int64_t> ids;
  s.next(ids);
  CHECK(ids == epoch2[1]);
  CHECK(s.state()["position"] == static_cast<int64_t>(epoch2[0].size() + epoch2[1].size()));
  // Not a batch boundary, past the end, malformed: DataError naming the file.
  const int64_t inside = static_cast<int64_t>(epoch2[0].size()) + 1;
  for (const nlohmann::json& bad : {nlohmann::json{{"epoch", 2}, {"position", inside}},
                                    nlohmann::json{{"epoch", 0}, {"position", 9}},
                                    nlohmann::json{{"epoch", -1}, {"position", 0}}, nlohmann::json{{"epoch", "x"}}}) {
    try {
      s.restore(bad, "state.json");
      FAIL("no error for " << bad.dump());
    } catch (const DataError& e) {
      CHECK(std::string(e.what()).find("state.json") != std::string::npos);
    }
  }
}

TEST_CASE("batch stream: shards split every global batch, together they cover it once") {
  std::vector<BatchStream> ranks;
  for (int r = 0; r < 3; ++r) {
    ranks.push_back(shuffled_stream(10, 4, 2));
    ranks.back().shard(r, 3);
  }
  const EpochPlan plan = shuffled_batches(10, 4, 2, 0);
  for (const std::vector<int64_t>& global : plan) {
    std::vector<int64_t> joined, part;
    for (BatchStream& s : ranks) {
      s.next(part);
      CHECK(part.size() + 1 >= global.size() / 3);
      joined.insert(joined.end(), part.begin(), part.end());
    }
    CHECK(joined == global);  // the last batch of 2 leaves rank 0 empty: [0·2/3, 1·2/3) = []
  }
  CHECK(ranks[0].state() == ranks[2].state());
  CHECK_THROWS_AS(ranks[0].shard(3, 3), ShapeError);
}

TEST_CASE("batch stream: an empty stream refuses to serve") {
  BatchStream s(0, [](uint64_t) { return EpochPlan{}; }, "block");
  std::vector<int64_t> ids;
  CHECK(s.empty());
  CHECK_THROWS_AS(s.next(ids), ShapeError);
}
