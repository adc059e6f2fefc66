// HashedWheel<T>: the pure core. Time is whatever the test passes to Advance(); no threads.
#include "ringwheel/hashed_wheel.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

namespace {

using namespace std::chrono_literals;
using ringwheel::HashedWheel;
using ringwheel::SteadyTime;

constexpr SteadyTime kStart{std::chrono::hours(1000)};

TEST(HashedWheel, RoundsTicksPerWheelUpToAPowerOfTwo) {
  EXPECT_EQ((HashedWheel<int>(kStart, 100ms, 1).wheel_size()), 1U);
  EXPECT_EQ((HashedWheel<int>(kStart, 100ms, 500).wheel_size()), 512U);
  EXPECT_EQ((HashedWheel<int>(kStart, 100ms, 512).wheel_size()), 512U);
  EXPECT_THROW((HashedWheel<int>(kStart, 0ms, 8)), std::invalid_argument);
  EXPECT_THROW((HashedWheel<int>(kStart, 100ms, 0)), std::invalid_argument);
}

TEST(HashedWheel, ExpiresAtTheEndOfTheDeadlinesTickNeverBefore) {
  HashedWheel<int> wheel(kStart, 100ms, 8);
  wheel.Schedule(kStart + 250ms, 1);  // tick (200, 300]
  wheel.Schedule(kStart + 300ms, 2);  // the same tick: a deadline on a tick boundary is not delayed
  wheel.Schedule(kStart + 301ms, 3);  // tick (300, 400]
  EXPECT_EQ(wheel.NextTickTime(), kStart + 100ms);
  EXPECT_TRUE(wheel.Advance(kStart + 299ms).empty());
  EXPECT_EQ(wheel.NextTickTime(), kStart + 300ms);
  EXPECT_EQ(wheel.Advance(kStart + 300ms), (std::vector<int>{1, 2}));
  EXPECT_TRUE(wheel.Advance(kStart + 399ms).empty());
  EXPECT_EQ(wheel.Advance(kStart + 400ms), (std::vector<int>{3}));
  EXPECT_TRUE(wheel.empty());
}

TEST(HashedWheel, APastDeadlineGoesIntoTheCurrentTick) {
  HashedWheel<int> wheel(kStart, 100ms, 8);
  EXPECT_TRUE(wheel.Advance(kStart + 1s).empty());
  wheel.Schedule(kStart, 1);
  wheel.Schedule(kStart - 1h, 2);
  EXPECT_EQ(wheel.Advance(kStart + 1100ms), (std::vector<int>{1, 2}));
}

TEST(HashedWheel, DeadlinesBeyondOneTurnWaitTheirRounds) {
  // 8 buckets of 100 ms: one turn is 800 ms. 2.05 s is two turns and a bit away, in bucket 4 with 50 ms.
  HashedWheel<int> wheel(kStart, 100ms, 8);
  wheel.Schedule(kStart + 2050ms, 1);
  wheel.Schedule(kStart + 450ms, 2);   // bucket 4, this turn
  wheel.Schedule(kStart + 1250ms, 3);  // bucket 4, next turn
  std::map<int, int> fired_at_ms;
  for (int ms = 100; ms <= 3000; ms += 100) {
    for (const int item : wheel.Advance(kStart + std::chrono::milliseconds(ms)))
      fired_at_ms[item] = ms;
  }
  EXPECT_EQ(fired_at_ms, (std::map<int, int>{{1, 2100}, {2, 500}, {3, 1300}}));
}

TEST(HashedWheel, CatchingUpSeveralTurnsAtOnceKeepsTickOrder) {
  HashedWheel<int> wheel(kStart, 100ms, 8);
  wheel.Schedule(kStart + 2050ms, 1);
  wheel.Schedule(kStart + 150ms, 2);
  wheel.Schedule(kStart + 950ms, 3);
  wheel.Schedule(kStart + 9s, 4);
  EXPECT_EQ(wheel.Advance(kStart + 5s), (std::vector<int>{2, 3, 1}));
  EXPECT_EQ(wheel.size(), 1U);
  EXPECT_EQ(wheel.Advance(kStart + 9s), (std::vector<int>{4}));
}

TEST(HashedWheel, CancelIsExactAndStaleHandlesAreHarmless) {
  HashedWheel<int> wheel(kStart, 100ms, 8);
  const auto a = wheel.Schedule(kStart + 150ms, 1);
  const auto b = wheel.Schedule(kStart + 150ms, 2);
  const auto c = wheel.Schedule(kStart + 150ms, 3);
  EXPECT_TRUE(wheel.Cancel(b));   // the middle of a bucket list
  EXPECT_FALSE(wheel.Cancel(b));  // twice
  EXPECT_TRUE(wheel.Cancel(c));   // the tail
  EXPECT_EQ(wheel.size(), 1U);
  const auto d = wheel.Schedule(kStart + 150ms, 4);  // reuses a freed node
  EXPECT_FALSE(wheel.Cancel(c));                     // the old handle does not touch the new item
  EXPECT_EQ(wheel.Advance(kStart + 200ms), (std::vector<int>{1, 4}));
  EXPECT_FALSE(wheel.Cancel(a));  // already expired
  EXPECT_FALSE(wheel.Cancel(d));
  EXPECT_FALSE(wheel.Cancel(ringwheel::WheelHandle{}));
}

TEST(HashedWheel, TakeAllReturnsPendingItemsInTickOrder) {
  HashedWheel<std::unique_ptr<int>> wheel(kStart, 100ms, 4);
  wheel.Schedule(kStart + 5s, std::make_unique<int>(1));
  wheel.Schedule(kStart + 50ms, std::make_unique<int>(2));
  wheel.Schedule(kStart + 1s, std::make_unique<int>(3));
  const auto all = wheel.TakeAll();
  ASSERT_EQ(all.size(), 3U);
  EXPECT_EQ(*all[0], 2);
  EXPECT_EQ(*all[1], 3);
  EXPECT_EQ(*all[2], 1);
  EXPECT_TRUE(wheel.empty());
}

TEST(HashedWheel, RandomScheduleCancelAdvanceNeverEarlyAndAtMostOneTickLate) {
  std::mt19937_64 rng(99);
  HashedWheel<int> wheel(kStart, 10ms, 16);
  std::map<int, SteadyTime> deadline;  // pending, not cancelled
  std::vector<std::pair<int, ringwheel::WheelHandle>> handles;
  SteadyTime now = kStart;
  int next_id = 0;
  for (int step = 0; step < 20'000; ++step) {
    const auto op = rng() % 10;
    if (op < 5) {
      const SteadyTime d = now + std::chrono::microseconds(rng() % 1'000'000);  // up to 6 turns ahead
      handles.emplace_back(next_id, wheel.Schedule(d, next_id));
      deadline[next_id++] = d;
    } else if (op < 7 && !handles.empty()) {
      const std::size_t i = rng() % handles.size();
      const bool was_pending = deadline.erase(handles[i].first) == 1;
      EXPECT_EQ(wheel.Cancel(handles[i].second), was_pending);
      handles[i] = handles.back();
      handles.pop_back();
    } else {
      now += std::chrono::microseconds(rng() % 40'000);
      for (const int id : wheel.Advance(now)) {
        ASSERT_EQ(deadline.count(id), 1U) << "expired twice or after cancel";
        EXPECT_LE(deadline[id], now) << "early";
        deadline.erase(id);
      }
      // Everything due by the end of the last whole tick has expired.
      const SteadyTime last_tick_end = now - (now - kStart) % 10ms;
      for (const auto& [id, d] : deadline)
        ASSERT_GT(d, last_tick_end) << "more than a tick late";
    }
    ASSERT_EQ(wheel.size(), deadline.size());
  }
}

}  // namespace
