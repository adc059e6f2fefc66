#include "cwtest/fake_clock.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <utility>

namespace {

using namespace std::chrono_literals;

TEST(FakeClock, StartsAtTheGivenWallTimeAndMovesOnlyWhenAdvanced) {
  cwtest::FakeClock clock(1'000'000);
  EXPECT_EQ(clock.NowMs(), 1'000'000);
  const auto steady = clock.SteadyNow();
  EXPECT_EQ(clock.NowMs(), 1'000'000);
  clock.Advance(1500ms);
  EXPECT_EQ(clock.NowMs(), 1'001'500);
  EXPECT_EQ(clock.SteadyNow() - steady, 1500ms);
}

TEST(FakeClock, WaiterWakesOnlyWhenItsDeadlinePasses) {
  cwtest::FakeClock clock;
  std::atomic<bool> woke{false};
  std::jthread waiter([&](std::stop_token st) {
    EXPECT_TRUE(clock.WaitFor(10s, std::move(st)));
    woke = true;
  });
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Advance(9s);
  EXPECT_EQ(clock.Waiters(), 1);  // still blocked: its deadline is 1 s ahead
  EXPECT_FALSE(woke);
  clock.Advance(1s);
  EXPECT_EQ(clock.Waiters(), 0);  // released, even if it has not run yet
  waiter.join();
  EXPECT_TRUE(woke);
}

TEST(FakeClock, StopRequestWakesAWaiterWithFalse) {
  cwtest::FakeClock clock;
  std::atomic<int> result{-1};
  std::jthread waiter([&](std::stop_token st) { result = clock.WaitFor(1h, std::move(st)) ? 1 : 0; });
  ASSERT_TRUE(clock.AwaitWaiters(1));
  waiter.request_stop();
  waiter.join();
  EXPECT_EQ(result, 0);
}

TEST(FakeClock, PastDeadlineReturnsAtOnce) {
  cwtest::FakeClock clock;
  std::stop_source never;
  EXPECT_TRUE(clock.WaitUntil(clock.SteadyNow() - 1s, never.get_token()));
  EXPECT_TRUE(clock.WaitUntil(clock.SteadyNow(), never.get_token()));
}

TEST(FakeClock, WallStepDoesNotMoveSteadyTime) {
  cwtest::FakeClock clock(5'000);
  const auto steady = clock.SteadyNow();
  clock.SetWallMs(1'000);
  EXPECT_EQ(clock.NowMs(), 1'000);
  EXPECT_EQ(clock.SteadyNow(), steady);
  clock.AdvanceToWallMs(4'000);
  EXPECT_EQ(clock.NowMs(), 4'000);
  EXPECT_EQ(clock.SteadyNow() - steady, 3s);
}

TEST(FakeClock, WaitUntilWallMsConvertsToSteadyTime) {
  cwtest::FakeClock clock(10'000);
  std::atomic<bool> woke{false};
  std::jthread waiter([&](std::stop_token st) {
    clock.WaitUntilWallMs(12'500, std::move(st));
    woke = true;
  });
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.AdvanceToWallMs(12'499);
  EXPECT_EQ(clock.Waiters(), 1);
  clock.AdvanceToWallMs(12'500);
  waiter.join();
  EXPECT_TRUE(woke);
}

}  // namespace
