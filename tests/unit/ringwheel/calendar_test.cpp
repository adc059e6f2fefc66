// Calendars and fire windows (ringwheel/calendar.hpp): excluded local days, business days, a start and an
// end, across DST changes. Expected instants are written in UTC (test_time.hpp), independent of the code.
#include "ringwheel/calendar.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "test_time.hpp"

namespace {

using ringwheel::Calendar;
using ringwheel::FireWindow;
using ringwheel::Schedule;
using rwtest::Utc;

std::int32_t Day(const char* text) {
  return *ringwheel::ParseDate(text);
}

Calendar Make(const char* zone, std::vector<std::int32_t> dates, Calendar::Weekdays weekdays = {}) {
  auto c = Calendar::Make(zone, std::move(dates), weekdays);
  EXPECT_TRUE(c.ok()) << c.status();
  return *std::move(c);
}

Schedule Cron(const char* expr, const char* zone) {
  auto s = Schedule::Parse("CRON", expr, zone);
  EXPECT_TRUE(s.ok()) << s.status();
  return *std::move(s);
}

TEST(CalendarDate, ParsesAndFormatsCivilDatesAndNamesWhatIsWrong) {
  EXPECT_EQ(Day("1970-01-01"), 0);
  EXPECT_EQ(Day("2026-12-25"), 20'812);
  EXPECT_EQ(ringwheel::FormatDate(20'812), "2026-12-25");
  EXPECT_EQ(ringwheel::FormatDate(Day("2028-02-29")), "2028-02-29");
  for (const char* bad : {"2026-02-30", "2026-2-3", "1969-12-31", "2200-01-01", "2026/12/25", "tomorrow", "",
                          "2026-12-25T00:00", "+026-12-25"}) {
    const auto r = ringwheel::ParseDate(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("use YYYY-MM-DD"), std::string_view::npos) << r.status();
  }
  EXPECT_EQ(Calendar::Make("Mars/Base", {}).status().code(), absl::StatusCode::kNotFound);
}

TEST(Calendar, AnInstantIsExcludedByItsWallDateInTheCalendarsZone) {
  // Christmas in Shanghai (UTC+8) begins at 16:00 UTC on the 24th and ends at 16:00 UTC on the 25th.
  const auto c = Make("Asia/Shanghai", {Day("2026-12-25")});
  EXPECT_FALSE(c.Excludes(Utc("2026-12-24T15:59:59Z")));
  EXPECT_TRUE(c.Excludes(Utc("2026-12-24T16:00:00Z")));
  EXPECT_TRUE(c.Excludes(Utc("2026-12-25T15:59:59Z")));
  EXPECT_FALSE(c.Excludes(Utc("2026-12-25T16:00:00Z")));
  EXPECT_EQ(c.NextIncludedMs(Utc("2026-12-24T20:00:00Z")), Utc("2026-12-25T16:00:00Z"));
}

TEST(Calendar, BusinessDaysSkipTheWeekendAndTheHolidaysAcrossTheSpringForwardDay) {
  // New York, 2026: DST starts Sunday 8 March at 02:00. Friday the 6th is a holiday here.
  const auto c = Make("America/New_York", {Day("2026-03-06")}, Calendar::kWeekend);
  const auto s = Cron("0 30 9 * * ?", "America/New_York");
  const std::vector<const Calendar*> cals = {&c};
  const FireWindow w(s, cals, 0, 0);
  // From Thursday's run: Friday (holiday), Saturday and Sunday are skipped; Monday 09:30 EDT is 13:30 UTC.
  EXPECT_EQ(w.NextFireMs(Utc("2026-03-05T14:30:00Z")), Utc("2026-03-09T13:30:00Z"));
  EXPECT_FALSE(w.Allows(Utc("2026-03-07T14:30:00Z")));
  EXPECT_TRUE(w.Allows(Utc("2026-03-09T13:30:00Z")));
  EXPECT_EQ(w.FirstFireFromMs(Utc("2026-03-09T13:30:00Z")), Utc("2026-03-09T13:30:00Z"));
  EXPECT_EQ(w.FirstFireFromMs(Utc("2026-03-06T14:30:00Z")), Utc("2026-03-09T13:30:00Z"));
}

TEST(Calendar, TheFallBackDayIsExcludedWholeBothOneThirtiesIncluded) {
  // New York, 1 November 2026: 01:00-02:00 occurs twice (EDT, then EST); the day lasts 25 hours.
  const auto c = Make("America/New_York", {Day("2026-11-01")});
  EXPECT_TRUE(c.Excludes(Utc("2026-11-01T04:00:00Z")));   // 00:00 EDT
  EXPECT_TRUE(c.Excludes(Utc("2026-11-01T05:30:00Z")));   // 01:30 EDT
  EXPECT_TRUE(c.Excludes(Utc("2026-11-01T06:30:00Z")));   // 01:30 EST
  EXPECT_TRUE(c.Excludes(Utc("2026-11-02T04:59:59Z")));   // 23:59:59 EST
  EXPECT_FALSE(c.Excludes(Utc("2026-11-02T05:00:00Z")));  // Monday 00:00 EST
  const auto s = Cron("0 30 1 * * ?", "America/New_York");
  const std::vector<const Calendar*> cals = {&c};
  EXPECT_EQ(FireWindow(s, cals, 0, 0).NextFireMs(Utc("2026-10-31T05:30:00Z")), Utc("2026-11-02T06:30:00Z"));
}

TEST(Calendar, ADayWhoseMidnightDoesNotExistStartsAtTheEndOfTheGap) {
  // Santiago, 2026: clocks go from Saturday 5 September 23:59:59 (-04) to Sunday 01:00 (-03).
  const auto c = Make("America/Santiago", {Day("2026-09-05")});
  EXPECT_EQ(c.NextIncludedMs(Utc("2026-09-05T12:00:00Z")), Utc("2026-09-06T04:00:00Z"));
  EXPECT_EQ(c.NextDayStartMs(Utc("2026-09-05T12:00:00Z")), Utc("2026-09-06T04:00:00Z"));
  EXPECT_EQ(c.NextDayStartMs(Utc("2026-09-06T12:00:00Z")), Utc("2026-09-07T03:00:00Z"));
  const auto hourly = Cron("0 0 * * * ?", "America/Santiago");
  const std::vector<const Calendar*> cals = {&c};
  EXPECT_EQ(FireWindow(hourly, cals, 0, 0).NextFireMs(Utc("2026-09-05T03:30:00Z")),
            Utc("2026-09-06T04:00:00Z"))
      << "Sunday 01:00 -03, the first hour of the day";
}

TEST(Calendar, AnEverySecondJobCrossesAnExcludedDayInOneStep) {
  const auto c = Make("UTC", {Day("2026-12-25"), Day("2026-12-26")});
  const auto s = Cron("* * * * * ?", "UTC");
  const std::vector<const Calendar*> cals = {&c};
  const FireWindow w(s, cals, 0, 0);
  EXPECT_EQ(w.NextFireMs(Utc("2026-12-24T23:59:59Z")), Utc("2026-12-27T00:00:00Z"));
  EXPECT_EQ(w.NextFireMs(Utc("2026-12-24T23:59:58Z")), Utc("2026-12-24T23:59:59Z"));
}

TEST(Calendar, CalendarsInTwoZonesEachExcludeTheirOwnDays) {
  const auto tokyo_weekend = Make("Asia/Tokyo", {}, Calendar::kWeekend);
  const auto london = Make("Europe/London", {Day("2026-12-27"), Day("2026-12-28")});
  const auto s = Cron("0 0 * * * ?", "UTC");
  const std::vector<const Calendar*> cals = {&tokyo_weekend, &london};
  const FireWindow w(s, cals, 0, 0);
  // Friday 25 December 14:00 UTC is Friday 23:00 in Tokyo; 15:00 UTC is Saturday there. Tokyo's weekend
  // ends at Sunday 15:00 UTC, but London's days off then last until Tuesday 00:00 UTC.
  EXPECT_EQ(w.NextFireMs(Utc("2026-12-25T13:00:00Z")), Utc("2026-12-25T14:00:00Z"));
  EXPECT_EQ(w.NextFireMs(Utc("2026-12-25T14:00:00Z")), Utc("2026-12-29T00:00:00Z"));
}

TEST(FireWindow, FiresOnlyFromTheStartToTheEndInclusive) {
  const auto s = Cron("0 * * * * ?", "UTC");
  const FireWindow w(s, {}, Utc("2026-05-01T10:00:30Z"), Utc("2026-05-01T10:05:00Z"));
  EXPECT_EQ(w.NextFireMs(Utc("2026-04-01T00:00:00Z")), Utc("2026-05-01T10:01:00Z"));
  EXPECT_EQ(w.NextFireMs(Utc("2026-05-01T10:04:00Z")), Utc("2026-05-01T10:05:00Z")) << "the end itself fires";
  EXPECT_EQ(w.NextFireMs(Utc("2026-05-01T10:05:00Z")), std::nullopt) << "then never again";
  EXPECT_FALSE(w.Allows(Utc("2026-05-01T10:00:00Z")));
  EXPECT_TRUE(w.Allows(Utc("2026-05-01T10:00:30Z")));
  EXPECT_EQ(w.FirstFireFromMs(Utc("2026-05-01T10:00:00Z")), Utc("2026-05-01T10:01:00Z"));
  const FireWindow exact(s, {}, Utc("2026-05-01T10:02:00Z"), 0);
  EXPECT_EQ(exact.NextFireMs(0), Utc("2026-05-01T10:02:00Z")) << "an instant at the start fires";
  EXPECT_TRUE(FireWindow(s, {}, 0, 0).unbounded());
}

TEST(FireWindow, ACalendarThatExcludesEveryDayEndsTheScheduleInsteadOfHanging) {
  const auto never = Make("UTC", {}, {true, true, true, true, true, true, true});
  const auto s = Cron("* * * * * ?", "UTC");
  const std::vector<const Calendar*> cals = {&never};
  EXPECT_EQ(FireWindow(s, cals, 0, 0).NextFireMs(Utc("2026-01-01T00:00:00Z")), std::nullopt);
  // Every day of the next eleven years listed, weekends aside: the walk gives up, bounded.
  std::vector<std::int32_t> all;
  for (int d = Day("2026-01-01"); d < Day("2037-01-01"); ++d)
    all.push_back(d);
  const auto listed = Make("UTC", all, Calendar::kWeekend);
  const std::vector<const Calendar*> listed_cals = {&listed};
  EXPECT_EQ(FireWindow(s, listed_cals, 0, 0).NextFireMs(Utc("2026-01-01T00:00:00Z")), std::nullopt);
}

}  // namespace
