#include "timer.hpp"

#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <vector>

#include "cwtest/fake_clock.hpp"

namespace {

using cronwheel::executor::ClockTimer;
using namespace std::chrono_literals;

TEST(ClockTimer, RunsTasksInDeadlineOrderWhenTheClockPasses) {
  cwtest::FakeClock clock;
  ClockTimer timer(clock);
  std::mutex mu;
  std::vector<int> order;
  std::promise<void> done;
  auto record = [&](int v) {
    std::lock_guard lock(mu);
    order.push_back(v);
    if (order.size() == 3) done.set_value();
  };
  timer.After(3s, [&] { record(3); });
  timer.After(1s, [&] { record(1); });
  timer.After(2s, [&] { record(2); });
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Advance(2999ms);
  clock.Advance(1ms);
  ASSERT_EQ(done.get_future().wait_for(10s), std::future_status::ready);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(ClockTimer, CancelledTaskDoesNotRunAndAHandleMayOutliveTheTimer) {
  cwtest::FakeClock clock;
  auto timer = std::make_unique<ClockTimer>(clock);
  std::atomic<bool> ran{false};
  std::promise<void> later;
  auto h = timer->After(1s, [&] { ran = true; });
  timer->After(2s, [&] { later.set_value(); });
  h.Cancel();
  clock.Advance(5s);
  ASSERT_EQ(later.get_future().wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(ran);
  auto h2 = timer->After(1h, [] {});
  timer.reset();
  h2.Cancel();  // the timer is gone: a no-op, not a crash
}

TEST(ClockTimer, AnEarlierTaskCutsALongWaitShort) {
  cwtest::FakeClock clock;
  ClockTimer timer(clock);
  std::promise<void> fired;
  timer.After(1h, [] {});
  ASSERT_TRUE(clock.AwaitWaiters(1));  // waiting for the 1 h deadline
  timer.After(1s, [&] { fired.set_value(); });
  clock.Advance(1s);
  EXPECT_EQ(fired.get_future().wait_for(10s), std::future_status::ready);
}

}  // namespace
