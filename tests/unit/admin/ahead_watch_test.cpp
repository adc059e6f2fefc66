// AheadWatch on a fake clock with a scripted executor client (docs/architecture.md, "Ahead-of-time
// dispatch"): one /accepted per executor and instant, `check_before` ahead of it; a fire is lost only on
// evidence that came before its instant (a refused connection, or an answer without it), and anything else
// changes nothing.
#include "admin/dispatch/ahead_watch.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cwtest/answering_executor_client.hpp"
#include "cwtest/fake_clock.hpp"
#include "xxljob/protocol.hpp"

namespace {

using namespace cronwheel::admin;
namespace xxljob = cronwheel::xxljob;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z
const std::string kA = "http://127.0.0.1:9001/";
const std::string kB = "http://127.0.0.1:9002/";

// Records each /accepted and keeps its `done` for the test to answer.
class AskedExecutors final : public cwtest::AnsweringExecutorClient {
 public:
  struct Asked {
    std::string address;
    std::string token;
    std::vector<std::int64_t> log_ids;
    RunDone done;
  };
  std::vector<Asked> asked;
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> cancelled;  // address, log ids
  xxljob::Envelope Cancel(const std::string& address, const std::string&,
                          const xxljob::CancelParam& param) override {
    cancelled.emplace_back(address, param.log_ids);
    return {xxljob::kCodeSuccess, "", nlohmann::json{{"cancelled", param.log_ids}}};
  }
  void AcceptedAsync(const std::string& address, const std::string& token, const xxljob::CancelParam& param,
                     RunDone done) override {
    asked.push_back({address, token, param.log_ids, std::move(done)});
  }
};

class AheadWatchTest : public ::testing::Test {
 protected:
  struct Timed {
    std::function<void()> task;
    std::chrono::milliseconds delay;
    std::int64_t due_ms;
  };
  struct LostFire {
    Fire fire;
    std::string address;
    bool refused;
    std::string why;
  };

  Fire HeldFor(std::int64_t log_id, std::int64_t instant_ms, const std::string& address) {
    Fire f;
    f.log_id = log_id;
    f.job_id = static_cast<int>(log_id);
    f.scheduled_ms = instant_ms;
    watch_.Held(f, address, "tok");
    return f;
  }
  // Runs the armed checks whose time has come on the fake clock, in order.
  void RunChecksDue() {
    for (auto& t : timed_) {
      if (t.task && t.due_ms <= clock_.NowMs()) std::exchange(t.task, nullptr)();
    }
  }
  static ExecutorClient::RunReply AcceptedOnly(std::vector<std::int64_t> ids) {
    return {{xxljob::kCodeSuccess, "", nlohmann::json{{xxljob::kAcceptedField, ids}}},
            ExecutorClient::Delivery::kAnswered};
  }

  cwtest::FakeClock clock_{kT0};
  AskedExecutors executors_;
  std::vector<Timed> timed_;
  std::vector<LostFire> lost_;
  AheadWatch watch_{{.check_before = std::chrono::milliseconds(100)},
                    clock_,
                    executors_,
                    [this](std::function<void()> task, std::chrono::milliseconds delay) {
                      timed_.push_back({std::move(task), delay, clock_.NowMs() + delay.count()});
                    },
                    [this](Fire f, const std::string& address, bool refused, std::string why) {
                      lost_.push_back({std::move(f), address, refused, std::move(why)});
                    },
                    [this](std::int64_t instant_ms) {
                      ++withdrawn_asked_;
                      return withdrawn_.contains(instant_ms) ? withdrawn_.at(instant_ms)
                                                             : std::vector<std::int64_t>{};
                    }};
  std::map<std::int64_t, std::vector<std::int64_t>> withdrawn_;  // instant -> log ids (fire_withdrawn)
  int withdrawn_asked_ = 0;
};

// Issue 48: a fire sent ahead whose /run was on its way when its job's stop committed (the stop deleted its
// row, and found no recorded acceptance to cancel) is cancelled at its executor by the check before its
// instant, and not asked about; the other fires of that check are asked about as before.
TEST_F(AheadWatchTest, AFireWithdrawnOnItsWayIsCancelledAtItsExecutorByTheCheckNotAskedAbout) {
  HeldFor(1, kT0 + 1000, kA);
  HeldFor(2, kT0 + 1000, kA);
  HeldFor(3, kT0 + 1000, kB);
  withdrawn_[kT0 + 1000] = {2, 3, 99};  // 99: another admin's, held nowhere here
  clock_.AdvanceToWallMs(kT0 + 900);
  RunChecksDue();
  EXPECT_EQ(withdrawn_asked_, 2) << "once per check";
  ASSERT_EQ(executors_.cancelled.size(), 2u);
  EXPECT_EQ(executors_.cancelled[0], (std::pair<std::string, std::vector<std::int64_t>>{kA, {2}}));
  EXPECT_EQ(executors_.cancelled[1], (std::pair<std::string, std::vector<std::int64_t>>{kB, {3}}));
  ASSERT_EQ(executors_.asked.size(), 1u) << "kB's only fire was withdrawn: nothing left to ask it";
  EXPECT_EQ(executors_.asked[0].address, kA);
  EXPECT_THAT(executors_.asked[0].log_ids, ElementsAre(1));
  EXPECT_EQ(watch_.stats().withdrawn, 2u);
  executors_.asked[0].done(AcceptedOnly({1}));
  EXPECT_TRUE(lost_.empty()) << "a cancelled fire is not routed again";
}

TEST_F(AheadWatchTest, AsksEachExecutorOnceBeforeEachInstantAndRoutesAgainOnlyTheFiresItNoLongerHas) {
  HeldFor(1, kT0 + 1000, kA);
  HeldFor(2, kT0 + 1000, kA);
  HeldFor(3, kT0 + 1000, kB);
  HeldFor(4, kT0 + 1000, kA);
  HeldFor(5, kT0 + 2000, kA);
  ASSERT_EQ(timed_.size(), 3u) << "one check per executor and instant";
  EXPECT_EQ(timed_[0].delay, std::chrono::milliseconds(900)) << "100 ms before the instant";
  EXPECT_EQ(timed_[2].delay, std::chrono::milliseconds(1900));
  RunChecksDue();
  EXPECT_TRUE(executors_.asked.empty()) << "not before its time";
  clock_.Advance(std::chrono::milliseconds(900));
  RunChecksDue();
  ASSERT_EQ(executors_.asked.size(), 2u);
  EXPECT_EQ(executors_.asked[0].address, kA);
  EXPECT_EQ(executors_.asked[0].token, "tok");
  EXPECT_THAT(executors_.asked[0].log_ids, ElementsAre(1, 2, 4));
  EXPECT_THAT(executors_.asked[1].log_ids, ElementsAre(3));
  clock_.Advance(std::chrono::milliseconds(2));
  executors_.asked[0].done(AcceptedOnly({1, 4}));  // A restarted after it took 1 and 4? it lost 2
  executors_.asked[1].done(AcceptedOnly({3}));
  ASSERT_EQ(lost_.size(), 1u);
  EXPECT_EQ(lost_[0].fire.log_id, 2);
  EXPECT_EQ(lost_[0].address, kA);
  EXPECT_FALSE(lost_[0].refused);
  EXPECT_THAT(lost_[0].why, HasSubstr("no longer had it 98 ms before its instant"));
  EXPECT_EQ(watch_.stats().checks, 2u);
  EXPECT_EQ(watch_.stats().lost, 1u);
}

TEST_F(AheadWatchTest, AnExecutorThatRefusesTheConnectionLostEveryFireItHeld) {
  HeldFor(1, kT0 + 1000, kA);
  HeldFor(2, kT0 + 1000, kA);
  clock_.Advance(std::chrono::milliseconds(900));
  RunChecksDue();
  ASSERT_EQ(executors_.asked.size(), 1u);
  ExecutorClient::RunReply refused{xxljob::Envelope::Fail("request to ... not sent: connection refused"),
                                   ExecutorClient::Delivery::kNotSent, true};
  executors_.asked[0].done(refused);
  ASSERT_EQ(lost_.size(), 2u);
  EXPECT_TRUE(lost_[0].refused);
  EXPECT_THAT(lost_[1].why, HasSubstr("refused a connection 100 ms before its instant"));
  // A stopped watch (the admin shuts down) acts on no answer.
  HeldFor(3, kT0 + 2000, kA);
  clock_.AdvanceToWallMs(kT0 + 1900);
  RunChecksDue();
  watch_.Stop();
  executors_.asked.back().done(refused);
  EXPECT_EQ(lost_.size(), 2u);
}

// A check that proves nothing changes nothing: the executor may still start the fire.
TEST_F(AheadWatchTest, NoAnswerALateAnswerOrAnExecutorWithoutTheCheckLosesNothing) {
  const std::vector<ExecutorClient::RunReply> inconclusive = {
      {xxljob::Envelope::Fail("not sent: timed out"), ExecutorClient::Delivery::kNotSent, false},
      {xxljob::Envelope::Fail("no connection was free"), ExecutorClient::Delivery::kNotSent, false},
      {xxljob::Envelope::Fail("no answer"), ExecutorClient::Delivery::kUnknown, false},
      {xxljob::Envelope::Fail("invalid request, uri-mapping(/accepted) not found."),
       ExecutorClient::Delivery::kAnswered, false},
      {xxljob::Envelope::Success(), ExecutorClient::Delivery::kAnswered, false},  // no "accepted"
  };
  std::int64_t instant = kT0 + 1000;
  for (const auto& reply : inconclusive) {
    HeldFor(instant / 1000, instant, kA);
    clock_.AdvanceToWallMs(instant - 100);
    RunChecksDue();
    ASSERT_FALSE(executors_.asked.empty());
    executors_.asked.back().done(reply);
    instant += 1000;
  }
  // An answer without the fire, and a refusal, both after the instant: the executor may have started it.
  for (const bool refused : {false, true}) {
    HeldFor(instant / 1000, instant, kA);
    clock_.AdvanceToWallMs(instant - 100);
    RunChecksDue();
    clock_.AdvanceToWallMs(instant);
    executors_.asked.back().done(refused ? ExecutorClient::RunReply{xxljob::Envelope::Fail("refused"),
                                                                    ExecutorClient::Delivery::kNotSent, true}
                                         : AcceptedOnly({}));
    instant += 1000;
  }
  EXPECT_TRUE(lost_.empty());
  EXPECT_EQ(watch_.stats().unanswered, inconclusive.size() + 2);
}

TEST_F(AheadWatchTest, AFireSentTooCloseToItsInstantForACheckIsNotWatched) {
  HeldFor(1, kT0 + 100, kA);
  HeldFor(2, kT0 + 50, kA);
  EXPECT_TRUE(timed_.empty());
  HeldFor(3, kT0 + 101, kA);
  EXPECT_EQ(timed_.size(), 1u);
}

}  // namespace
