// HashedWheelTimer on a FakeClock: the tests never sleep. The worker blocks in FakeClock::WaitUntil until
// the end of the next tick; a test moves time with Advance() and then waits (AwaitWaiters(1)) until the
// worker has processed the tick and blocked again, so everything due has run.
#include "ringwheel/hashed_wheel_timer.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "cwtest/fake_clock.hpp"

namespace {

using namespace std::chrono_literals;
using ringwheel::HashedWheelTimer;

// Advances the clock in `step`s, letting the worker finish each tick.
void Step(cwtest::FakeClock& clock, std::chrono::nanoseconds by, std::chrono::nanoseconds step = 100ms) {
  for (std::chrono::nanoseconds done{0}; done < by; done += step) {
    clock.Advance(step);
    ASSERT_TRUE(clock.AwaitWaiters(1));
  }
}

TEST(HashedWheelTimer, NeverRunsBeforeTheDeadline) {
  cwtest::FakeClock clock;
  HashedWheelTimer timer(clock);  // 100 ms ticks
  ASSERT_TRUE(clock.AwaitWaiters(1));
  std::atomic<bool> ran{false};
  ringwheel::SteadyTime ran_at{};
  const auto handle = timer.NewTimeout(
      [&] {
        ran_at = clock.SteadyNow();
        ran = true;
      },
      250ms);
  ASSERT_TRUE(handle.ok()) << handle.status();
  Step(clock, 200ms);
  EXPECT_FALSE(ran);
  EXPECT_EQ(timer.pending(), 1U);
  Step(clock, 100ms);
  EXPECT_TRUE(ran);
  EXPECT_GE(ran_at, handle->deadline());
  EXPECT_TRUE(handle->expired());
  EXPECT_FALSE(handle->cancelled());
  EXPECT_EQ(timer.pending(), 0U);
}

TEST(HashedWheelTimer, DelaysBeyondOneTurnWaitTheirRounds) {
  cwtest::FakeClock clock;
  HashedWheelTimer timer(clock, {.tick = 100ms, .ticks_per_wheel = 8});  // one turn = 800 ms
  ASSERT_TRUE(clock.AwaitWaiters(1));
  std::atomic<int> ran_at_tick{-1};
  std::atomic<int> tick{0};
  ASSERT_TRUE(timer.NewTimeout([&] { ran_at_tick = tick.load(); }, 2050ms).ok());
  for (int t = 1; t <= 25; ++t) {
    tick = t;
    Step(clock, 100ms);
  }
  EXPECT_EQ(ran_at_tick, 21);  // 2.1 s: the end of the tick holding 2.05 s, after two full turns
}

TEST(HashedWheelTimer, CancelPreventsTheRunAndIsReportedOnce) {
  cwtest::FakeClock clock;
  HashedWheelTimer timer(clock);
  ASSERT_TRUE(clock.AwaitWaiters(1));
  std::atomic<int> runs{0};
  auto early = timer.NewTimeout([&] { ++runs; }, 50ms);
  auto cancelled = timer.NewTimeout([&] { runs += 100; }, 1s);
  ASSERT_TRUE(early.ok() && cancelled.ok());
  Step(clock, 100ms);  // `early` runs; `cancelled` is in the wheel now
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(cancelled->Cancel());
  EXPECT_FALSE(cancelled->Cancel());
  EXPECT_TRUE(cancelled->cancelled());
  EXPECT_FALSE(early->Cancel());  // already ran
  EXPECT_EQ(timer.pending(), 0U);
  Step(clock, 2s);
  EXPECT_EQ(runs, 1);
  // Cancelled before it was ever moved into the wheel.
  auto never = timer.NewTimeout([&] { runs += 1000; }, 0ms);
  ASSERT_TRUE(never.ok()) << never.status();
  EXPECT_TRUE(never->Cancel());
  Step(clock, 200ms);
  EXPECT_EQ(runs, 1);
  EXPECT_FALSE(ringwheel::TimerHandle{}.Cancel());
}

TEST(HashedWheelTimer, RefusesBeyondMaxPendingWithAClearMessage) {
  cwtest::FakeClock clock;
  HashedWheelTimer timer(clock, {.max_pending = 2});
  auto a = timer.NewTimeout([] {}, 1s);
  auto b = timer.NewTimeout([] {}, 1s);
  ASSERT_TRUE(a.ok() && b.ok());
  const auto full = timer.NewTimeout([] {}, 1s);
  EXPECT_EQ(full.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(full.status().message(),
            "HashedWheelTimer: 2 timeouts are pending, the maximum (Settings::max_pending = 2); new timeout "
            "refused");
  EXPECT_TRUE(a->Cancel());
  EXPECT_TRUE(timer.NewTimeout([] {}, 1s).ok());
  EXPECT_FALSE(timer.NewTimeout([] {}, 1s).ok());
  const auto empty = timer.NewTimeout(nullptr, 1s);
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(empty.status().message(), "HashedWheelTimer: the task is empty");
}

TEST(HashedWheelTimer, StopReturnsTheTimeoutsThatDidNotRun) {
  cwtest::FakeClock clock;
  HashedWheelTimer timer(clock);
  ASSERT_TRUE(clock.AwaitWaiters(1));
  std::vector<int> ran;
  std::mutex mu;
  const auto record = [&](int i) {
    return [&, i] {
      const std::lock_guard lock(mu);
      ran.push_back(i);
    };
  };
  ASSERT_TRUE(timer.NewTimeout(record(1), 100ms).ok());
  auto in_wheel = timer.NewTimeout(record(2), 5s);
  auto cancelled = timer.NewTimeout(record(3), 3s);
  ASSERT_TRUE(in_wheel.ok() && cancelled.ok());
  Step(clock, 100ms);
  EXPECT_TRUE(cancelled->Cancel());
  auto queued = timer.NewTimeout(record(4), 1s);  // still in the submission queue at Stop()
  ASSERT_TRUE(queued.ok()) << queued.status();
  auto unrun = timer.Stop();
  ASSERT_EQ(unrun.size(), 2U);
  EXPECT_EQ(unrun[0].deadline, queued->deadline());  // ordered by deadline
  EXPECT_EQ(unrun[1].deadline, in_wheel->deadline());
  unrun[0].task();
  EXPECT_EQ(ran, (std::vector<int>{1, 4}));
  EXPECT_FALSE(in_wheel->Cancel());  // returned by Stop()
  EXPECT_EQ(timer.pending(), 0U);
  const auto stopped = timer.NewTimeout(record(5), 1s);
  EXPECT_EQ(stopped.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(stopped.status().message(), "HashedWheelTimer: the timer is stopped; new timeout refused");
  EXPECT_TRUE(timer.Stop().empty());
}

TEST(HashedWheelTimer, TransfersAtMostTheConfiguredNumberPerTick) {
  cwtest::FakeClock clock;
  HashedWheelTimer timer(clock, {.max_transfers_per_tick = 10});
  ASSERT_TRUE(clock.AwaitWaiters(1));
  std::atomic<int> runs{0};
  for (int i = 0; i < 25; ++i)
    ASSERT_TRUE(timer.NewTimeout([&] { ++runs; }, 0ms).ok());
  Step(clock, 100ms);
  EXPECT_EQ(runs, 10);
  Step(clock, 100ms);
  EXPECT_EQ(runs, 20);
  Step(clock, 100ms);
  EXPECT_EQ(runs, 25);
}

TEST(HashedWheelTimer, ATaskCanScheduleAnotherAndAThrowingTaskIsCounted) {
  cwtest::FakeClock clock;
  HashedWheelTimer timer(clock);
  ASSERT_TRUE(clock.AwaitWaiters(1));
  std::atomic<int> runs{0};
  ASSERT_TRUE(timer
                  .NewTimeout(
                      [&] {
                        ++runs;
                        ASSERT_TRUE(timer.NewTimeout([&] { ++runs; }, 100ms).ok());
                      },
                      100ms)
                  .ok());
  ASSERT_TRUE(timer.NewTimeout([] { throw std::runtime_error("boom"); }, 100ms).ok());
  Step(clock, 100ms);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(timer.failed_tasks(), 1U);
  Step(clock, 200ms);
  EXPECT_EQ(runs, 2);
}

TEST(HashedWheelTimer, ManyProducersLoseNothing) {
  cwtest::FakeClock clock;
  HashedWheelTimer timer(clock, {.tick = 10ms, .ticks_per_wheel = 64});
  ASSERT_TRUE(clock.AwaitWaiters(1));
  constexpr int kProducers = 4;
  constexpr int kEach = 2'000;
  std::atomic<int> runs{0};
  std::atomic<int> cancelled{0};
  {
    std::vector<std::jthread> producers;
    producers.reserve(kProducers);
    for (int p = 0; p < kProducers; ++p) {
      producers.emplace_back([&, p] {
        for (int i = 0; i < kEach; ++i) {
          auto h = timer.NewTimeout([&] { ++runs; }, std::chrono::milliseconds((p * kEach + i) % 3'000));
          ASSERT_TRUE(h.ok()) << h.status();
          if (i % 10 == 0 && h->Cancel()) ++cancelled;
        }
      });
    }
  }
  EXPECT_EQ(timer.pending(), static_cast<std::size_t>(kProducers * kEach - cancelled));
  Step(clock, 3100ms, 10ms);
  EXPECT_EQ(runs + cancelled, kProducers * kEach);
  EXPECT_EQ(timer.pending(), 0U);
}

TEST(HashedWheelTimer, RejectsInvalidSettings) {
  cwtest::FakeClock clock;
  EXPECT_THROW(HashedWheelTimer(clock, {.tick = 0ms}), std::invalid_argument);
  EXPECT_THROW(HashedWheelTimer(clock, {.ticks_per_wheel = 0}), std::invalid_argument);
  EXPECT_THROW(HashedWheelTimer(clock, {.max_transfers_per_tick = 0}), std::invalid_argument);
}

}  // namespace
