// The rules of executor groups (catalog/group_service.hpp) on an in-memory store and a fake clock: app_name
// is unique, the alert channels a group names exist, a group with jobs is not deleted. The statements behind
// them are tested on PostgreSQL (tests/pg: the API's groups).
#include "admin/catalog/group_service.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cwtest/admin_errors.hpp"
#include "cwtest/fake_clock.hpp"
#include "cwtest/memory_group_store.hpp"

namespace cronwheel::admin {
namespace {

using ::cwtest::Fields;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z

class GroupServiceTest : public ::testing::Test {
 protected:
  static JobGroup App(int id, std::string app_name) {
    JobGroup g;
    g.id = id;
    g.app_name = std::move(app_name);
    g.title = "the " + g.app_name;
    g.created_ms = kT0 - 1000;
    g.updated_ms = kT0 - 1000;
    return g;
  }
  // Updates group `id` with `f`.
  Result<JobGroup> Edit(int id, const std::function<void(JobGroup&)>& f) {
    return groups_.UpdateGroup(id, [&](JobGroup& g) -> Result<void> {
      f(g);
      return {};
    });
  }

  cwtest::FakeClock clock_{kT0};
  cwtest::MemoryGroupStore store_;
  GroupService groups_{clock_, store_};
};

TEST_F(GroupServiceTest, AGroupIsCreatedWithItsAlertChannelsAtTheClocksTime) {
  store_.PutAlertChannel(3);
  clock_.Advance(std::chrono::milliseconds(250));
  auto g = App(0, "sample-app");
  g.alert_channel_ids = {3};
  const auto created = groups_.CreateGroup(g);
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_EQ(created->id, 1);
  EXPECT_EQ(created->created_ms, kT0 + 250);
  EXPECT_EQ(created->updated_ms, kT0 + 250);
  EXPECT_THAT(store_.Snapshot().groups.at(1).alert_channel_ids, ElementsAre(3));
  EXPECT_THAT(store_.Snapshot().steps, ElementsAre("insert group 1"));
}

TEST_F(GroupServiceTest, EveryMissingAlertChannelIsNamedInTheOrderGiven) {
  store_.PutAlertChannel(3);
  auto g = App(0, "sample-app");
  g.alert_channel_ids = {9, 3, 7};
  const auto refused = groups_.CreateGroup(g);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kInvalid);
  EXPECT_EQ(refused.error().message, "the group is not valid");
  EXPECT_THAT(Fields(refused.error()), ElementsAre("alert_channel_ids", "alert_channel_ids"));
  EXPECT_EQ(refused.error().fields[0].message, "alert channel 9 not found");
  EXPECT_EQ(refused.error().fields[0].code, "not_found");
  EXPECT_EQ(refused.error().fields[0].params, nlohmann::json({{"id", 9}}));
  EXPECT_EQ(refused.error().fields[1].message, "alert channel 7 not found");
  EXPECT_THAT(store_.Snapshot().groups, IsEmpty());
}

TEST_F(GroupServiceTest, ATakenAppNameIsTheOnlyErrorGivenOnCreateAndUpdate) {
  store_.PutGroup(App(1, "sample-app"));
  store_.PutGroup(App(2, "other-app"));
  auto twin = App(0, "sample-app");
  twin.alert_channel_ids = {9};  // missing too: not said while the name is taken
  const auto refused = groups_.CreateGroup(twin);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "the group is not valid");
  ASSERT_THAT(Fields(refused.error()), ElementsAre("app_name"));
  EXPECT_EQ(refused.error().fields[0].message, "a group with app_name 'sample-app' exists already");
  EXPECT_EQ(refused.error().fields[0].code, "exists");
  EXPECT_EQ(refused.error().fields[0].params, nlohmann::json({{"value", "sample-app"}}));

  const auto renamed = Edit(2, [](JobGroup& g) { g.app_name = "sample-app"; });
  ASSERT_FALSE(renamed.ok());
  EXPECT_THAT(Fields(renamed.error()), ElementsAre("app_name"));
  EXPECT_EQ(store_.Snapshot().groups.at(2).app_name, "other-app");
  EXPECT_THAT(store_.Snapshot().steps, IsEmpty()) << "a refused save is rolled back whole";

  clock_.Advance(std::chrono::milliseconds(5));
  const auto own = Edit(1, [](JobGroup& g) { g.title = "renamed"; });
  ASSERT_TRUE(own.ok()) << "a group keeps its own app_name";
  EXPECT_EQ(own->title, "renamed");
  EXPECT_EQ(own->updated_ms, kT0 + 5);
  EXPECT_THAT(store_.Snapshot().steps, ElementsAre("lock group 1", "update group 1"));
}

TEST_F(GroupServiceTest, AnEditsOwnErrorOrAMissingGroupChangesNothing) {
  store_.PutGroup(App(1, "sample-app"));
  const auto refused = groups_.UpdateGroup(1, [](JobGroup& g) -> Result<void> {
    g.app_name = "half-applied";
    return Error::Forbidden("changing a group's app_name needs the global ADMIN role");
  });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kForbidden);
  EXPECT_EQ(refused.error().message, "changing a group's app_name needs the global ADMIN role");
  const auto missing = Edit(9, [](JobGroup&) {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(missing.error().message, "group 9 not found");
  EXPECT_EQ(store_.Snapshot().groups.at(1).app_name, "sample-app");
  EXPECT_THAT(store_.Snapshot().steps, IsEmpty());
}

TEST_F(GroupServiceTest, AGroupWithJobsIsNotDeletedAndAnEmptyOneIsUnderItsRowLock) {
  store_.PutGroup(App(1, "sample-app"));
  store_.PutGroup(App(2, "empty-app"));
  store_.SetJobs(1, 2);
  const auto busy = groups_.DeleteGroup(1);
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.error().kind, ErrorKind::kConflict);
  EXPECT_EQ(busy.error().message, "group 1 still has 2 job(s); delete or move them first");
  EXPECT_TRUE(store_.Snapshot().groups.contains(1));

  ASSERT_TRUE(groups_.DeleteGroup(2).ok());
  EXPECT_THAT(store_.Snapshot().steps, ElementsAre("lock group 2", "delete group 2"));
  EXPECT_FALSE(groups_.GetGroup(2).has_value());
  const auto again = groups_.DeleteGroup(2);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(again.error().message, "group 2 not found");
}

}  // namespace
}  // namespace cronwheel::admin
