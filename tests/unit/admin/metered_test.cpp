// The decorators that feed the admin's metrics (admin/src/app/metered.hpp), on fakes and a fake clock: what
// each counts, and that everything still reaches the wrapped object.
#include "app/metered.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "cwtest/answering_executor_client.hpp"
#include "cwtest/fake_clock.hpp"

namespace {

using namespace cronwheel;
using namespace cronwheel::admin;
using namespace std::chrono_literals;

struct Recorder final : TriggerRecorder {
  void Record(TriggerResult r) override { got.push_back(std::move(r)); }
  std::vector<TriggerResult> got;
};

struct MeteredSeams : ::testing::Test {
  cwtest::FakeClock clock{1'767'225'600'000};
  metrics::Registry registry;
  AdminMetrics m{registry};
};

TEST_F(MeteredSeams, TriggerOutcomesAndTheLagOfCronFiresThatReachedAnExecutor) {
  Recorder inner;
  MeteredTriggerRecorder rec(inner, m, clock);
  const auto now = clock.NowMs();
  rec.Record({.log_id = 1,
              .scheduled_ms = now - 1500,
              .type = TriggerType::kCron,
              .trigger_code = 200,
              .executor_address = "http://e:1/"});
  rec.Record({.log_id = 2,
              .scheduled_ms = now - 20,
              .type = TriggerType::kCron,
              .trigger_code = 500,
              .executor_address = "http://e:1/"});  // the executor refused: failed, lag observed
  rec.Record({.log_id = 3,
              .scheduled_ms = now - 90'000,
              .type = TriggerType::kManual,
              .trigger_code = 200,
              .executor_address = "http://e:1/"});  // not a schedule's instant: no lag
  rec.Record({.log_id = 4,
              .scheduled_ms = now - 5,
              .type = TriggerType::kCron,
              .trigger_code = 500});               // no executor
  rec.Record({.log_id = 5, .trigger_code = 500});  // a full pool's result: no instant
  ASSERT_EQ(inner.got.size(), 5U);
  EXPECT_EQ(inner.got[2].log_id, 3);
  EXPECT_EQ(m.fires_sent.value(), 2U);
  EXPECT_EQ(m.fires_failed.value(), 3U);
  const auto lag = m.fire_lag.snapshot();
  EXPECT_EQ(lag.count(), 2U);
  EXPECT_DOUBLE_EQ(lag.sum, 1.52);
  // Buckets ...0.01, 0.025, ..., 1, 2.5: 0.02 s in le=0.025, 1.5 s in le=2.5.
  const auto& b = m.fire_lag.bounds();
  const auto at = [&](double le) {
    return lag.cumulative[static_cast<std::size_t>(std::find(b.begin(), b.end(), le) - b.begin())];
  };
  EXPECT_EQ(at(0.01), 0U);
  EXPECT_EQ(at(0.025), 1U);
  EXPECT_EQ(at(1), 1U);
  EXPECT_EQ(at(2.5), 2U);
}

struct Store final : SchedulerStore {
  ScanOutcome Scan(std::string_view, int, ringwheel::Clock& c, ScanPlanner&) override {
    if (fail) throw std::runtime_error("database down");
    static_cast<cwtest::FakeClock&>(c).Advance(40ms);  // the scan takes 40 ms
    ScanOutcome out;
    out.jobs_read = 3;
    out.full_batch = full;
    out.fires = {{.log_id = 1}, {.log_id = 2, .skipped = true}, {.log_id = 3, .skipped = true}};
    out.partitions_total = 60;
    out.partitions_held = 20;
    out.lock_wait = 3ms;
    return out;
  }
  std::vector<ClaimedFire> ClaimForDispatch(std::string_view, std::span<const std::int64_t>, std::int64_t,
                                            std::span<const std::int64_t>) override {
    return {{.log_id = 9}};
  }
  std::vector<ClaimedFire> OwnUnclaimed(std::string_view, std::int64_t, int) override { return {}; }
  std::uint64_t CommitsInDoubt() override { return 0; }
  std::vector<std::int64_t> WithdrawnAt(std::span<const std::int64_t>) override { return {}; }
  void MarkSkipped(std::span<const std::int64_t> ids, std::string_view) override { skipped += ids.size(); }
  std::vector<std::int64_t> CreateShards(std::int64_t base, int, std::string_view, std::int64_t) override {
    return {base};
  }
  bool fail = false;
  bool full = false;
  std::size_t skipped = 0;
};

TEST_F(MeteredSeams, ScansAndSkippedMisfires) {
  Store inner;
  MeteredSchedulerStore store(inner, m, clock);
  ScanPlanner planner;  // the fake never plans
  EXPECT_EQ(store.Scan("a", 10, clock, planner).fires.size(), 3U);
  inner.full = true;
  store.Scan("a", 10, clock, planner);
  inner.fail = true;
  EXPECT_THROW(store.Scan("a", 10, clock, planner), std::runtime_error);
  const std::int64_t late[] = {5, 6};
  store.MarkSkipped(late, "late");
  EXPECT_EQ(inner.skipped, 2U);
  EXPECT_EQ(store.ClaimForDispatch("a", late, 0, {}).front().log_id, 9);

  EXPECT_EQ(m.scans_ok.value(), 1U);
  EXPECT_EQ(m.scans_full_batch.value(), 1U);
  EXPECT_EQ(m.scans_error.value(), 1U);
  EXPECT_EQ(m.fires_skipped_misfire.value(), 2U + 2U + 2U);  // 2 per scan written, 2 marked late
  EXPECT_EQ(m.scan_duration.snapshot().count(), 3U);
  EXPECT_DOUBLE_EQ(m.scan_duration.snapshot().sum, 0.08);  // two scans of 40 ms, the failed one 0
  EXPECT_EQ(m.scan_jobs_read.snapshot().count(), 2U);
  EXPECT_DOUBLE_EQ(m.scan_lock_wait.snapshot().sum, 0.006);
  EXPECT_EQ(m.partitions_held.value(), 20);
  EXPECT_EQ(m.partitions_total.value(), 60);
  EXPECT_EQ(m.scan_last_success.value(), static_cast<double>(clock.NowMs()) / 1000.0);
}

struct Client final : cwtest::AnsweringExecutorClient {
  RunReply Run(const std::string&, const std::string&, const xxljob::TriggerParam&) override {
    return {code == 200 ? xxljob::Envelope::Success() : xxljob::Envelope::Fail("refused")};
  }
  xxljob::Envelope IdleBeat(const std::string&, const std::string&, int) override {
    return xxljob::Envelope::Fail("busy");
  }
  int code = 200;
};

TEST_F(MeteredSeams, ExecutorRequestsByMethodAndResult) {
  Client inner;
  MeteredExecutorClient client(inner, m, clock);
  EXPECT_EQ(client.Run("a", "t", {}).envelope.code, 200);
  inner.code = 500;
  EXPECT_EQ(client.Run("a", "t", {}).envelope.code, 500);
  client.Beat("a", "t");
  client.IdleBeat("a", "t", 1);
  EXPECT_EQ(m.run.success.value(), 1U);
  EXPECT_EQ(m.run.failure.value(), 1U);
  EXPECT_EQ(m.run.duration.snapshot().count(), 2U);
  EXPECT_EQ(m.beat.success.value(), 1U);
  EXPECT_EQ(m.idle_beat.failure.value(), 1U);
  EXPECT_EQ(m.kill.success.value() + m.kill.failure.value(), 0U);
}

struct Alarms final : AlarmSender {
  AlarmOutcome Send(const AlarmEvent& e) override {
    return {.attempted = e.log_id != 0, .ok = e.log_id == 1, .message = ""};
  }
};

TEST_F(MeteredSeams, AlarmsSentAndFailedButNotTheJobsWithoutAChannel) {
  Alarms inner;
  MeteredAlarmSender alarms(inner, m);
  alarms.Send({.log_id = 1});
  alarms.Send({.log_id = 2});
  alarms.Send({.log_id = 0});  // no channel configured: nothing attempted
  EXPECT_EQ(m.alarms_sent.value(), 1U);
  EXPECT_EQ(m.alarms_failed.value(), 1U);
}

}  // namespace
