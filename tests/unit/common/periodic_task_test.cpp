// PeriodicTask (common/include/cronwheel/periodic_task.hpp): the wait rule (NextWait: interval, jitter,
// failure back-off, as userver's `distribution` and `exception_period`), and the task on the fake clock:
// a run that throws makes the next come after the failure interval, doubling, and a run that returns
// brings the interval back.
#include "cronwheel/periodic_task.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

#include "cwtest/fake_clock.hpp"

namespace {

using cronwheel::PeriodicTask;
using std::chrono::milliseconds;

TEST(PeriodicTask, WithoutJitterOrFailureIntervalEveryWaitIsTheInterval) {
  const PeriodicTask::Settings s{.name = "t", .interval = milliseconds(1000)};
  for (const int failures : {0, 1, 5}) {
    for (const double draw : {0.0, 0.5, 0.999})
      EXPECT_EQ(PeriodicTask::NextWait(s, failures, draw), s.interval);
  }
}

TEST(PeriodicTask, JitterSpreadsTheWaitUniformlyAroundTheIntervalAndNeverBelowZero) {
  const PeriodicTask::Settings s{.name = "t", .interval = milliseconds(30'000), .jitter = milliseconds(3000)};
  EXPECT_EQ(PeriodicTask::NextWait(s, 0, 0.0), milliseconds(27'000));
  EXPECT_EQ(PeriodicTask::NextWait(s, 0, 0.5), milliseconds(30'000));
  EXPECT_EQ(PeriodicTask::NextWait(s, 0, 0.75), milliseconds(31'500));
  EXPECT_LE(PeriodicTask::NextWait(s, 0, 0.9999), milliseconds(33'000));
  // A jitter larger than the interval is cut to it: the wait stays within [0, 2 x interval].
  const PeriodicTask::Settings wide{.name = "t", .interval = milliseconds(100), .jitter = milliseconds(500)};
  EXPECT_EQ(PeriodicTask::NextWait(wide, 0, 0.0), milliseconds(0));
  EXPECT_LE(PeriodicTask::NextWait(wide, 0, 0.9999), milliseconds(200));
}

TEST(PeriodicTask, FailuresInARowWaitTheFailureIntervalDoublingUpToItsCap) {
  const PeriodicTask::Settings s{.name = "t",
                                 .interval = milliseconds(60'000),
                                 .failure_interval = milliseconds(1000),
                                 .max_failure_interval = milliseconds(5000)};
  EXPECT_EQ(PeriodicTask::NextWait(s, 0, 0.5), milliseconds(60'000));
  EXPECT_EQ(PeriodicTask::NextWait(s, 1, 0.5), milliseconds(1000));
  EXPECT_EQ(PeriodicTask::NextWait(s, 2, 0.5), milliseconds(2000));
  EXPECT_EQ(PeriodicTask::NextWait(s, 3, 0.5), milliseconds(4000));
  EXPECT_EQ(PeriodicTask::NextWait(s, 4, 0.5), milliseconds(5000));
  EXPECT_EQ(PeriodicTask::NextWait(s, 1'000'000, 0.5), milliseconds(5000));
  // The jitter applies to the failure interval too, within it.
  auto jittered = s;
  jittered.jitter = milliseconds(10'000);
  EXPECT_EQ(PeriodicTask::NextWait(jittered, 1, 0.0), milliseconds(0));
  EXPECT_EQ(PeriodicTask::NextWait(jittered, 1, 0.75), milliseconds(1500));
}

TEST(PeriodicTask, OnTheFakeClockAFailingRunIsRetriedAtTheFailureIntervalAndASuccessRestoresTheInterval) {
  cwtest::FakeClock clock;
  std::atomic<int> runs{0};
  std::atomic<int> failing{2};  // the first two runs throw
  PeriodicTask task({.name = "t",
                     .interval = milliseconds(10'000),
                     .failure_interval = milliseconds(1000),
                     .max_failure_interval = milliseconds(8000)},
                    clock, [&] {
                      ++runs;
                      if (failing > 0) {
                        --failing;
                        throw std::runtime_error("down");
                      }
                    });
  // Each step: wait until the task sleeps on the clock, then move the clock by what it should wait.
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(runs.load(), 1);  // at once (first_delay 0); it threw: the next in 1 s
  clock.Advance(milliseconds(999));
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(runs.load(), 1);
  clock.Advance(milliseconds(1));
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(runs.load(), 2);  // threw again: the next in 2 s
  clock.Advance(milliseconds(1999));
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(runs.load(), 2);
  clock.Advance(milliseconds(1));
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(runs.load(), 3);  // returned: the next after the interval
  clock.Advance(milliseconds(9999));
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(runs.load(), 3);
  clock.Advance(milliseconds(1));
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(runs.load(), 4);
  task.Stop();
}

}  // namespace
