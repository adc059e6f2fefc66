// RunBatcher with a scripted POST (docs/architecture.md, "Ahead-of-time dispatch"): runs go at once while
// fewer than max_in_flight batches are unanswered, the rest wait and go together when one is answered; each
// run gets its own answer, or the batch's failure with its Delivery.
#include "admin/dispatch/run_batcher.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace {

using namespace cronwheel::admin;
namespace xxljob = cronwheel::xxljob;
using ::testing::HasSubstr;
using Delivery = ExecutorClient::Delivery;

const std::string kA = "http://127.0.0.1:9001/";
const std::string kB = "http://127.0.0.1:9002/";

class RunBatcherTest : public ::testing::Test {
 protected:
  struct Posted {
    std::string address;
    std::string token;
    std::vector<xxljob::TriggerParam> runs;
    std::int64_t send_by_ms;
    ExecutorClient::RunDone done;
  };
  void Add(const std::string& address, std::int64_t log_id, std::int64_t send_by_ms = 0) {
    xxljob::TriggerParam p;
    p.job_id = 1;
    p.log_id = log_id;
    p.run_at_ms = 1'767'225'601'000;
    batcher_.Add(address, "tok", p, send_by_ms,
                 [this, log_id](ExecutorClient::RunReply r) { answers_.emplace_back(log_id, std::move(r)); });
  }
  // Answers posted batch `i` with one answer per run: code 200 "held" for even log ids, 500 for odd ones.
  void AnswerEach(std::size_t i) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& r : posted_[i].runs) {
      list.push_back(r.log_id % 2 == 0 ? nlohmann::json{{"code", 200}, {"msg", "held"}}
                                       : nlohmann::json{{"code", 500}, {"msg", "repeat trigger"}});
    }
    Answer(i, {{200, "", nlohmann::json{{"answers", list}}}, Delivery::kAnswered});
  }
  void Answer(std::size_t i, ExecutorClient::RunReply reply) {
    auto done = std::exchange(posted_[i].done, nullptr);
    ASSERT_TRUE(done) << "batch " << i << " answered once";
    done(std::move(reply));
  }
  std::vector<std::int64_t> LogIds(std::size_t i) const {
    std::vector<std::int64_t> ids;
    for (const auto& r : posted_[i].runs)
      ids.push_back(r.log_id);
    return ids;
  }

  std::vector<Posted> posted_;
  std::vector<std::pair<std::int64_t, ExecutorClient::RunReply>> answers_;
  RunBatcher batcher_{{.max_in_flight = 2, .max_batch = 3},
                      [this](const std::string& address, const std::string& token, const std::string& body,
                             std::int64_t send_by_ms, ExecutorClient::RunDone done) {
                        auto runs = xxljob::ParseTriggerBatch(body);
                        ASSERT_TRUE(runs.ok()) << runs.status();
                        std::vector<xxljob::TriggerParam> params;
                        for (auto& r : *runs)
                          params.push_back(*r);
                        posted_.push_back({address, token, std::move(params), send_by_ms, std::move(done)});
                      }};
};

TEST_F(RunBatcherTest, RunsGoAtOnceUntilTheExecutorHasTwoBatchesThenWaitAndGoTogether) {
  Add(kA, 1);
  Add(kA, 2);
  ASSERT_EQ(posted_.size(), 2u) << "a lone run waits for nothing";
  for (std::int64_t id = 3; id <= 7; ++id)
    Add(kA, id);
  Add(kB, 100);
  ASSERT_EQ(posted_.size(), 3u) << "another executor has batches of its own";
  EXPECT_EQ(posted_[2].address, kB);
  EXPECT_EQ(posted_[2].token, "tok");
  AnswerEach(0);
  ASSERT_EQ(posted_.size(), 4u);
  EXPECT_EQ(LogIds(3), (std::vector<std::int64_t>{3, 4, 5})) << "what waited, at most max_batch";
  AnswerEach(1);
  ASSERT_EQ(posted_.size(), 5u);
  EXPECT_EQ(LogIds(4), (std::vector<std::int64_t>{6, 7}));
  AnswerEach(3);
  AnswerEach(4);
  AnswerEach(2);
  EXPECT_EQ(posted_.size(), 5u);
  ASSERT_EQ(answers_.size(), 8u);
  for (const auto& [id, reply] : answers_) {
    EXPECT_EQ(reply.delivery, Delivery::kAnswered);
    EXPECT_EQ(reply.envelope.code, id % 2 == 0 ? 200 : 500) << "run " << id << " got its own answer";
  }
  EXPECT_EQ(batcher_.stats().batches, 5u);
  EXPECT_EQ(batcher_.stats().runs, 8u);
}

TEST_F(RunBatcherTest, ABatchThatFailedWholeFailsEachRunWithItsDeliveryAndTheEarliestSendBy) {
  Add(kA, 1);
  Add(kA, 2);
  Add(kA, 3, 5000);
  Add(kA, 4, 4000);
  Add(kA, 5);
  ASSERT_EQ(posted_.size(), 2u);
  Answer(0, {xxljob::Envelope::Fail("not sent: connection refused"), Delivery::kNotSent, true});
  ASSERT_EQ(posted_.size(), 3u);
  EXPECT_EQ(posted_[2].send_by_ms, 4000) << "the earliest of its runs'";
  Answer(1, {xxljob::Envelope::Fail("no answer"), Delivery::kUnknown, false});
  Answer(2, {xxljob::Envelope::Fail("invalid request, uri-mapping(/runs) not found."), Delivery::kAnswered});
  ASSERT_EQ(answers_.size(), 5u);
  EXPECT_EQ(answers_[0].second.delivery, Delivery::kNotSent);
  EXPECT_TRUE(answers_[0].second.refused);
  EXPECT_EQ(answers_[1].second.delivery, Delivery::kUnknown);
  EXPECT_EQ(answers_[2].second.envelope.code, 500);
  EXPECT_THAT(answers_[4].second.envelope.msg.value_or(""), HasSubstr("uri-mapping(/runs)"));
}

TEST_F(RunBatcherTest, AnAnswerWithoutOneEntryPerRunFailsEachRunSayingSo) {
  Add(kA, 1);
  Add(kA, 2);
  Add(kA, 3);
  Add(kA, 4);
  ASSERT_EQ(posted_.size(), 2u);
  Answer(0, {{200, "", nlohmann::json{{"answers", nlohmann::json::array()}}}, Delivery::kAnswered});
  EXPECT_THAT(answers_[0].second.envelope.msg.value_or(""), HasSubstr("without an answer for each"));
  ASSERT_EQ(posted_.size(), 3u);
  Answer(2,
         {{200, "", nlohmann::json{{"answers", {{{"code", "x"}}, {{"code", 200}}}}}}, Delivery::kAnswered});
  EXPECT_EQ(answers_[1].first, 3);
  EXPECT_THAT(answers_[1].second.envelope.msg.value_or(""), HasSubstr("not understood"));
  EXPECT_EQ(answers_[2].second.envelope.code, 200);
}

}  // namespace
