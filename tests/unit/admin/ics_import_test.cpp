// Importing calendar days from iCalendar files (admin/model/ics_import.hpp) with libical: the holiday
// calendars of two countries for two years (tests/fixtures/calendars), recurring events, the errors, and
// the bounds of an import against generated hostile files (security review 2, N5).
#include "admin/model/ics_import.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cwtest/fake_clock.hpp"
#include "ringwheel/time_zone.hpp"

namespace {

using cronwheel::admin::CalendarDay;
using cronwheel::admin::CalendarKind;
using cronwheel::admin::IcsLimits;
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

// ImportIcs on a clock that stands still (the limits of time are tested on a clock that moves).
cronwheel::admin::Result<cronwheel::admin::IcsImport> Import(std::string_view text, std::int32_t from,
                                                             std::int32_t to) {
  static cwtest::FakeClock clock;
  return ImportIcs(text, from, to, clock);
}

std::string Wrap(const std::string& events) {
  return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n" + events + "END:VCALENDAR\r\n";
}

TEST(IcsImport, EnglandAndWalesBankHolidaysOfTwoYears) {
  const auto r = Import(Fixture("gb-england-and-wales-2026-2027.ics"), Day("2026-01-01"), Day("2027-12-31"));
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
  EXPECT_EQ(Import(Fixture("gb-england-and-wales-2026-2027.ics"), Day("2026-06-01"), Day("2026-06-30"))
                ->days.size(),
            16u);
}

TEST(IcsImport, GermanHolidaysWithYearlyRecurringEventsAreExpandedInTheWindow) {
  const auto text = Fixture("de-feiertage-2026-2027.ics");
  const auto r = Import(text, Day("2026-01-01"), Day("2027-12-31"));
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
  const auto one_year = Import(text, Day("2026-01-01"), Day("2026-12-31"));
  ASSERT_TRUE(one_year.ok());
  EXPECT_EQ(Dates(one_year->days).size(), 9u + 4u) << "nine of 2026, and the four single events of 2027";
}

TEST(IcsImport, TheImportedDaysMakeABusinessDayCalendarThatSkipsTheChristmasHolidays) {
  const auto r = Import(Fixture("gb-england-and-wales-2026-2027.ics"), Day("2026-01-01"), Day("2027-12-31"));
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
  const auto r = Import(
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
    const auto r = Import(text, Day("2026-01-01"), Day("2026-12-31"));
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

// --- security review 2, N5: a hostile file costs a bounded amount --------------------------------------

// A clock whose steady time moves `step` each time it is read: an import that reads it N times has "taken"
// N steps, however fast the machine is.
class SteppingClock final : public ringwheel::Clock {
 public:
  explicit SteppingClock(std::chrono::milliseconds step) : step_(step) {}
  [[nodiscard]] ringwheel::SystemTime WallNow() const override {
    return ringwheel::FromEpochMs(1767225600000);
  }
  [[nodiscard]] ringwheel::SteadyTime SteadyNow() const override {
    reads_ += 1;
    return ringwheel::SteadyTime{} + step_ * reads_;
  }
  bool WaitUntil(ringwheel::SteadyTime /*deadline*/, std::stop_token /*stop*/) override { return true; }
  [[nodiscard]] int reads() const { return reads_; }

 private:
  std::chrono::milliseconds step_;
  mutable int reads_ = 0;
};

// `n` all-day events, each with `rule` ("" for none).
std::string Events(int n, const std::string& rule) {
  std::string events;
  for (int i = 0; i < n; ++i) {
    events += fmt::format(
        "BEGIN:VEVENT\r\nUID:e{}\r\nDTSTART;VALUE=DATE:20260101\r\n{}SUMMARY:E{}\r\nEND:VEVENT\r\n", i,
        rule.empty() ? "" : rule + "\r\n", i);
  }
  return Wrap(events);
}

// The refusal's FieldError: field ics, code limit, naming the limit, its value and the file's.
void ExpectLimit(const cronwheel::admin::Result<cronwheel::admin::IcsImport>& r, const char* limit,
                 std::int64_t max, std::int64_t actual_at_least) {
  ASSERT_FALSE(r.ok()) << "accepted";
  ASSERT_EQ(r.error().fields.size(), 1u) << r.error().message;
  const auto& f = r.error().fields[0];
  EXPECT_EQ(f.field, "ics");
  EXPECT_EQ(f.code, "limit");
  EXPECT_EQ(f.params.at("limit"), limit);
  EXPECT_EQ(f.params.at("max"), max);
  EXPECT_GE(f.params.at("actual").get<std::int64_t>(), actual_at_least);
  EXPECT_THAT(r.error().message, HasSubstr(std::to_string(max)));
}

TEST(IcsImportN5, TooManyComponentsAreRefusedBeforeLibicalParsesThem) {
  cwtest::FakeClock clock;
  // 10,000 events (the review's file) and a file of alarms: components of any kind count.
  ExpectLimit(ImportIcs(Events(10'000, ""), Day("2026-01-01"), Day("2035-12-31"), clock), "max_components",
              5'000, 10'000);
  std::string alarms = "BEGIN:VEVENT\r\nUID:a\r\nDTSTART;VALUE=DATE:20260101\r\nSUMMARY:A\r\n";
  for (int i = 0; i < 6'000; ++i)
    alarms += "BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT1M\r\nEND:VALARM\r\n";
  ExpectLimit(ImportIcs(Wrap(alarms + "END:VEVENT\r\n"), Day("2026-01-01"), Day("2035-12-31"), clock),
              "max_components", 5'000, 6'001);
  // At the limit, and with lower-case names (RFC 5545: names are case-insensitive), it is counted alike.
  const auto at_limit =
      ImportIcs(Events(3, ""), Day("2026-01-01"), Day("2026-12-31"), clock, IcsLimits{.max_components = 3});
  EXPECT_TRUE(at_limit.ok()) << at_limit.error().message;
  std::string lower = Events(4, "");
  for (std::size_t at = lower.find("BEGIN:VEVENT"); at != std::string::npos; at = lower.find("BEGIN:VEVENT"))
    lower.replace(at, 12, "begin:vevent");
  ExpectLimit(ImportIcs(lower, Day("2026-01-01"), Day("2026-12-31"), clock, IcsLimits{.max_components = 3}),
              "max_components", 3, 4);
}

TEST(IcsImportN5, TooManyRecurrenceRulesAreRefusedBeforeLibicalParsesThem) {
  cwtest::FakeClock clock;
  // The review's 45,000 RRULEs (in one event, within the 1 MiB): refused by counting lines.
  std::string rules = "BEGIN:VEVENT\r\nUID:r\r\nDTSTART;VALUE=DATE:20260101\r\nSUMMARY:R\r\n";
  for (int i = 0; i < 45'000; ++i)
    rules += "RRULE:FREQ=DAILY\r\n";
  const auto text = Wrap(rules + "END:VEVENT\r\n");
  ASSERT_LE(text.size(), cronwheel::admin::kMaxIcsBytes);
  ExpectLimit(ImportIcs(text, Day("2026-01-01"), Day("2035-12-31"), clock), "max_rules", 1'000, 45'000);
  ExpectLimit(ImportIcs(Events(4, "rrule;x-a=b:FREQ=YEARLY"), Day("2026-01-01"), Day("2035-12-31"), clock,
                        IcsLimits{.max_rules = 3}),
              "max_rules", 3, 4);
}

TEST(IcsImportN5, ExpandingRecurringEventsStopsAtTheLimitOfInstants) {
  cwtest::FakeClock clock;
  // 1,000 rules of one occurrence per second: 10,000 instants each on the first day (the old bound per rule),
  // 10 million in all before; now at most 100,000 are computed.
  const auto r = ImportIcs(Events(1'000, "RRULE:FREQ=SECONDLY"), Day("2026-01-01"), Day("2035-12-31"), clock);
  ExpectLimit(r, "max_instants", 100'000, 100'001);
  EXPECT_THAT(r.error().message, HasSubstr("at event 11 'E10'"));
  // Within the window, the occurrences of every rule count: 900 weekly rules over ten years are 469,800.
  const auto weekly =
      ImportIcs(Events(900, "RRULE:FREQ=WEEKLY"), Day("2026-01-01"), Day("2035-12-31"), clock);
  ExpectLimit(weekly, "max_instants", 100'000, 100'001);
  // Days pile up as events are read; more distinct days than a calendar holds are refused (twenty years of
  // daily rules), not cut short.
  std::string daily;
  for (int year = 2026; year < 2029; ++year) {
    daily += fmt::format(
        "BEGIN:VEVENT\r\nUID:d{0}\r\nDTSTART;VALUE=DATE:{0}0101\r\nRRULE:FREQ=DAILY\r\n"
        "SUMMARY:D\r\nEND:VEVENT\r\n",
        year);
  }
  ExpectLimit(ImportIcs(Wrap(daily), Day("2026-01-01"), Day("2045-12-31"), clock), "max_days", 5'000, 5'001);
  // A yearly rule over ten years is well within it.
  const auto yearly =
      ImportIcs(Events(100, "RRULE:FREQ=YEARLY"), Day("2026-01-01"), Day("2035-12-31"), clock);
  ASSERT_TRUE(yearly.ok()) << yearly.error().message;
  EXPECT_EQ(yearly->days.size(), 10u);
}

TEST(IcsImportN5, AnImportThatRunsPastItsTimeIsStoppedByTheInjectedClock) {
  // Each read of the clock "takes" 10 ms; 5 s allow about 500 reads: one per event, one per 256 instants.
  SteppingClock clock(std::chrono::milliseconds(10));
  const auto r =
      ImportIcs(Events(900, "RRULE:FREQ=DAILY;COUNT=3"), Day("2026-01-01"), Day("2035-12-31"), clock);
  ExpectLimit(r, "max_time_ms", 5'000, 1);
  EXPECT_LE(clock.reads(), 502) << "it stopped at its deadline";
  // The same file on a clock that stands still is imported whole.
  cwtest::FakeClock still;
  const auto whole =
      ImportIcs(Events(900, "RRULE:FREQ=DAILY;COUNT=3"), Day("2026-01-01"), Day("2035-12-31"), still);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_EQ(whole->events, 900);
}

}  // namespace
