// The trigger procedure's delivery rules (docs/architecture.md, "Delivery to executors"), with a real
// PostgreSQL behind the job catalog and a fake executor client that says how far each /run got:
//  * a /run that could not reach the executor is sent again, routed afresh, within the misfire threshold,
//    and recorded only once it is answered or the threshold has passed, with every attempt in the message;
//  * a /run the executor may have received is recorded as failed at once and never sent again.
#include "admin/dispatch/trigger_service.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>

#include "admin/dispatch/job_catalog.hpp"
#include "admin/dispatch/route_strategies.hpp"
#include "admin/store/pg_catalog_source.hpp"
#include "admin/store/pg_scheduler_store.hpp"
#include "cwtest/answering_executor_client.hpp"
#include "cwtest/fake_clock.hpp"
#include "pg_fixture.hpp"

namespace {

using namespace cronwheel::admin;
namespace xxljob = cronwheel::xxljob;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z

// Answers each /run with the next scripted delivery (then kAnswered), and records the addresses.
class ScriptedExecutors final : public cwtest::AnsweringExecutorClient {
 public:
  std::deque<Delivery> script;
  std::vector<std::string> runs;
  RunReply Run(const std::string& address, const std::string&, const xxljob::TriggerParam&) override {
    runs.push_back(address);
    if (script.empty()) return {xxljob::Envelope::Success(), Delivery::kAnswered};
    const auto d = script.front();
    script.pop_front();
    if (d == Delivery::kNotSent)
      return {xxljob::Envelope::Fail("request to " + address + "run not sent: Connection"), d};
    return {xxljob::Envelope::Fail("request to " + address + "run failed after it was sent (Read)"), d};
  }
};

class Results final : public TriggerRecorder {
 public:
  void Record(TriggerResult r) override { recorded.push_back(std::move(r)); }
  std::vector<TriggerResult> recorded;
};

class TriggerServicePg : public cwtest::PgFixture {
 protected:
  void SetUp() override {
    PgFixture::SetUp();
    group_ = AddGroup("manual-app", ", address_type, addresses",
                      ", 'MANUAL', '{http://127.0.0.1:9001/,http://127.0.0.1:9002/}'");
    job_ = AddJob(group_, "* * * * * ?", 0);
    Exec(fmt::format("UPDATE job SET route_strategy = 'ROUND' WHERE id = {}", job_));
    catalog_source_ = std::make_unique<PgCatalogSource>(*pool_);
    catalog_ = std::make_unique<JobCatalog>(JobCatalog::Settings{.listen = false}, clock_, *catalog_source_);
    store_ = std::make_unique<PgSchedulerStore>(*pool_);
    service_ = std::make_unique<TriggerService>(
        TriggerService::Settings{.node_id = "admin-t", .misfire_threshold = std::chrono::milliseconds(5000)},
        clock_, *catalog_, executors_, results_,
        [this](RouteStrategy s) -> Router& { return routers_.For(s); }, *store_,
        [this](Fire f, std::chrono::milliseconds delay) { resent_.emplace_back(std::move(f), delay); });
  }
  Fire FireDueNow() {
    Fire f;
    f.log_id = 1;
    f.job_id = job_;
    f.scheduled_ms = clock_.NowMs();
    return f;
  }
  // Triggers `fire`, then every resend after its delay on the fake clock; returns the attempts made.
  int TriggerUntilRecorded(Fire fire) {
    int attempts = 1;
    service_->Trigger(fire, {});
    while (!resent_.empty()) {
      auto [again, delay] = std::move(resent_.front());
      resent_.clear();
      clock_.Advance(delay);
      service_->Trigger(again, {});
      ++attempts;
    }
    return attempts;
  }

  cwtest::FakeClock clock_{kT0};
  int group_ = 0;
  int job_ = 0;
  ScriptedExecutors executors_;
  Results results_;
  RouterSet routers_{executors_};
  std::unique_ptr<PgCatalogSource> catalog_source_;
  std::unique_ptr<JobCatalog> catalog_;
  std::unique_ptr<PgSchedulerStore> store_;
  std::unique_ptr<TriggerService> service_;
  std::vector<std::pair<Fire, std::chrono::milliseconds>> resent_;
};

TEST_F(TriggerServicePg, AFireThatCouldNotReachTheExecutorIsSentAgainRoutedAfreshAndRecordedOnce) {
  executors_.script = {ExecutorClient::Delivery::kNotSent, ExecutorClient::Delivery::kNotSent};
  EXPECT_EQ(TriggerUntilRecorded(FireDueNow()), 3);
  ASSERT_EQ(results_.recorded.size(), 1u) << "nothing is recorded while the fire can still be sent";
  const auto& r = results_.recorded[0];
  EXPECT_EQ(r.trigger_code, 200);
  // ROUND routes each attempt afresh: the attempts went to both executors in turn (from a random start).
  ASSERT_EQ(executors_.runs.size(), 3u);
  EXPECT_NE(executors_.runs[0], executors_.runs[1]);
  EXPECT_EQ(executors_.runs[0], executors_.runs[2]);
  EXPECT_THAT(r.trigger_msg, HasSubstr("attempt 1 to " + executors_.runs[0] + " not sent"));
  EXPECT_THAT(r.trigger_msg, HasSubstr("attempt 2 to " + executors_.runs[1] + " not sent"));
  EXPECT_THAT(r.trigger_msg, HasSubstr("sent again after 200 ms"));
  EXPECT_EQ(r.executor_address, executors_.runs[2]);
}

TEST_F(TriggerServicePg, AFireThatCannotReachAnyExecutorIsRecordedFailedOnceTheMisfireThresholdPasses) {
  executors_.script.assign(100, ExecutorClient::Delivery::kNotSent);
  const auto fire = FireDueNow();
  const int attempts = TriggerUntilRecorded(fire);
  ASSERT_EQ(results_.recorded.size(), 1u);
  const auto& r = results_.recorded[0];
  EXPECT_NE(r.trigger_code, 200);
  EXPECT_THAT(r.trigger_msg, HasSubstr("not sent within the misfire threshold (5000 ms"));
  EXPECT_THAT(r.trigger_msg, HasSubstr(fmt::format("after {} attempt(s)", attempts)));
  // Back-off 100, 200, 400, 800, then 1000 ms: the last attempt falls within the threshold, no later.
  EXPECT_LE(clock_.NowMs(), fire.scheduled_ms + 5000);
  EXPECT_GT(clock_.NowMs() + 1000, fire.scheduled_ms + 5000);
  EXPECT_EQ(attempts, 8);  // at 0, 0.1, 0.3, 0.7, 1.5, 2.5, 3.5, 4.5 s
}

TEST_F(TriggerServicePg, AFireTheExecutorMayHaveReceivedIsRecordedFailedAndNeverSentAgain) {
  executors_.script = {ExecutorClient::Delivery::kUnknown};
  EXPECT_EQ(TriggerUntilRecorded(FireDueNow()), 1);
  ASSERT_EQ(results_.recorded.size(), 1u);
  EXPECT_NE(results_.recorded[0].trigger_code, 200);
  EXPECT_THAT(results_.recorded[0].trigger_msg, HasSubstr("not sent again (the executor may have run it)"));
  EXPECT_EQ(executors_.runs.size(), 1u);
}

TEST_F(TriggerServicePg, AResendWaitsNoLongerThanTheThresholdAllowsForAnOldFire) {
  // A fire already 4.95 s late (recovered from a dead admin, say): a 100 ms back-off would pass the
  // threshold.
  executors_.script = {ExecutorClient::Delivery::kNotSent};
  auto fire = FireDueNow();
  fire.scheduled_ms -= 4950;
  EXPECT_EQ(TriggerUntilRecorded(fire), 1);
  ASSERT_EQ(results_.recorded.size(), 1u);
  EXPECT_THAT(results_.recorded[0].trigger_msg, HasSubstr("not sent within the misfire threshold"));
  EXPECT_THAT(results_.recorded[0].trigger_msg, Not(HasSubstr("sent again after")));
}

}  // namespace
