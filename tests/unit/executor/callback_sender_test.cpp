#include "callback_sender.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cwtest/fake_clock.hpp"
#include "test_util.hpp"

namespace {

using namespace cwtest::executor_test;

HandleCallbackParam Cb(std::int64_t log_id, int code = 200) {
  return {log_id, kDay, code, "msg"};
}

class CallbackSenderTest : public ::testing::Test {
 protected:
  std::unique_ptr<CallbackSender> Make() {
    return std::make_unique<CallbackSender>(CallbackSender::Settings{dir_.path() / "callbacklogs", 100, 30s},
                                            admin_, &logs_, clock_);
  }

  cwtest::TempDir dir_;
  cwtest::FakeClock clock_{kDay};
  JobLogFiles logs_{{dir_.path()}, clock_};
  cwtest::ScriptedAdmin admin_;
};

TEST_F(CallbackSenderTest, SendsBatchesOfAtMostOneHundredAsAJsonArray) {
  auto sender = Make();
  admin_.SetUp(true);
  // Queue 250 before the sender thread starts, so the batching is deterministic.
  for (int i = 1; i <= 250; ++i)
    sender->Push(Cb(i));
  sender->Start();
  ASSERT_TRUE(admin_.WaitAccepted(250));
  ASSERT_TRUE(sender->AwaitIdle());
  std::vector<std::size_t> sizes;
  for (const auto& c : admin_.Calls()) {
    if (c.api != "callback") continue;
    ASSERT_TRUE(c.body.is_array());
    sizes.push_back(c.body.size());
    EXPECT_EQ(c.body[0].at("logDateTim"), kDay);  // dialect A/B spelling
  }
  EXPECT_EQ(sizes, (std::vector<std::size_t>{100, 100, 50}));
  EXPECT_EQ(admin_.Accepted().front(), 1);
  EXPECT_EQ(admin_.Accepted().back(), 250);
  EXPECT_THAT(logs_.Text(kDay, 7).value_or(""), HasSubstr("----------- job callback finish."));
}

// A callback with its fire's job log (the archive's jobLog).
HandleCallbackParam WithLog(std::int64_t log_id, std::size_t log_bytes) {
  auto cb = Cb(log_id);
  cb.job_log = HandleCallbackParam::JobLog{.content = std::string(log_bytes, 'x'),
                                           .bytes = static_cast<std::int64_t>(log_bytes)};
  return cb;
}

// The fire output archive: job logs never hold results back. A batch closes before its logs pass
// batch_bytes (a callback bigger than that goes alone), so the admin's body limit is not met.
TEST_F(CallbackSenderTest, ABatchClosesBeforeItsJobLogsPassTheByteBound) {
  auto sender = std::make_unique<CallbackSender>(
      CallbackSender::Settings{.spool_dir = dir_.path() / "callbacklogs", .batch_bytes = 10'000}, admin_,
      &logs_, clock_);
  admin_.SetUp(true);
  for (int i = 1; i <= 6; ++i)
    sender->Push(WithLog(i, 3'000));  // three fit in 10,000 bytes with their fields, a fourth does not
  sender->Push(WithLog(7, 50'000));   // alone: bigger than the bound
  sender->Push(Cb(8));
  sender->Start();
  ASSERT_TRUE(admin_.WaitAccepted(8));
  ASSERT_TRUE(sender->AwaitIdle());
  std::vector<std::size_t> sizes;
  std::size_t alone = 0;  // the size of fire 7's log as sent
  for (const auto& c : admin_.Calls()) {
    if (c.api != "callback") continue;
    sizes.push_back(c.body.size());
    if (c.body[0].at("logId") == 7) alone = c.body[0].at("jobLog").at("content").get<std::string>().size();
  }
  EXPECT_EQ(sizes, (std::vector<std::size_t>{3, 3, 1, 1}));
  EXPECT_EQ(alone, 50'000U);
}

// An admin that refuses a batch with job logs as too large (HTTP 413) gets the results again at once
// without the logs (it reads them from /log), and a batch spooled meanwhile is spooled without them.
TEST_F(CallbackSenderTest, ABatchRefusedAsTooLargeIsSentAgainWithoutItsJobLogs) {
  auto sender = Make();
  admin_.SetUp(true);
  admin_.SetRefuseLogs(true);
  sender->Start();
  sender->Push(WithLog(1, 100));
  ASSERT_TRUE(admin_.WaitAccepted(1));
  ASSERT_TRUE(sender->AwaitIdle());
  const auto calls = admin_.Calls();
  ASSERT_GE(calls.size(), 2U);
  EXPECT_TRUE(calls[calls.size() - 2].body[0].contains("jobLog"));
  EXPECT_FALSE(calls.back().body[0].contains("jobLog"));
  EXPECT_THAT(logs_.Text(kDay, 1).value_or(""), HasSubstr("without the job log"));
  EXPECT_TRUE(sender->SpoolFiles().empty());

  admin_.SetUp(false);  // down, and refusing logs: the batch is spooled without its log
  sender->Push(WithLog(2, 100));
  ASSERT_TRUE(sender->AwaitIdle());
  const auto files = sender->SpoolFiles();
  ASSERT_EQ(files.size(), 1U);
  EXPECT_THAT(cwtest::ReadAll(files[0]), ::testing::Not(HasSubstr("jobLog")));
}

TEST_F(CallbackSenderTest, ABatchNoAdminAcceptsIsSpooledAndRetriedOnTheClock) {
  auto sender = Make();
  admin_.SetUp(false);
  sender->Start();
  ASSERT_TRUE(sender->AwaitRetryRounds(1));  // the start-up replay found nothing
  sender->Push(Cb(1));
  sender->Push(Cb(2, 500));
  ASSERT_TRUE(sender->AwaitIdle());
  auto files = sender->SpoolFiles();
  ASSERT_GE(files.size(), 1U);
  EXPECT_THAT(files.front().filename().string(), ::testing::StartsWith("callback-1-"));
  const auto spooled = nlohmann::json::parse(cwtest::ReadAll(files.front()));
  ASSERT_TRUE(spooled.is_array());
  EXPECT_EQ(spooled[0].at("logId"), 1);
  EXPECT_THAT(logs_.Text(kDay, 1).value_or(""),
              HasSubstr("job callback fail, callbackResult: admin down; kept in callbacklogs/callback-1-"));

  // Still down at the next round: the file stays.
  ASSERT_TRUE(clock_.AwaitWaiters(1));
  clock_.Advance(30s);
  ASSERT_TRUE(sender->AwaitRetryRounds(2));
  EXPECT_EQ(sender->SpoolFiles().size(), files.size());

  admin_.SetUp(true);
  ASSERT_TRUE(clock_.AwaitWaiters(1));
  clock_.Advance(30s);
  ASSERT_TRUE(sender->AwaitRetryRounds(3));
  EXPECT_TRUE(sender->SpoolFiles().empty());
  auto accepted = admin_.Accepted();
  std::sort(accepted.begin(), accepted.end());
  EXPECT_EQ(accepted, (std::vector<std::int64_t>{1, 2}));
  EXPECT_THAT(logs_.Text(kDay, 2).value_or(""), HasSubstr("job callback finish (retried from the spool)."));
}

TEST_F(CallbackSenderTest, SpooledCallbacksAreReplayedByTheNextInstance) {
  admin_.SetUp(false);
  {
    auto first = Make();
    first->Start();
    for (int i = 1; i <= 5; ++i)
      first->Push(Cb(i));
    ASSERT_TRUE(first->AwaitIdle());
    first->Stop();  // an executor restart
  }
  EXPECT_TRUE(admin_.Accepted().empty());
  admin_.SetUp(true);
  auto second = Make();
  second->Start();  // replays at once, without waiting for the retry interval
  ASSERT_TRUE(second->AwaitRetryRounds(1));
  auto accepted = admin_.Accepted();
  std::sort(accepted.begin(), accepted.end());
  EXPECT_EQ(accepted, (std::vector<std::int64_t>{1, 2, 3, 4, 5}));
  EXPECT_TRUE(second->SpoolFiles().empty());
}

TEST_F(CallbackSenderTest, StopFlushesTheQueueToTheSpoolWhenAdminsAreDown) {
  admin_.SetUp(false);
  auto sender = Make();
  for (int i = 1; i <= 150; ++i)
    sender->Push(Cb(i));
  sender->Start();
  sender->Stop();
  std::size_t spooled = 0;
  for (const auto& f : sender->SpoolFiles())
    spooled += nlohmann::json::parse(cwtest::ReadAll(f)).size();
  EXPECT_EQ(spooled, 150U);
  sender->Push(Cb(151));  // after Stop: straight to the spool
  spooled = 0;
  for (const auto& f : sender->SpoolFiles())
    spooled += nlohmann::json::parse(cwtest::ReadAll(f)).size();
  EXPECT_EQ(spooled, 151U);
}

TEST_F(CallbackSenderTest, AnUnreadableSpoolFileIsSetAsideNotRetriedForever) {
  std::filesystem::create_directories(dir_.path() / "callbacklogs");
  {
    std::ofstream bad(dir_.path() / "callbacklogs" / "callback-9-1-x.json");
    bad << "{not json";
  }
  admin_.SetUp(true);
  auto sender = Make();
  sender->Start();
  ASSERT_TRUE(sender->AwaitRetryRounds(1));
  EXPECT_TRUE(sender->SpoolFiles().empty());
  EXPECT_TRUE(std::filesystem::exists(dir_.path() / "callbacklogs" / "callback-9-1-x.json.bad"));
}

}  // namespace
