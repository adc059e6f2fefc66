// The trigger procedure's delivery rules (docs/architecture.md, "Delivery to executors") on a fake clock,
// with an in-memory catalog and scheduler store and a fake executor client that says how far each /run got:
//  * a /run that could not reach the executor is sent again, routed afresh, within the misfire threshold,
//    and recorded only once it is answered or the threshold has passed, with every attempt in the message;
//  * a /run the executor may have received is recorded as failed at once and never sent again;
//  * FAILOVER sends to the first executor that answers its beat; a SHARDING_BROADCAST fire becomes one row
//    per executor, shard i to executor i; a manual trigger reaches only an address of the job's group;
//  * a fire whose job or group is gone, or whose group has no executor, is recorded failed saying so;
//  * a fire a draining executor refused unrun goes elsewhere at once, and that executor is routed around.
#include "admin/dispatch/trigger_service.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <mutex>
#include <optional>
#include <set>

#include "admin/dispatch/job_catalog.hpp"
#include "admin/dispatch/route_strategies.hpp"
#include "cwtest/answering_executor_client.hpp"
#include "cwtest/fake_clock.hpp"
#include "cwtest/memory_catalog_source.hpp"
#include "cwtest/memory_scheduler_store.hpp"
#include "xxljob/vocabulary.hpp"

namespace {

using namespace cronwheel::admin;
namespace xxljob = cronwheel::xxljob;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z
const std::string kExecutorA = "http://127.0.0.1:9001/";
const std::string kExecutorB = "http://127.0.0.1:9002/";

// Answers each /run with the next scripted delivery (then kAnswered), and records where each went; /beat
// fails for the addresses in `dead`; an address in `draining` answers /run and /beat as a draining
// cronwheel-executor does.
class ScriptedExecutors final : public cwtest::AnsweringExecutorClient {
 public:
  std::deque<Delivery> script;
  std::vector<std::string> runs;
  std::vector<xxljob::TriggerParam> params;
  std::set<std::string> dead;
  std::set<std::string> draining;
  std::vector<std::int64_t> send_by_ms;    // what each RunAsync was told
  std::optional<xxljob::Envelope> answer;  // the answer of a /run that arrived (else success)

  void RunAsync(const std::string& address, const std::string& token, const xxljob::TriggerParam& p,
                std::int64_t send_by, RunDone done) override {
    {
      std::lock_guard lock(mu_);
      send_by_ms.push_back(send_by);
    }
    done(Run(address, token, p));
  }
  RunReply Run(const std::string& address, const std::string&, const xxljob::TriggerParam& p) override {
    std::lock_guard lock(mu_);
    runs.push_back(address);
    params.push_back(p);
    if (draining.contains(address))
      return {xxljob::Envelope::Fail(std::string(xxljob::kDrainingMsg)), Delivery::kAnswered};
    if (script.empty()) return {answer.value_or(xxljob::Envelope::Success()), Delivery::kAnswered};
    const auto d = script.front();
    script.pop_front();
    if (d == Delivery::kNotSent) return {xxljob::Envelope::Fail("the executor could not be reached"), d};
    return {xxljob::Envelope::Fail("no answer after the request was sent"), d};
  }
  xxljob::Envelope Beat(const std::string& address, const std::string&) override {
    return dead.contains(address) ? xxljob::Envelope::Fail("the executor could not be reached")
                                  : xxljob::Envelope::Success();
  }

 private:
  std::mutex mu_;
};

class Results final : public TriggerRecorder {
 public:
  void Record(TriggerResult r) override { recorded.push_back(std::move(r)); }
  std::vector<TriggerResult> recorded;
};

class TriggerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    group_.id = 1;
    group_.app_name = "manual-app";
    group_.address_type = AddressType::kManual;
    group_.addresses = {kExecutorA, kExecutorB};
    source_.PutGroup(group_);
    job_.id = 7;
    job_.group_id = 1;
    job_.handler = "demoJobHandler";
    job_.param = "stored";
    job_.schedule_type = "CRON";
    job_.schedule_conf = "* * * * * ?";
    job_.route_strategy = RouteStrategy::kRound;
    source_.PutJob(job_);
    store_.AddJob(cwtest::EverySecondJob(job_.id, kT0));
  }
  void SetRoute(RouteStrategy route) {
    job_.route_strategy = route;
    source_.PutJob(job_);
    catalog_.InvalidateJob(job_.id);
  }
  Fire FireAt(std::int64_t scheduled_ms) {
    Fire f;
    f.log_id = store_.InsertFire(job_.id, TriggerType::kCron, scheduled_ms, "admin-t");
    f.job_id = job_.id;
    f.scheduled_ms = scheduled_ms;
    return f;
  }
  Fire FireDueNow() { return FireAt(clock_.NowMs()); }
  // Triggers `fire`, then every resend after its delay on the fake clock; returns the attempts made.
  int TriggerUntilRecorded(const Fire& fire) {
    int attempts = 1;
    service_.Trigger(fire, {});
    while (!resent_.empty()) {
      auto [again, delay] = std::move(resent_.front());
      resent_.clear();
      clock_.Advance(delay);
      service_.Trigger(again, {});
      ++attempts;
    }
    return attempts;
  }

  cwtest::FakeClock clock_{kT0};
  JobGroup group_;
  Job job_;
  cwtest::MemoryCatalogSource source_;
  JobCatalog catalog_{{.listen = false}, clock_, source_};
  cwtest::MemorySchedulerStore store_;
  ScriptedExecutors executors_;
  Results results_;
  RouterSet routers_{executors_};
  std::vector<std::pair<Fire, std::chrono::milliseconds>> resent_;
  TriggerService service_{
      {.node_id = "admin-t", .access_token = "global", .misfire_threshold = std::chrono::milliseconds(5000)},
      clock_,
      catalog_,
      executors_,
      results_,
      [this](RouteStrategy s) -> Router& { return routers_.For(s); },
      store_,
      [this](Fire f, std::chrono::milliseconds delay) { resent_.emplace_back(std::move(f), delay); }};
};

// Issue 25, item 5: a draining executor refuses /run without running the fire. The fire goes to another
// executor at once (no back-off), and the draining one is left out of every route for the hold (FIRST
// would choose it every time), then asked again; with every address draining the fire is recorded failed.
TEST_F(TriggerServiceTest, AFireADrainingExecutorRefusedGoesElsewhereAtOnceAndItIsRoutedAround) {
  SetRoute(RouteStrategy::kFirst);
  executors_.draining = {kExecutorA};
  EXPECT_EQ(TriggerUntilRecorded(FireDueNow()), 2);
  EXPECT_EQ(executors_.runs, (std::vector<std::string>{kExecutorA, kExecutorB}));
  ASSERT_EQ(results_.recorded.size(), 1u);
  EXPECT_EQ(results_.recorded[0].trigger_code, 200);
  EXPECT_EQ(results_.recorded[0].executor_address, kExecutorB);
  EXPECT_THAT(results_.recorded[0].trigger_msg, HasSubstr("sent again after 0 ms"));
  EXPECT_THAT(results_.recorded[0].trigger_msg, HasSubstr(std::string(xxljob::kDrainingMsg)));

  executors_.runs.clear();
  clock_.Advance(std::chrono::seconds(29));
  EXPECT_EQ(TriggerUntilRecorded(FireDueNow()), 1);
  EXPECT_EQ(executors_.runs, (std::vector<std::string>{kExecutorB})) << "routed around while draining";

  executors_.draining.clear();  // restarted, say
  clock_.Advance(std::chrono::seconds(2));
  EXPECT_EQ(TriggerUntilRecorded(FireDueNow()), 1);
  EXPECT_EQ(executors_.runs.back(), kExecutorA) << "asked again once the hold has passed";

  executors_.draining = {kExecutorA, kExecutorB};
  results_.recorded.clear();
  EXPECT_EQ(TriggerUntilRecorded(FireDueNow()), 3);
  ASSERT_EQ(results_.recorded.size(), 1u);
  EXPECT_NE(results_.recorded[0].trigger_code, 200);
  EXPECT_THAT(results_.recorded[0].trigger_msg, HasSubstr("every executor address of the group is draining"));
}

TEST_F(TriggerServiceTest, AFireThatCouldNotReachTheExecutorIsSentAgainRoutedAfreshAndRecordedOnce) {
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

TEST_F(TriggerServiceTest, AFireThatCannotReachAnyExecutorIsRecordedFailedOnceTheMisfireThresholdPasses) {
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

TEST_F(TriggerServiceTest, AFireTheExecutorMayHaveReceivedIsRecordedFailedAndNeverSentAgain) {
  executors_.script = {ExecutorClient::Delivery::kUnknown};
  EXPECT_EQ(TriggerUntilRecorded(FireDueNow()), 1);
  ASSERT_EQ(results_.recorded.size(), 1u);
  EXPECT_NE(results_.recorded[0].trigger_code, 200);
  EXPECT_THAT(results_.recorded[0].trigger_msg, HasSubstr("not sent again (the executor may have run it)"));
  EXPECT_EQ(executors_.runs.size(), 1u);
}

// An executor that holds the fire's log id already (queued or running: an earlier send of it arrived, this
// admin's or a peer's that recovered it) refuses the /run with "repeat trigger job". The fire runs there
// once: it is recorded accepted, so no retry runs it a second time. Another log id's refusal is a failure.
TEST_F(TriggerServiceTest, AnExecutorThatHoldsTheFireAlreadyHasItRecordedAcceptedInEitherSpelling) {
  const auto fire = FireDueNow();
  executors_.answer = xxljob::Envelope::Fail(xxljob::RepeatTriggerMsg(fire.log_id));
  EXPECT_EQ(TriggerUntilRecorded(fire), 1);
  ASSERT_EQ(results_.recorded.size(), 1u);
  EXPECT_EQ(results_.recorded[0].trigger_code, 200);
  EXPECT_THAT(results_.recorded[0].trigger_msg,
              HasSubstr(fmt::format("code 500: repeat trigger job, logId:{}", fire.log_id)));
  EXPECT_THAT(results_.recorded[0].trigger_msg,
              HasSubstr("recorded as accepted: the executor holds this fire"));

  const auto old_spelling = FireDueNow();
  executors_.answer =
      xxljob::Envelope::Fail(fmt::format("repeate trigger job, logId:{}", old_spelling.log_id));
  TriggerUntilRecorded(old_spelling);
  ASSERT_EQ(results_.recorded.size(), 2u);
  EXPECT_EQ(results_.recorded[1].trigger_code, 200);

  const auto other = FireDueNow();
  executors_.answer = xxljob::Envelope::Fail(xxljob::RepeatTriggerMsg(other.log_id + 1000));
  TriggerUntilRecorded(other);
  ASSERT_EQ(results_.recorded.size(), 3u);
  EXPECT_EQ(results_.recorded[2].trigger_code, 500);
  EXPECT_THAT(results_.recorded[2].trigger_msg, Not(HasSubstr("recorded as accepted")));
}

TEST_F(TriggerServiceTest, AResendWaitsNoLongerThanTheThresholdAllowsForAnOldFire) {
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

TEST_F(TriggerServiceTest, AFireMayWaitForTheAdminsOwnConnectionsUntilItsMisfireThresholdAndNoLonger) {
  // The client holds a fire while its connections to the executor are busy: until the fire's instant plus
  // the misfire threshold, however late the fire already is.
  auto late = FireDueNow();
  late.scheduled_ms -= 1200;
  service_.Trigger(late, {});
  service_.Trigger(FireDueNow(), {});
  ASSERT_EQ(executors_.send_by_ms.size(), 2u);
  EXPECT_EQ(executors_.send_by_ms[0], kT0 - 1200 + 5000);
  EXPECT_EQ(executors_.send_by_ms[1], kT0 + 5000);
}

TEST_F(TriggerServiceTest, FailoverSendsToTheFirstExecutorThatAnswersItsBeat) {
  SetRoute(RouteStrategy::kFailover);
  executors_.dead = {kExecutorA};
  EXPECT_EQ(TriggerUntilRecorded(FireDueNow()), 1);
  ASSERT_EQ(executors_.runs.size(), 1u);
  EXPECT_EQ(executors_.runs[0], kExecutorB);
  ASSERT_EQ(results_.recorded.size(), 1u);
  EXPECT_EQ(results_.recorded[0].trigger_code, 200);
  executors_.dead = {kExecutorA, kExecutorB};
  EXPECT_EQ(TriggerUntilRecorded(FireDueNow()), 1);
  ASSERT_EQ(results_.recorded.size(), 2u);
  EXPECT_NE(results_.recorded[1].trigger_code, 200);
  EXPECT_EQ(executors_.runs.size(), 1u) << "no executor answered its beat: nothing is sent";
}

TEST_F(TriggerServiceTest, ABroadcastBecomesOneRowPerExecutorAndShardIGoesToExecutorI) {
  SetRoute(RouteStrategy::kShardingBroadcast);
  bool done = false;
  service_.Trigger(FireDueNow(), [&] { done = true; });
  EXPECT_TRUE(done) << "done runs once every shard's outcome is recorded";
  ASSERT_EQ(executors_.params.size(), 2u);
  ASSERT_EQ(results_.recorded.size(), 2u);
  std::set<std::int64_t> log_ids;
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& p = executors_.params[i];
    EXPECT_EQ(p.broadcast_total, 2);
    EXPECT_EQ(executors_.runs[i], p.broadcast_index == 0 ? kExecutorA : kExecutorB);
    log_ids.insert(p.log_id);
  }
  EXPECT_EQ(log_ids.size(), 2u) << "each shard is a fire of its own";
  EXPECT_EQ(store_.Logs().size(), 2u) << "the fire's row is shard 0, one row was added for shard 1";
}

TEST_F(TriggerServiceTest, AManualTriggerReachesOnlyAnAddressOfTheJobsGroup) {
  auto fire = FireDueNow();
  fire.type = TriggerType::kManual;
  fire.address = "http://10.0.0.1:9999/";
  fire.param = "given";
  TriggerUntilRecorded(fire);
  ASSERT_EQ(results_.recorded.size(), 1u);
  EXPECT_THAT(results_.recorded[0].trigger_msg, HasSubstr("is not registered or configured for group"));
  EXPECT_TRUE(executors_.runs.empty());
  fire.address = "http://127.0.0.1:9002";  // the group's, written without its slash
  TriggerUntilRecorded(fire);
  ASSERT_EQ(executors_.runs.size(), 1u);
  EXPECT_EQ(executors_.runs[0], kExecutorB);
  EXPECT_EQ(executors_.params[0].executor_params, "given") << "the trigger's parameter, not the job's";
}

TEST_F(TriggerServiceTest, AFireWhoseJobIsGoneOrWhoseGroupHasNoExecutorIsRecordedFailedSayingSo) {
  const auto fire = FireDueNow();
  source_.RemoveJob(job_.id);
  catalog_.InvalidateJob(job_.id);
  TriggerUntilRecorded(fire);
  ASSERT_EQ(results_.recorded.size(), 1u);
  EXPECT_THAT(results_.recorded[0].trigger_msg, HasSubstr("job 7 does not exist any more"));
  source_.PutJob(job_);
  catalog_.InvalidateJob(job_.id);
  group_.addresses.clear();
  source_.PutGroup(group_);
  catalog_.InvalidateGroup(group_.id);
  TriggerUntilRecorded(FireDueNow());
  ASSERT_EQ(results_.recorded.size(), 2u);
  EXPECT_THAT(results_.recorded[1].trigger_msg, HasSubstr("the group has no configured address"));
  EXPECT_TRUE(executors_.runs.empty());
}

}  // namespace

// Ahead-of-time dispatch: a fire handed on before its instant goes at once only to an executor that holds
// fires (its registration announced runAt) with a clock within max_clock_offset, carrying runAtMs = the
// instant on that executor's clock; otherwise it is given back for its instant, with the address its route
// chose, so the route strategy is not advanced twice; a group where no executor holds fires is given back
// before routing.
class AheadTriggerTest : public TriggerServiceTest {
 protected:
  void SetUp() override {
    TriggerServiceTest::SetUp();
    source_.Register("manual-app", kExecutorA, kT0, ExecutorClock{.offset_ms = 3, .error_ms = 1});
    source_.Register("manual-app", kExecutorB, kT0);  // an XXL-JOB executor
    catalog_.RefreshRegistry();
  }
  std::vector<Fire> deferred_;
  TriggerService ahead_{
      {.node_id = "admin-t",
       .access_token = "global",
       .misfire_threshold = std::chrono::milliseconds(5000),
       .max_clock_offset = std::chrono::milliseconds(50)},
      clock_,
      catalog_,
      executors_,
      results_,
      [this](RouteStrategy s) -> Router& { return routers_.For(s); },
      store_,
      [this](Fire f, std::chrono::milliseconds delay) { resent_.emplace_back(std::move(f), delay); },
      [this](Fire f) { deferred_.push_back(std::move(f)); },
      [this](const Fire& f, const std::string& address, const std::string& token) {
        held_.push_back({f, address, token});
      }};
  struct Held {
    Fire fire;
    std::string address;
    std::string token;
  };
  std::vector<Held> held_;  // what the trigger told the watch
};

TEST_F(AheadTriggerTest, AFireGoesAheadToAnExecutorThatHoldsFiresWithTheInstantOnItsClock) {
  SetRoute(RouteStrategy::kFirst);  // A
  ahead_.Trigger(FireAt(kT0 + 1000), {});
  ASSERT_EQ(executors_.params.size(), 1u);
  EXPECT_EQ(executors_.runs[0], kExecutorA);
  EXPECT_EQ(executors_.params[0].run_at_ms, kT0 + 1000 + 3 + 1) << "the instant on A's clock, at its latest";
  EXPECT_TRUE(deferred_.empty());
  ASSERT_EQ(results_.recorded.size(), 1u);
  EXPECT_EQ(results_.recorded[0].trigger_code, 200);
  EXPECT_EQ(results_.recorded[0].trigger_ms, kT0) << "sent a second before its instant";
}

// A fire its executor lost before the instant (AheadWatch found it gone) is routed afresh and sent again,
// and its row says why; an address that refused the connection is left out of routes meanwhile.
TEST_F(AheadTriggerTest, AFireItsExecutorLostAheadIsRoutedAgainAroundTheAddressThatRefused) {
  SetRoute(RouteStrategy::kFirst);  // A
  ahead_.Trigger(FireAt(kT0 + 1000), {});
  ASSERT_EQ(held_.size(), 1u) << "an accepted fire sent ahead is watched";
  EXPECT_EQ(held_[0].address, kExecutorA);
  EXPECT_EQ(held_[0].token, "global");
  clock_.Advance(std::chrono::milliseconds(900));
  ahead_.RouteAgain(held_[0].fire, kExecutorA, /*refused=*/true, "A refused a connection 100 ms before");
  ASSERT_EQ(resent_.size(), 1u);
  EXPECT_EQ(resent_[0].second, std::chrono::milliseconds(0)) << "at once";
  ahead_.Trigger(resent_[0].first, {});
  ASSERT_EQ(deferred_.size(), 1u) << "without A, no address holds fires: B gets it at the instant";
  EXPECT_EQ(executors_.runs.size(), 1u);
  clock_.Advance(std::chrono::milliseconds(100));
  ahead_.Trigger(deferred_[0], {});
  ASSERT_EQ(executors_.runs.size(), 2u);
  EXPECT_EQ(executors_.runs[1], kExecutorB) << "FIRST routes around the address that refused";
  EXPECT_EQ(executors_.params[1].run_at_ms, 0);
  ASSERT_EQ(results_.recorded.size(), 2u);
  EXPECT_THAT(results_.recorded[1].trigger_msg, HasSubstr(kExecutorB));
  EXPECT_THAT(results_.recorded[1].trigger_msg, HasSubstr("A refused a connection 100 ms before"));
  ahead_.Trigger(FireAt(kT0 + 3000), {});
  EXPECT_EQ(held_.size(), 1u) << "A is routed around for draining_hold: nothing goes ahead to it";
}

TEST_F(AheadTriggerTest, AFireRoutedToAnExecutorThatCannotHoldItGoesThereAtItsInstant) {
  SetRoute(RouteStrategy::kLast);  // B, an XXL-JOB executor
  ahead_.Trigger(FireAt(kT0 + 1000), {});
  EXPECT_TRUE(executors_.runs.empty()) << "nothing is sent before the instant";
  ASSERT_EQ(deferred_.size(), 1u);
  EXPECT_EQ(deferred_[0].routed_address, kExecutorB);
  clock_.Advance(std::chrono::milliseconds(1000));
  SetRoute(RouteStrategy::kFirst);  // changed meanwhile: the fire keeps the address its route chose
  ahead_.Trigger(deferred_[0], {});
  ASSERT_EQ(executors_.params.size(), 1u);
  EXPECT_EQ(executors_.runs[0], kExecutorB);
  EXPECT_EQ(executors_.params[0].run_at_ms, 0) << "an XXL-JOB /run, byte for byte";
}

TEST_F(AheadTriggerTest,
       AGroupWithoutAnExecutorThatHoldsFiresIsGivenBackBeforeRoutingAndRoutedOnceAtTheInstant) {
  source_.Register("manual-app", kExecutorA, kT0);  // A no longer announces runAt
  catalog_.RefreshRegistry();
  std::vector<Fire> fires;
  fires.reserve(4);
  for (int i = 0; i < 4; ++i)
    fires.push_back(FireAt(kT0 + 1000));
  for (const auto& f : fires)
    ahead_.Trigger(f, {});
  EXPECT_TRUE(executors_.runs.empty());
  ASSERT_EQ(deferred_.size(), 4u);
  EXPECT_FALSE(deferred_[0].routed_address) << "not routed yet";
  clock_.Advance(std::chrono::milliseconds(1000));
  for (const auto& f : deferred_)
    ahead_.Trigger(f, {});
  ASSERT_EQ(executors_.runs.size(), 4u);
  // ROUND advanced once per fire: the four alternate.
  EXPECT_NE(executors_.runs[0], executors_.runs[1]);
  EXPECT_EQ(executors_.runs[0], executors_.runs[2]);
  EXPECT_EQ(executors_.runs[1], executors_.runs[3]);
}

TEST_F(AheadTriggerTest, AnExecutorWhoseClockIsOffByMoreThanTheBoundGetsItsFiresAtTheirInstant) {
  source_.Register("manual-app", kExecutorA, kT0, ExecutorClock{.offset_ms = -45, .error_ms = 6});
  catalog_.RefreshRegistry();
  SetRoute(RouteStrategy::kFirst);
  ahead_.Trigger(FireAt(kT0 + 1000), {});
  EXPECT_TRUE(executors_.runs.empty());
  ASSERT_EQ(deferred_.size(), 1u);
  clock_.Advance(std::chrono::milliseconds(1000));
  ahead_.Trigger(deferred_[0], {});
  ASSERT_EQ(executors_.params.size(), 1u);
  EXPECT_EQ(executors_.runs[0], kExecutorA);
  EXPECT_EQ(executors_.params[0].run_at_ms, 0);
}
