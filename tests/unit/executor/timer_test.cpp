#include "timer.hpp"

#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <vector>

#include "cwtest/fake_clock.hpp"

namespace {

using cronwheel::executor::WheelTimer;
using namespace std::chrono_literals;

TEST(WheelTimer, RunsTasksInDeadlineOrderOnceTheClockPasses) {
  cwtest::FakeClock clock;
  WheelTimer timer(clock);
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
  clock.Advance(3100ms);
  ASSERT_EQ(done.get_future().wait_for(10s), std::future_status::ready);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(WheelTimer, ACancelledTaskDoesNotRunAndAHandleMayOutliveTheTimer) {
  cwtest::FakeClock clock;
  auto timer = std::make_unique<WheelTimer>(clock);
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

TEST(WheelTimer, AStoppedTimerRefusesQuietly) {
  cwtest::FakeClock clock;
  WheelTimer timer(clock);
  timer.Stop();
  auto h = timer.After(1s, [] { FAIL() << "must not run"; });
  h.Cancel();
}

}  // namespace
