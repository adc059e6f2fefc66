#include "admin/dispatch/trigger_pools.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <latch>

#include "cwtest/fake_clock.hpp"

namespace {

using namespace cronwheel::admin;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

constexpr std::int64_t kT0 = 1767225600000;

class RecordingRecorder final : public TriggerRecorder {
 public:
  void Record(TriggerResult r) override {
    std::lock_guard lock(mu_);
    results.push_back(std::move(r));
  }
  std::mutex mu_;
  std::vector<TriggerResult> results;
};

// A trigger that blocks until released, so a test can fill the queues deterministically.
class GatedTrigger final : public FireTrigger {
 public:
  void Trigger(const Fire& fire, Done done) override {
    {
      std::unique_lock lock(mu_);
      ++started_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return open_; });
      done_.push_back(fire.log_id);
      cv_.notify_all();
    }
    if (done) done();
  }
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void AwaitStarted(int n) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return started_ >= n; });
  }
  std::vector<std::int64_t> done() {
    std::lock_guard lock(mu_);
    return done_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int started_ = 0;
  std::vector<std::int64_t> done_;
};

TEST(SlowJobTracker, MoreThanTenSlowTriggersInAMinuteMeanSlowUntilTheMinuteEnds) {
  SlowJobTracker t(500ms, 10);
  const std::int64_t minute = kT0;  // a minute boundary
  for (int i = 0; i < 10; ++i)
    t.Record(1, 600ms, minute + 1000);
  EXPECT_FALSE(t.IsSlow(1, minute + 2000));  // 10 is not more than 10
  t.Record(1, 499ms, minute + 2000);         // fast triggers do not count
  EXPECT_FALSE(t.IsSlow(1, minute + 2000));
  t.Record(1, 501ms, minute + 3000);
  EXPECT_TRUE(t.IsSlow(1, minute + 3000));
  EXPECT_FALSE(t.IsSlow(2, minute + 3000));
  EXPECT_FALSE(t.IsSlow(1, minute + 60'000));  // a new clock minute starts clean
}

TEST(TriggerPools, AFullQueueRecordsTheFireAsFailedWithTheReasonAndNeverBlocks) {
  cwtest::FakeClock clock(kT0);
  GatedTrigger trigger;
  RecordingRecorder recorder;
  {
    TriggerPools pools({.fast_threads = 1, .slow_threads = 1, .fast_queue = 2, .slow_queue = 2}, clock,
                       trigger, recorder);
    pools.Dispatch({Fire{.log_id = 1, .job_id = 1}});
    trigger.AwaitStarted(1);  // the only fast worker is busy with fire 1
    pools.Dispatch(
        {Fire{.log_id = 2, .job_id = 1}, Fire{.log_id = 3, .job_id = 1}, Fire{.log_id = 4, .job_id = 1}});
    const auto stats = pools.stats();
    EXPECT_EQ(stats.rejected, 1u);
    EXPECT_EQ(stats.queued_fast, 2u);
    {
      std::lock_guard lock(recorder.mu_);
      ASSERT_EQ(recorder.results.size(), 1u);
      EXPECT_EQ(recorder.results[0].log_id, 4);
      EXPECT_EQ(recorder.results[0].trigger_code, 500);
      EXPECT_THAT(recorder.results[0].trigger_msg, HasSubstr("fast trigger pool is full"));
    }
    trigger.Open();
    pools.Drain();
  }
  EXPECT_EQ(trigger.done(), (std::vector<std::int64_t>{1, 2, 3}));
}

}  // namespace
