// The rules of alert channels (catalog/alert_channel_service.hpp) on an in-memory store and a fake clock:
// names are unique, and a deleted channel leaves every job and group that named it in the same transaction.
// The statements behind them are tested on PostgreSQL (tests/pg: the API's alert channels).
#include "admin/catalog/alert_channel_service.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cwtest/fake_clock.hpp"
#include "cwtest/memory_alert_channel_store.hpp"

namespace cronwheel::admin {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z

class AlertChannelServiceTest : public ::testing::Test {
 protected:
  static AlertChannel Webhook(int id, std::string name) {
    AlertChannel c;
    c.id = id;
    c.name = std::move(name);
    c.target = "https://hooks.example.com/" + c.name;
    c.created_ms = kT0 - 1000;
    c.updated_ms = kT0 - 1000;
    return c;
  }
  // Updates channel `id` with `f`.
  Result<AlertChannel> Edit(int id, const std::function<void(AlertChannel&)>& f) {
    return channels_.Update(id, [&](AlertChannel& c) -> Result<void> {
      f(c);
      return {};
    });
  }

  cwtest::FakeClock clock_{kT0};
  cwtest::MemoryAlertChannelStore store_;
  AlertChannelService channels_{clock_, store_};
};

TEST_F(AlertChannelServiceTest, AChannelIsCreatedAtTheClocksTime) {
  clock_.Advance(std::chrono::milliseconds(250));
  const auto created = channels_.Create(Webhook(0, "ops"));
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_EQ(created->id, 1);
  EXPECT_EQ(created->created_ms, kT0 + 250);
  EXPECT_EQ(created->updated_ms, kT0 + 250);
  EXPECT_EQ(store_.Snapshot().channels.at(1).target, "https://hooks.example.com/ops");
  EXPECT_THAT(store_.Snapshot().steps, ElementsAre("insert channel 1"));
}

TEST_F(AlertChannelServiceTest, ATakenNameIsRefusedOnCreateAndUpdateButAChannelKeepsItsOwn) {
  store_.PutChannel(Webhook(1, "ops"));
  store_.PutChannel(Webhook(2, "dev"));
  const auto twin = channels_.Create(Webhook(0, "ops"));
  ASSERT_FALSE(twin.ok());
  EXPECT_EQ(twin.error().kind, ErrorKind::kInvalid);
  EXPECT_EQ(twin.error().message, "the alert channel is not valid");
  ASSERT_EQ(twin.error().fields.size(), 1U);
  EXPECT_EQ(twin.error().fields[0].field, "name");
  EXPECT_EQ(twin.error().fields[0].message, "a channel named 'ops' exists already");
  EXPECT_EQ(twin.error().fields[0].code, "exists");
  EXPECT_EQ(twin.error().fields[0].params, nlohmann::json({{"value", "ops"}}));

  const auto renamed = Edit(2, [](AlertChannel& c) { c.name = "ops"; });
  ASSERT_FALSE(renamed.ok());
  EXPECT_EQ(renamed.error().fields.at(0).message, "a channel named 'ops' exists already");
  EXPECT_EQ(store_.Snapshot().channels.at(2).name, "dev");
  EXPECT_THAT(store_.Snapshot().steps, IsEmpty()) << "a refused save is rolled back whole";

  const auto own = Edit(1, [](AlertChannel& c) { c.threshold = 3; });
  ASSERT_TRUE(own.ok()) << "a channel keeps its own name";
  EXPECT_EQ(own->threshold, 3);
  EXPECT_EQ(own->updated_ms, kT0) << "updated at the clock's time";
  EXPECT_THAT(store_.Snapshot().steps, ElementsAre("lock channel 1", "update channel 1"));
}

TEST_F(AlertChannelServiceTest, AnEditsOwnErrorOrAMissingChannelChangesNothing) {
  store_.PutChannel(Webhook(1, "ops"));
  const auto refused = channels_.Update(1, [](AlertChannel& c) -> Result<void> {
    c.name = "half-applied";
    return Error::Forbidden("no");
  });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kForbidden);
  EXPECT_EQ(refused.error().message, "no");
  const auto missing = Edit(9, [](AlertChannel&) {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(missing.error().message, "alert channel 9 not found");
  EXPECT_EQ(store_.Snapshot().channels.at(1).name, "ops");
  EXPECT_THAT(store_.Snapshot().steps, IsEmpty());
}

TEST_F(AlertChannelServiceTest, ADeletedChannelLeavesEveryJobAndGroupThatNamedItInTheSameTransaction) {
  store_.PutChannel(Webhook(1, "ops"));
  store_.PutChannel(Webhook(2, "dev"));
  store_.PutJob(10, {1, 2});
  store_.PutJob(11, {2});
  store_.PutGroup(5, {2, 1});
  ASSERT_TRUE(channels_.Delete(1).ok());
  const auto s = store_.Snapshot();
  EXPECT_THAT(s.steps, ElementsAre("delete channel 1", "remove 1 from jobs", "remove 1 from groups"));
  EXPECT_FALSE(s.channels.contains(1));
  EXPECT_THAT(s.job_channels.at(10), ElementsAre(2));
  EXPECT_THAT(s.job_channels.at(11), ElementsAre(2));
  EXPECT_THAT(s.group_channels.at(5), ElementsAre(2));
}

TEST_F(AlertChannelServiceTest, ADeleteOfAMissingChannelIsNotFoundAndTouchesNoJobOrGroup) {
  store_.PutJob(10, {7});
  store_.PutGroup(5, {7});
  const auto missing = channels_.Delete(7);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(missing.error().message, "alert channel 7 not found");
  const auto s = store_.Snapshot();
  EXPECT_THAT(s.steps, IsEmpty()) << "rolled back";
  EXPECT_THAT(s.job_channels.at(10), ElementsAre(7));
  EXPECT_THAT(s.group_channels.at(5), ElementsAre(7));
}

}  // namespace
}  // namespace cronwheel::admin
