// The rules of calendars (catalog/calendar_service.hpp) on an in-memory store and a fake clock: what a save
// checks, which jobs an edit re-walks and in which order it locks and withdraws, when a delete is refused.
// The statements behind them are tested on PostgreSQL (tests/pg: the API's calendars, and the scan's race
// with an edit in scheduler_store_test.cpp).
#include "admin/catalog/calendar_service.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cwtest/admin_errors.hpp"
#include "cwtest/fake_clock.hpp"
#include "cwtest/memory_calendar_store.hpp"

namespace cronwheel::admin {
namespace {

using ::cwtest::Fields;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z
constexpr std::int32_t kJan2 = 20455;        // 2026-01-02, in days since 1970-01-01

class CalendarServiceTest : public ::testing::Test {
 protected:
  static JobCalendar Named(int id, std::string name) {
    return JobCalendar{.id = id, .name = std::move(name), .created_ms = kT0 - 1000, .updated_ms = kT0 - 1000};
  }
  // Updates calendar `id` with `f`.
  Result<JobCalendar> Edit(int id, const std::function<void(JobCalendar&)>& f) {
    return calendars_.Update(id, [&](JobCalendar& c) -> Result<void> {
      f(c);
      return {};
    });
  }

  cwtest::FakeClock clock_{kT0};
  cwtest::MemoryCalendarStore store_;
  CalendarService calendars_{clock_, store_};
};

TEST_F(CalendarServiceTest, ACalendarIsCreatedAtTheClocksTimeWithItsDaysInOrderEachOnce) {
  clock_.Advance(std::chrono::milliseconds(250));
  const auto created = calendars_.Create(
      {.name = "holidays", .days = {{kJan2 + 1, "b"}, {kJan2, "a"}, {kJan2 + 1, "c"}, {kJan2 + 1, "b"}}});
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_EQ(created->id, 1);
  EXPECT_EQ(created->created_ms, kT0 + 250);
  EXPECT_EQ(created->updated_ms, kT0 + 250);
  EXPECT_THAT(created->days, ElementsAre(CalendarDay{kJan2, "a"}, CalendarDay{kJan2 + 1, "b; c"}));
  EXPECT_EQ(store_.Snapshot().calendars.at(1).days, created->days) << "stored as returned";
  EXPECT_THAT(store_.Snapshot().steps, ElementsAre("insert calendar 1"));
}

TEST_F(CalendarServiceTest, ATakenNameIsRefusedOnCreateAndUpdateAndNothingIsWritten) {
  store_.PutCalendar(Named(1, "holidays"));
  store_.PutCalendar(Named(2, "weekends"));
  const auto twin = calendars_.Create({.name = "holidays"});
  ASSERT_FALSE(twin.ok());
  EXPECT_EQ(twin.error().kind, ErrorKind::kInvalid);
  EXPECT_EQ(twin.error().message, "the calendar is not valid");
  ASSERT_THAT(Fields(twin.error()), ElementsAre("name"));
  EXPECT_EQ(twin.error().fields[0].message, "a calendar named 'holidays' exists already");
  EXPECT_EQ(twin.error().fields[0].code, "exists");
  EXPECT_EQ(twin.error().fields[0].params, nlohmann::json({{"value", "holidays"}}));

  const auto renamed = Edit(2, [](JobCalendar& c) { c.name = "holidays"; });
  ASSERT_FALSE(renamed.ok());
  EXPECT_EQ(renamed.error().fields.at(0).message, "a calendar named 'holidays' exists already");
  const auto s = store_.Snapshot();
  EXPECT_EQ(s.calendars.size(), 2U);
  EXPECT_EQ(s.calendars.at(2).name, "weekends");
  EXPECT_THAT(s.steps, IsEmpty()) << "a refused save is rolled back whole";

  const auto own = Edit(1, [](JobCalendar& c) { c.description = "bank holidays"; });
  ASSERT_TRUE(own.ok()) << "a calendar keeps its own name";
  EXPECT_EQ(own->name, "holidays");
  EXPECT_EQ(own->description, "bank holidays");
}

TEST_F(CalendarServiceTest, TheFieldChecksApplyToEverySaveNotOnlyToARequestsBody) {
  store_.PutCalendar(Named(1, "holidays"));
  const auto refused = calendars_.Create({.name = "", .time_zone = "Mars/Olympus_Mons"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kInvalid);
  EXPECT_THAT(Fields(refused.error()), ElementsAre("name", "time_zone"));
  EXPECT_EQ(refused.error().fields[0].message, "must be 1 to 64 characters, got 0");
  EXPECT_EQ(refused.error().fields[1].code, "format");
  const auto edited = Edit(1, [](JobCalendar& c) { c.days.assign(kMaxCalendarDays + 1, {}); });
  ASSERT_TRUE(edited.ok()) << "the same day listed many times is one day";
  EXPECT_EQ(edited->days.size(), 1U);
  const auto too_long = Edit(1, [](JobCalendar& c) { c.description.assign(256, 'x'); });
  ASSERT_FALSE(too_long.ok());
  EXPECT_THAT(Fields(too_long.error()), ElementsAre("description"));
  EXPECT_EQ(store_.Snapshot().calendars.at(1).description, "");
}

TEST_F(CalendarServiceTest, AnEditWithdrawsAndReWalksTheStartedJobsThatKeepItAfterLockingAllTheirSchedules) {
  store_.PutCalendar(Named(1, "holidays"));
  store_.PutCalendar(Named(2, "weekends"));
  // 10 and 11 keep it and are started; 10 has fires written for T0+1 s and T0+2 s, 11 none.
  store_.PutJob(10, {.calendar_ids = {1}, .next_fire_ms = kT0 + 5000, .unsent_ms = {kT0 + 2000, kT0 + 1000}});
  store_.PutJob(11, {.calendar_ids = {2, 1}, .next_fire_ms = kT0 + 60000});
  store_.PutJob(12, {.calendar_ids = {1}, .next_fire_ms = 0});  // stopped
  store_.PutJob(13, {.calendar_ids = {2}, .next_fire_ms = kT0 + 5000, .unsent_ms = {kT0 + 1000}});
  clock_.Advance(std::chrono::milliseconds(100));

  const auto updated = Edit(1, [](JobCalendar& c) { c.days = {{kJan2, "the 2nd"}}; });
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ(updated->updated_ms, kT0 + 100);
  const auto s = store_.Snapshot();
  EXPECT_THAT(s.steps, ElementsAre("lock calendar 1", "update calendar 1", "lock schedules 10 11",
                                   "withdraw 10", fmt::format("rewind 10 to {}", kT0 + 1000), "withdraw 11"))
      << "every schedule locked before the first withdrawal; a job with nothing withdrawn keeps its next "
         "fire";
  EXPECT_EQ(s.jobs.at(10).next_fire_ms, kT0 + 1000) << "the walk starts again from the earliest withdrawn";
  EXPECT_THAT(s.jobs.at(10).unsent_ms, IsEmpty());
  EXPECT_EQ(s.jobs.at(11).next_fire_ms, kT0 + 60000);
  EXPECT_THAT(s.jobs.at(13).unsent_ms, ElementsAre(kT0 + 1000))
      << "a job keeping another calendar keeps its fires";

  // A rename re-walks them too: every saved edit does.
  ASSERT_TRUE(Edit(1, [](JobCalendar& c) { c.name = "bank holidays"; }).ok());
  EXPECT_THAT(store_.Snapshot().steps, ::testing::Contains(::testing::StrEq("withdraw 11")).Times(2));
}

TEST_F(CalendarServiceTest, AnEditsOwnErrorOrAMissingCalendarChangesAndWithdrawsNothing) {
  store_.PutCalendar(Named(1, "holidays"));
  store_.PutJob(10, {.calendar_ids = {1}, .next_fire_ms = kT0 + 5000, .unsent_ms = {kT0 + 1000}});
  const auto refused = calendars_.Update(1, [](JobCalendar& c) -> Result<void> {
    c.name = "half-applied";
    return Error::Forbidden("no");
  });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kForbidden);
  EXPECT_EQ(refused.error().message, "no");
  const auto missing = Edit(9, [](JobCalendar&) {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(missing.error().message, "calendar 9 not found");
  const auto s = store_.Snapshot();
  EXPECT_EQ(s.calendars.at(1).name, "holidays");
  EXPECT_THAT(s.steps, IsEmpty());
  EXPECT_THAT(s.jobs.at(10).unsent_ms, ElementsAre(kT0 + 1000));
}

TEST_F(CalendarServiceTest, AKeptCalendarIsNotDeletedAndTheRefusalNamesAtMostTwentyOfItsJobs) {
  store_.PutCalendar(Named(1, "holidays"));
  store_.PutCalendar(Named(2, "weekends"));
  store_.PutJob(10, {.calendar_ids = {1}});  // stopped jobs keep it too
  store_.PutJob(11, {.calendar_ids = {2, 1}, .next_fire_ms = kT0 + 5000});
  for (int j = 100; j < 125; ++j)
    store_.PutJob(j, {.calendar_ids = {2}});

  const auto kept = calendars_.Delete(1);
  ASSERT_FALSE(kept.ok());
  EXPECT_EQ(kept.error().kind, ErrorKind::kConflict);
  EXPECT_EQ(
      kept.error().message,
      "calendar 1 is kept by job(s) 10, 11: take it out of their calendar_ids first (they would fire on "
      "the days it excludes)");
  const auto many = calendars_.Delete(2);
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(
      many.error().message,
      "calendar 2 is kept by job(s) 11, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, "
      "113, 114, 115, 116, 117, 118 and more: take it out of their calendar_ids first (they would fire on "
      "the days it excludes)");
  EXPECT_EQ(store_.Snapshot().calendars.size(), 2U);
  EXPECT_THAT(store_.Snapshot().steps, IsEmpty());
}

TEST_F(CalendarServiceTest, AnUnkeptCalendarIsDeletedUnderItsRowLockAndAMissingOneIsNotFound) {
  store_.PutCalendar(Named(3, "unused"));
  store_.PutJob(10, {.calendar_ids = {4}, .next_fire_ms = kT0 + 5000});
  ASSERT_TRUE(calendars_.Delete(3).ok());
  EXPECT_THAT(store_.Snapshot().steps, ElementsAre("lock calendar 3", "delete calendar 3"));
  EXPECT_FALSE(calendars_.Get(3).has_value());
  const auto again = calendars_.Delete(3);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(again.error().message, "calendar 3 not found");
}

}  // namespace
}  // namespace cronwheel::admin
