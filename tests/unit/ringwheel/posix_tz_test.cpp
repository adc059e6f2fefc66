// The TZif footer rules that extend date-tz past a zone's last listed transition (2037 in Debian's files).
// White-box: includes ringwheel's private headers (src/).
#include "posix_tz.hpp"

#include <date/tz.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ringwheel/cron.hpp"
#include "ringwheel/time_zone.hpp"
#include "test_time.hpp"
#include "zone_period.hpp"

namespace {

using ringwheel::detail::ParsePosixTz;
using ringwheel::detail::PosixTransition;
using ringwheel::detail::TransitionInstant;
using rwtest::Utc;
using rwtest::UtcText;

TEST(PosixTz, ParsesFootersOfRealZones) {
  const auto ny = ParsePosixTz("EST5EDT,M3.2.0,M11.1.0");
  ASSERT_TRUE(ny);
  EXPECT_EQ(ny->std_offset, -5 * 3600);
  EXPECT_TRUE(ny->has_dst);
  EXPECT_EQ(ny->dst_offset, -4 * 3600);
  EXPECT_EQ(ny->dst_start.month, 3);
  EXPECT_EQ(ny->dst_start.week, 2);
  EXPECT_EQ(ny->dst_start.weekday, 0);
  EXPECT_EQ(ny->dst_start.time, 2 * 3600);
  EXPECT_EQ(ny->dst_end.month, 11);

  const auto berlin = ParsePosixTz("CET-1CEST,M3.5.0,M10.5.0/3");
  ASSERT_TRUE(berlin);
  EXPECT_EQ(berlin->std_offset, 3600);
  EXPECT_EQ(berlin->dst_offset, 7200);
  EXPECT_EQ(berlin->dst_end.time, 3 * 3600);

  const auto lord_howe = ParsePosixTz("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0");
  ASSERT_TRUE(lord_howe);
  EXPECT_EQ(lord_howe->std_offset, 10 * 3600 + 1800);
  EXPECT_EQ(lord_howe->dst_offset, 11 * 3600);

  const auto shanghai = ParsePosixTz("CST-8");
  ASSERT_TRUE(shanghai);
  EXPECT_FALSE(shanghai->has_dst);
  EXPECT_EQ(shanghai->std_offset, 8 * 3600);

  const auto jerusalem = ParsePosixTz("IST-2IDT,M3.4.4/26,M10.5.0");  // a time past 24 h
  ASSERT_TRUE(jerusalem);
  EXPECT_EQ(jerusalem->dst_start.time, 26 * 3600);
  const auto nuuk = ParsePosixTz("<-02>2<-01>,M3.5.0/-1,M10.5.0/0");  // negative times
  ASSERT_TRUE(nuuk);
  EXPECT_EQ(nuuk->dst_start.time, -3600);
  const auto julian = ParsePosixTz("<+0330>-3:30<+0430>,J79/24,J263/24");
  ASSERT_TRUE(julian);
  EXPECT_EQ(julian->dst_start.day, PosixTransition::Day::kJulian1);
  EXPECT_EQ(julian->dst_start.n, 79);
  EXPECT_TRUE(ParsePosixTz("EST5EDT"));  // no rule: the US default
}

TEST(PosixTz, RejectsMalformedStrings) {
  for (const char* bad :
       {"", "5", "ES5", "EST", "EST25", "<+03", "<+03>", "EST5EDT,M13.1.0,M11.1.0", "EST5EDT,M3.6.0,M11.1.0",
        "EST5EDT,M3.2.7,M11.1.0", "EST5EDT,M3.2.0", "EST5EDT,M3.2.0,M11.1.0,", "EST5EDT,M3.2.0,M11.1.0x",
        "EST5EDT,J0,J365", "EST5EDT,366,0"}) {
    EXPECT_FALSE(ParsePosixTz(bad)) << bad;
  }
}

TEST(PosixTz, TransitionInstants) {
  const auto ny = ParsePosixTz("EST5EDT,M3.2.0,M11.1.0");
  ASSERT_TRUE(ny);
  // 2026: second Sunday of March at 02:00 EST; first Sunday of November at 02:00 EDT.
  EXPECT_EQ(TransitionInstant(ny->dst_start, 2026, ny->std_offset) * 1000, Utc("2026-03-08T07:00:00Z"));
  EXPECT_EQ(TransitionInstant(ny->dst_end, 2026, ny->dst_offset) * 1000, Utc("2026-11-01T06:00:00Z"));
  // Week 5 is the last such weekday: the last Sunday of March 2026 is the 29th.
  const auto berlin = ParsePosixTz("CET-1CEST,M3.5.0,M10.5.0/3");
  ASSERT_TRUE(berlin);
  EXPECT_EQ(TransitionInstant(berlin->dst_start, 2026, berlin->std_offset) * 1000,
            Utc("2026-03-29T01:00:00Z"));
  // Jn never counts February 29: J60 is March 1 in 2028 (leap) as in 2027; n counts it: 59 is Feb 29 2028.
  PosixTransition j60{PosixTransition::Day::kJulian1, 60, 0, 0, 0, 0};
  EXPECT_EQ(TransitionInstant(j60, 2028, 0) * 1000, Utc("2028-03-01T00:00:00Z"));
  EXPECT_EQ(TransitionInstant(j60, 2027, 0) * 1000, Utc("2027-03-01T00:00:00Z"));
  PosixTransition n59{PosixTransition::Day::kJulian0, 59, 0, 0, 0, 0};
  EXPECT_EQ(TransitionInstant(n59, 2028, 0) * 1000, Utc("2028-02-29T00:00:00Z"));
}

TEST(PosixTz, EveryZonesFooterReproducesItsListedTransitions) {
  // For each zone of the system database with a DST rule in its footer, the rule's transitions for
  // 2030-2036 must be exactly the ones zic listed in the file (which date-tz reports). Zones that list
  // irregular transitions beyond 2037 (Asia/Gaza and Asia/Hebron suspend DST for Ramadan until the 2080s)
  // are skipped: their footer only applies after those, and PeriodAt uses the listed ones until then.
  int zones_checked = 0;
  const date::sys_seconds y2038{std::chrono::seconds{Utc("2038-01-01T00:00:00Z") / 1000}};
  for (const auto& z : date::get_tzdb().zones) {
    const std::string& name = z.name();
    if (name.rfind("posix/", 0) == 0 || name.rfind("right/", 0) == 0) continue;
    const auto rule = ringwheel::detail::FooterRule(&z);
    if (!rule || !rule->has_dst) continue;
    if (z.get_info(y2038).end < date::sys_days{date::year{2400} / 1 / 1}) continue;
    ++zones_checked;
    for (int year = 2030; year <= 2036; ++year) {
      const std::int64_t start = TransitionInstant(rule->dst_start, year, rule->std_offset);
      const std::int64_t end = TransitionInstant(rule->dst_end, year, rule->dst_offset);
      const auto offset_at = [&z](std::int64_t t) {
        return z.get_info(date::sys_seconds{std::chrono::seconds{t}}).offset.count();
      };
      EXPECT_EQ(offset_at(start - 1), rule->std_offset) << name << " " << year << " before DST";
      EXPECT_EQ(offset_at(start), rule->dst_offset)
          << name << " " << year << " DST start " << UtcText(start * 1000);
      EXPECT_EQ(offset_at(end - 1), rule->dst_offset) << name << " " << year << " before DST end";
      EXPECT_EQ(offset_at(end), rule->std_offset)
          << name << " " << year << " DST end " << UtcText(end * 1000);
    }
  }
  EXPECT_GT(zones_checked, 50);
}

TEST(PosixTz, PeriodsAfterTheLastListedTransitionFollowTheRule) {
  const auto* ny = date::locate_zone("America/New_York");
  // date-tz alone says EST forever after 2037-11-01; the footer brings DST back.
  const auto summer = ringwheel::detail::PeriodAt(ny, Utc("2040-07-01T00:00:00Z") / 1000);
  EXPECT_EQ(summer.offset, -4 * 3600);
  EXPECT_EQ(summer.begin * 1000, Utc("2040-03-11T07:00:00Z"));
  EXPECT_EQ(summer.end * 1000, Utc("2040-11-04T06:00:00Z"));
  // The first rule period continues the last listed one seamlessly.
  const auto winter = ringwheel::detail::PeriodAt(ny, Utc("2038-01-15T00:00:00Z") / 1000);
  EXPECT_EQ(winter.offset, -5 * 3600);
  EXPECT_EQ(winter.begin * 1000, Utc("2037-11-01T06:00:00Z"));
  EXPECT_EQ(winter.end * 1000, Utc("2038-03-14T07:00:00Z"));
  // No DST in the rule: one open period.
  const auto shanghai =
      ringwheel::detail::PeriodAt(date::locate_zone("Asia/Shanghai"), Utc("2100-01-01T00:00:00Z") / 1000);
  EXPECT_EQ(shanghai.offset, 8 * 3600);
  EXPECT_EQ(shanghai.end, ringwheel::detail::kNoTransitionAfter);
}

std::vector<std::string> Fires(const std::string& text, const char* zone, const std::string& after,
                               std::size_t n) {
  const auto expr = ringwheel::CronExpression::Parse(text);
  if (!expr.ok()) return {"parse error"};
  std::vector<std::string> out;
  for (const std::int64_t ms : expr->NextFiresMs(Utc(after), date::locate_zone(zone), n))
    out.push_back(UtcText(ms));
  return out;
}

TEST(PosixTz, CronFollowsTheDstRuleAfter2037) {
  // New York 2040: DST from Sunday March 11 (07:00Z) to Sunday November 4 (06:00Z).
  EXPECT_EQ(
      Fires("0 30 2 * * ?", "America/New_York", "2040-03-10T00:00:00Z", 3),
      (std::vector<std::string>{"2040-03-10T07:30:00Z", "2040-03-11T07:00:00Z", "2040-03-12T06:30:00Z"}));
  EXPECT_EQ(Fires("0 30 1 * * ?", "America/New_York", "2040-11-03T12:00:00Z", 2),
            (std::vector<std::string>{"2040-11-04T05:30:00Z", "2040-11-05T06:30:00Z"}));
  // Lord Howe 2045: DST starts Sunday October 1 at 02:00 +10:30 (2045-09-30T15:30Z).
  EXPECT_EQ(
      Fires("0 15 2 * * ?", "Australia/Lord_Howe", "2045-09-29T12:00:00Z", 3),
      (std::vector<std::string>{"2045-09-29T15:45:00Z", "2045-09-30T15:30:00Z", "2045-10-01T15:15:00Z"}));
  // The tool's formatting and parsing agree.
  EXPECT_EQ(ringwheel::FormatIso8601(Utc("2040-07-01T16:00:00Z"), date::locate_zone("America/New_York")),
            "2040-07-01T12:00:00-04:00");
  EXPECT_EQ(
      rwtest::Value(ringwheel::ParseInstantMs("2040-03-11T02:30:00", date::locate_zone("America/New_York"))),
      Utc("2040-03-11T07:00:00Z"));
  EXPECT_EQ(
      rwtest::Value(ringwheel::ParseInstantMs("2040-11-04T01:30:00", date::locate_zone("America/New_York"))),
      Utc("2040-11-04T05:30:00Z"));
}

}  // namespace
