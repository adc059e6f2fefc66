// Importing calendar days from iCalendar files (admin/model/ics_import.hpp) with libical: the holiday
// calendars of two countries for two years (tests/fixtures/calendars), recurring events, and the errors.
#include "admin/model/ics_import.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "ringwheel/time_zone.hpp"

namespace {

using cronwheel::admin::CalendarDay;
using cronwheel::admin::CalendarKind;
using cronwheel::admin::ImportIcs;
using cronwheel::admin::JobCalendar;
using ::testing::HasSubstr;

std::int32_t Day(const char* text) {
  return *ringwheel::ParseDate(text);
}

std::string Fixture(const char* name) {
  std::ifstream in(std::string(CRONWHEEL_SOURCE_DIR) + "/tests/fixtures/calendars/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> Dates(const std::vector<CalendarDay>& days) {
  std::vector<std::string> out;
  out.reserve(days.size());
  for (const auto& d : days)
    out.push_back(ringwheel::FormatDate(d.day));
  return out;
}

std::string Wrap(const std::string& events) {
  return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n" + events + "END:VCALENDAR\r\n";
}

TEST(IcsImport, EnglandAndWalesBankHolidaysOfTwoYears) {
  const auto r =
      ImportIcs(Fixture("gb-england-and-wales-2026-2027.ics"), Day("2026-01-01"), Day("2027-12-31"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->events, 16);
  EXPECT_EQ(Dates(r->days),
            (std::vector<std::string>{"2026-01-01", "2026-04-03", "2026-04-06", "2026-05-04", "2026-05-25",
                                      "2026-08-31", "2026-12-25", "2026-12-28", "2027-01-01", "2027-03-26",
                                      "2027-03-29", "2027-05-03", "2027-05-31", "2027-08-30", "2027-12-27",
                                      "2027-12-28"}));
  EXPECT_EQ(r->days[7].name, "Boxing Day (substitute day)");
  EXPECT_EQ(r->days[0].name, "New Year\u2019s Day") << "UTF-8 kept";
  // A single event is kept whatever the window: it names its own date.
  EXPECT_EQ(ImportIcs(Fixture("gb-england-and-wales-2026-2027.ics"), Day("2026-06-01"), Day("2026-06-30"))
                ->days.size(),
            16u);
}

TEST(IcsImport, GermanHolidaysWithYearlyRecurringEventsAreExpandedInTheWindow) {
  const auto text = Fixture("de-feiertage-2026-2027.ics");
  const auto r = ImportIcs(text, Day("2026-01-01"), Day("2027-12-31"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->calendar_name, "Feiertage in Deutschland");
  EXPECT_EQ(r->events, 13);
  EXPECT_EQ(Dates(r->days),
            (std::vector<std::string>{"2026-01-01", "2026-04-03", "2026-04-06", "2026-05-01", "2026-05-14",
                                      "2026-05-25", "2026-10-03", "2026-12-25", "2026-12-26", "2027-01-01",
                                      "2027-03-26", "2027-03-29", "2027-05-01", "2027-05-06", "2027-05-17",
                                      "2027-10-03", "2027-12-25", "2027-12-26"}));
  EXPECT_EQ(r->days[3].name, "Tag der Arbeit");
  // Only 2026: the recurring events' 2027 occurrences are left out.
  const auto one_year = ImportIcs(text, Day("2026-01-01"), Day("2026-12-31"));
  ASSERT_TRUE(one_year.ok());
  EXPECT_EQ(Dates(one_year->days).size(), 9u + 4u) << "nine of 2026, and the four single events of 2027";
}

TEST(IcsImport, TheImportedDaysMakeABusinessDayCalendarThatSkipsTheChristmasHolidays) {
  const auto r =
      ImportIcs(Fixture("gb-england-and-wales-2026-2027.ics"), Day("2026-01-01"), Day("2027-12-31"));
  ASSERT_TRUE(r.ok());
  const JobCalendar c{
      .name = "uk", .kind = CalendarKind::kBusinessDays, .time_zone = "Europe/London", .days = r->days};
  const auto compiled = c.Compile();
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const auto schedule = ringwheel::Schedule::Parse("CRON", "0 0 9 * * ?", "Europe/London");
  ASSERT_TRUE(schedule.ok());
  const std::vector<const ringwheel::Calendar*> cals = {&*compiled};
  const ringwheel::FireWindow w(*schedule, cals, 0, 0);
  // Thursday 24 December 2026 09:00 GMT; Friday is Christmas, then the weekend, then the Boxing Day
  // substitute: Tuesday the 29th.
  const auto thursday = *ringwheel::ParseInstantMs("2026-12-24T09:00:00Z", nullptr);
  EXPECT_EQ(w.NextFireMs(thursday), *ringwheel::ParseInstantMs("2026-12-29T09:00:00Z", nullptr));
}

TEST(IcsImport, MultiDayEventsExceptionsCancelledEventsAndTimedEvents) {
  const auto r = ImportIcs(
      Wrap("BEGIN:VEVENT\r\nUID:a\r\nDTSTART;VALUE=DATE:20261224\r\nDTEND;VALUE=DATE:20261227\r\n"
           "SUMMARY:Office closed\r\nEND:VEVENT\r\n"
           "BEGIN:VEVENT\r\nUID:b\r\nDTSTART;VALUE=DATE:20260701\r\nRRULE:FREQ=MONTHLY;COUNT=4\r\n"
           "EXDATE;VALUE=DATE:20260801\r\nRDATE;VALUE=DATE:20261115\r\nSUMMARY:Stock take\r\nEND:VEVENT\r\n"
           "BEGIN:VEVENT\r\nUID:c\r\nDTSTART;VALUE=DATE:20260310\r\nSTATUS:CANCELLED\r\n"
           "SUMMARY:Called off\r\nEND:VEVENT\r\n"
           "BEGIN:VEVENT\r\nUID:d\r\nDTSTART;TZID=Asia/Shanghai:20260930T220000\r\n"
           "DTEND;TZID=Asia/Shanghai:20261001T020000\r\nSUMMARY:Late release\r\nEND:VEVENT\r\n"
           "BEGIN:VEVENT\r\nUID:e\r\nDTSTART;VALUE=DATE:20261224\r\nSUMMARY:Christmas Eve\r\nEND:VEVENT\r\n"),
      Day("2026-01-01"), Day("2026-12-31"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->events, 5);
  EXPECT_EQ(r->cancelled, 1);
  EXPECT_EQ(Dates(r->days),
            (std::vector<std::string>{"2026-07-01", "2026-09-01", "2026-09-30", "2026-10-01", "2026-11-15",
                                      "2026-12-24", "2026-12-25", "2026-12-26"}));
  EXPECT_EQ(r->days[5].name, "Office closed; Christmas Eve") << "two events on one day";
  EXPECT_EQ(r->days[2].name, "Late release") << "a timed event gives the date it starts, as written";
}

TEST(IcsImport, WhatIsNotACalendarIsRefusedSayingWhy) {
  const auto error = [](const std::string& text) {
    const auto r = ImportIcs(text, Day("2026-01-01"), Day("2026-12-31"));
    return r.ok() ? std::string("(accepted)") : r.error().message;
  };
  EXPECT_THAT(error("Date,Name\n2026-12-25,Christmas\n"), HasSubstr("not an iCalendar file"));
  EXPECT_THAT(error(""), HasSubstr("not an iCalendar file"));
  EXPECT_THAT(error(Wrap("")), HasSubstr("no events (VEVENT)"));
  EXPECT_THAT(error(Wrap("BEGIN:VEVENT\r\nUID:x\r\nSUMMARY:No date\r\nEND:VEVENT\r\n")),
              HasSubstr("event 1 ('No date') has no valid DTSTART"));
  EXPECT_THAT(
      error(Wrap("BEGIN:VEVENT\r\nUID:x\r\nDTSTART;VALUE=DATE:20261332\r\nSUMMARY:Bad\r\nEND:VEVENT\r\n")),
      HasSubstr("has no valid DTSTART"));
  EXPECT_THAT(error(std::string(cronwheel::admin::kMaxIcsBytes + 1, 'x')), HasSubstr("at most"));
}

}  // namespace
