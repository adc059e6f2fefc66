// The DST rule of cron.hpp, with fire instants computed by hand from the 2026 transitions:
//   America/New_York   2026-03-08 02:00 EST(-5) -> 03:00 EDT(-4) at 07:00Z
//                      2026-11-01 02:00 EDT(-4) -> 01:00 EST(-5) at 06:00Z   (01:00-01:59 twice)
//   Europe/Berlin      2026-03-29 02:00 CET(+1) -> 03:00 CEST(+2) at 01:00Z
//                      2026-10-25 03:00 CEST(+2) -> 02:00 CET(+1) at 01:00Z  (02:00-02:59 twice)
//   Australia/Lord_Howe (30-minute shift)
//                      2026-04-05 02:00 +11:00 -> 01:30 +10:30 at 2026-04-04T15:00Z (01:30-01:59 twice)
//                      2026-10-04 02:00 +10:30 -> 02:30 +11:00 at 2026-10-03T15:30Z (02:00-02:29 missing)
#include <date/tz.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ringwheel/cron.hpp"
#include "test_time.hpp"

namespace {

using rwtest::Utc;
using rwtest::UtcText;

std::vector<std::string> Fires(const std::string& text, const char* zone, const std::string& after,
                               std::size_t n) {
  const auto expr = ringwheel::CronExpression::Parse(text);
  if (!expr.ok()) return {"parse error: " + std::string(expr.status().message())};
  std::vector<std::string> out;
  for (const std::int64_t ms : expr->NextFiresMs(Utc(after), date::locate_zone(zone), n))
    out.push_back(UtcText(ms));
  return out;
}

TEST(CronDst, TransitionsAreWhereTheTestsAssume) {
  const auto* ny = date::locate_zone("America/New_York");
  const auto at = [](const char* iso) { return date::sys_seconds{std::chrono::seconds{Utc(iso) / 1000}}; };
  EXPECT_EQ(ny->get_info(at("2026-03-08T06:59:59Z")).offset, std::chrono::hours(-5));
  EXPECT_EQ(ny->get_info(at("2026-03-08T07:00:00Z")).offset, std::chrono::hours(-4));
  EXPECT_EQ(ny->get_info(at("2026-11-01T05:59:59Z")).offset, std::chrono::hours(-4));
  EXPECT_EQ(ny->get_info(at("2026-11-01T06:00:00Z")).offset, std::chrono::hours(-5));
  const auto* lh = date::locate_zone("Australia/Lord_Howe");
  EXPECT_EQ(lh->get_info(at("2026-04-04T14:59:59Z")).offset, std::chrono::minutes(660));
  EXPECT_EQ(lh->get_info(at("2026-04-04T15:00:00Z")).offset, std::chrono::minutes(630));
  EXPECT_EQ(lh->get_info(at("2026-10-03T15:29:59Z")).offset, std::chrono::minutes(630));
  EXPECT_EQ(lh->get_info(at("2026-10-03T15:30:00Z")).offset, std::chrono::minutes(660));
}

// --- spring forward: a wall time in the gap fires once, at the end of the gap ---

TEST(CronDst, NewYorkFixedTimeInTheGapFiresAtTheEndOfTheGap) {
  // 02:30 EST on the 7th; on the 8th 02:30 does not exist -> 03:00 EDT; 02:30 EDT on the 9th.
  EXPECT_EQ(
      Fires("0 30 2 * * ?", "America/New_York", "2026-03-07T05:00:00Z", 3),
      (std::vector<std::string>{"2026-03-07T07:30:00Z", "2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"}));
}

TEST(CronDst, NewYorkHourlyExpressionFiresOnceForTheMissingHour) {
  // 01:10 EST, then 02:10 (missing) -> 03:00 EDT, then 03:10 EDT.
  EXPECT_EQ(
      Fires("0 10 * * * ?", "America/New_York", "2026-03-08T05:30:00Z", 3),
      (std::vector<std::string>{"2026-03-08T06:10:00Z", "2026-03-08T07:00:00Z", "2026-03-08T07:10:00Z"}));
  // 01:30 EST; 02:00 and 02:30 (missing) and 03:00 EDT are one fire; 03:30 EDT.
  EXPECT_EQ(
      Fires("0 0/30 * * * ?", "America/New_York", "2026-03-08T06:00:00Z", 3),
      (std::vector<std::string>{"2026-03-08T06:30:00Z", "2026-03-08T07:00:00Z", "2026-03-08T07:30:00Z"}));
}

TEST(CronDst, BerlinFixedTimeInTheGapFiresAtTheEndOfTheGap) {
  // 02:30 CET on the 28th (01:30Z); the 29th's 02:30 is missing -> 03:00 CEST (01:00Z); 02:30 CEST (00:30Z).
  EXPECT_EQ(
      Fires("0 30 2 * * ?", "Europe/Berlin", "2026-03-28T00:00:00Z", 3),
      (std::vector<std::string>{"2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}));
}

TEST(CronDst, LordHoweHalfHourGap) {
  // 02:15 +10:30 on the 3rd; 02:15 on the 4th is missing -> 02:30 +11:00; 02:15 +11:00 on the 5th.
  EXPECT_EQ(
      Fires("0 15 2 * * ?", "Australia/Lord_Howe", "2026-10-02T12:00:00Z", 3),
      (std::vector<std::string>{"2026-10-02T15:45:00Z", "2026-10-03T15:30:00Z", "2026-10-04T15:15:00Z"}));
  // Every 10 minutes in hour 2: 02:00, 02:10, 02:20 (missing) and 02:30 are one fire at 02:30 +11:00.
  EXPECT_EQ(Fires("0 0/10 2 * * ?", "Australia/Lord_Howe", "2026-10-03T15:00:00Z", 4),
            (std::vector<std::string>{"2026-10-03T15:30:00Z", "2026-10-03T15:40:00Z", "2026-10-03T15:50:00Z",
                                      "2026-10-04T15:00:00Z"}));
}

// --- fall back: a fixed time fires once (first occurrence); an interval expression fires in both passes ---

TEST(CronDst, NewYorkFixedTimeInTheOverlapFiresOnceAtTheFirstOccurrence) {
  // 01:30 EDT (05:30Z) only, not 01:30 EST (06:30Z); then 01:30 EST on the 2nd.
  EXPECT_EQ(Fires("0 30 1 * * ?", "America/New_York", "2026-10-31T12:00:00Z", 2),
            (std::vector<std::string>{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}));
  // Asked from inside the second pass (01:10 EST), the repeated 01:30 is not a fire either.
  EXPECT_EQ(Fires("0 30 1 * * ?", "America/New_York", "2026-11-01T06:10:00Z", 1),
            (std::vector<std::string>{"2026-11-02T06:30:00Z"}));
  // A list of values is still a fixed time.
  EXPECT_EQ(
      Fires("0 0,30 1 * * ?", "America/New_York", "2026-11-01T04:00:00Z", 3),
      (std::vector<std::string>{"2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-02T06:00:00Z"}));
}

TEST(CronDst, NewYorkIntervalExpressionFiresThroughBothPasses) {
  EXPECT_EQ(
      Fires("0 0/30 * * * ?", "America/New_York", "2026-11-01T04:00:00Z", 6),
      (std::vector<std::string>{"2026-11-01T04:30:00Z", "2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z",
                                "2026-11-01T06:00:00Z", "2026-11-01T06:30:00Z", "2026-11-01T07:00:00Z"}));
  // Hourly: 00:00 EDT, 01:00 EDT, 01:00 EST, 02:00 EST.
  EXPECT_EQ(Fires("0 0 * * * ?", "America/New_York", "2026-11-01T03:30:00Z", 4),
            (std::vector<std::string>{"2026-11-01T04:00:00Z", "2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z",
                                      "2026-11-01T07:00:00Z"}));
  // An hour range makes it an interval expression: 01:30 EDT, 01:30 EST, 02:30 EST.
  EXPECT_EQ(
      Fires("0 30 1-2 * * ?", "America/New_York", "2026-11-01T04:00:00Z", 3),
      (std::vector<std::string>{"2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z", "2026-11-01T07:30:00Z"}));
}

TEST(CronDst, AnExpressionWhoseLastFiresAreInTheRepeatedHourStillReachesThem) {
  // Only 2026-11-01 01:00-01:45 (every 15 min). Asked at 01:50 EDT (05:50Z), no wall time at or after 01:50
  // matches, yet the repeated 01:00-01:45 EST is still ahead in real time.
  EXPECT_EQ(Fires("0 0/15 1 1 11 ? 2026", "America/New_York", "2026-11-01T05:50:00Z", 5),
            (std::vector<std::string>{"2026-11-01T06:00:00Z", "2026-11-01T06:15:00Z", "2026-11-01T06:30:00Z",
                                      "2026-11-01T06:45:00Z"}));
  // The fixed-time version fired at 01:30 EDT and is exhausted.
  EXPECT_EQ(Fires("0 30 1 1 11 ? 2026", "America/New_York", "2026-11-01T05:50:00Z", 5),
            (std::vector<std::string>{}));
}

TEST(CronDst, BerlinOverlap) {
  // Fixed 02:30: 02:30 CEST (00:30Z) on the 25th, then 02:30 CET (01:30Z) on the 26th.
  EXPECT_EQ(Fires("0 30 2 * * ?", "Europe/Berlin", "2026-10-24T12:00:00Z", 2),
            (std::vector<std::string>{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}));
  // Every 20 minutes in hour 2, through both passes.
  EXPECT_EQ(
      Fires("0 */20 2 * * ?", "Europe/Berlin", "2026-10-25T00:00:00Z", 6),
      (std::vector<std::string>{"2026-10-25T00:20:00Z", "2026-10-25T00:40:00Z", "2026-10-25T01:00:00Z",
                                "2026-10-25T01:20:00Z", "2026-10-25T01:40:00Z", "2026-10-26T01:00:00Z"}));
}

TEST(CronDst, LordHoweHalfHourOverlap) {
  // Fixed 01:45: first occurrence +11:00 (14:45Z); the repeat at +10:30 (15:15Z) does not fire.
  EXPECT_EQ(Fires("0 45 1 * * ?", "Australia/Lord_Howe", "2026-04-04T12:00:00Z", 2),
            (std::vector<std::string>{"2026-04-04T14:45:00Z", "2026-04-05T15:15:00Z"}));
  // Every 15 minutes in hour 1: 01:15, 01:30, 01:45 at +11:00, then 01:30, 01:45 again at +10:30.
  EXPECT_EQ(
      Fires("0 0/15 1 * * ?", "Australia/Lord_Howe", "2026-04-04T14:00:00Z", 6),
      (std::vector<std::string>{"2026-04-04T14:15:00Z", "2026-04-04T14:30:00Z", "2026-04-04T14:45:00Z",
                                "2026-04-04T15:00:00Z", "2026-04-04T15:15:00Z", "2026-04-05T14:30:00Z"}));
}

TEST(CronDst, DailyJobRunsExactlyOncePerDayAcrossBothTransitions) {
  // A whole year of a 00:30 / 01:30 / 02:30 daily job in New York: one fire per calendar day.
  for (const char* text : {"0 30 0 * * ?", "0 30 1 * * ?", "0 30 2 * * ?"}) {
    const auto expr = ringwheel::CronExpression::Parse(text);
    ASSERT_TRUE(expr.ok()) << expr.status();
    const auto fires =
        expr->NextFiresMs(Utc("2026-01-01T05:00:00Z"), date::locate_zone("America/New_York"), 365);
    ASSERT_EQ(fires.size(), 365U);
    EXPECT_EQ(UtcText(fires.front()).substr(0, 10), "2026-01-01") << text;
    EXPECT_EQ(UtcText(fires.back()).substr(0, 10), "2026-12-31") << text;
    for (std::size_t i = 1; i < fires.size(); ++i) {
      const std::int64_t gap_h = (fires[i] - fires[i - 1]) / 3'600'000;
      EXPECT_TRUE(gap_h >= 23 && gap_h <= 25)
          << text << " " << UtcText(fires[i - 1]) << " -> " << UtcText(fires[i]);
    }
  }
}

TEST(CronDst, IntervalJobKeepsItsRealTimeCadence) {
  // Every 15 minutes on the fall-back day in New York: 25 h of real time = 100 fires, 15 min apart.
  const auto expr = ringwheel::CronExpression::Parse("0 0/15 * * * ?");
  ASSERT_TRUE(expr.ok()) << expr.status();
  const auto fires =
      expr->NextFiresMs(Utc("2026-11-01T04:00:00Z") - 1, date::locate_zone("America/New_York"), 100);
  ASSERT_EQ(fires.size(), 100U);
  for (std::size_t i = 1; i < fires.size(); ++i)
    EXPECT_EQ(fires[i] - fires[i - 1], 15 * 60 * 1000);
  EXPECT_EQ(UtcText(fires.back()), "2026-11-02T04:45:00Z");
}

}  // namespace
