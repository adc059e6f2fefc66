// Schedule: the one function the scheduler, the console preview and cronwheel-cron share.
#include "ringwheel/schedule.hpp"

#include <date/tz.h>
#include <gtest/gtest.h>

#include "test_time.hpp"

namespace {

using ringwheel::Schedule;
using ringwheel::ScheduleType;
using rwtest::Utc;

TEST(ScheduleType, ParsesAndPrintsXxlJobSpelling) {
  for (const auto type :
       {ScheduleType::kCron, ScheduleType::kFixRate, ScheduleType::kFixDelay, ScheduleType::kNone}) {
    EXPECT_EQ(ringwheel::ParseScheduleType(ringwheel::ToString(type)), type);
  }
  EXPECT_EQ(ringwheel::ToString(ScheduleType::kFixRate), "FIX_RATE");
  EXPECT_FALSE(ringwheel::ParseScheduleType("cron"));
  EXPECT_FALSE(ringwheel::ParseScheduleType("FIX RATE"));
  EXPECT_FALSE(ringwheel::ParseScheduleType(""));
}

TEST(Schedule, CronInTheScheduleZone) {
  const auto s = Schedule::Parse("CRON", "0 0 9 * * ?", "Asia/Shanghai");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->type(), ScheduleType::kCron);
  EXPECT_EQ(s->conf(), "0 0 9 * * ?");
  EXPECT_EQ(s->zone_name(), "Asia/Shanghai");
  EXPECT_EQ(s->zone(), date::locate_zone("Asia/Shanghai"));
  // 09:00 in Shanghai (+08:00) is 01:00Z.
  EXPECT_EQ(s->NextFireMs(Utc("2026-01-01T00:00:00Z")), Utc("2026-01-01T01:00:00Z"));
  EXPECT_EQ(s->NextFireMs(Utc("2026-01-01T01:00:00Z")), Utc("2026-01-02T01:00:00Z"));
}

TEST(Schedule, EmptyZoneIsUtc) {
  const auto s = Schedule::Parse("CRON", "0 0 9 * * ?", "");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->zone_name(), "UTC");
  ASSERT_NE(s->zone(), nullptr);
  EXPECT_EQ(s->NextFireMs(Utc("2026-01-01T00:00:00Z")), Utc("2026-01-01T09:00:00Z"));
}

TEST(Schedule, ExhaustedCronHasNoNextFire) {
  const auto s = Schedule::Parse("CRON", "0 0 0 1 1 ? 2020", "UTC");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->NextFireMs(Utc("2026-01-01T00:00:00Z")), std::nullopt);
}

TEST(Schedule, FixRateAddsWholeSecondsAndRoundsUp) {
  const auto s = Schedule::Parse("FIX_RATE", "30", "UTC");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->NextFireMs(1'000'000), 1'030'000);
  EXPECT_EQ(s->NextFireMs(1'000'001), 1'031'000);  // XXL-JOB 3.4+: a result with milliseconds rounds up
  EXPECT_EQ(s->NextFireMs(1'000'999), 1'031'000);
}

TEST(Schedule, FixDelayCountsFromTheGivenFinishTime) {
  const auto s = Schedule::Parse("FIX_DELAY", "5", "Europe/Berlin");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->type(), ScheduleType::kFixDelay);
  EXPECT_EQ(s->NextFireMs(Utc("2026-03-29T00:59:58Z") + 250), Utc("2026-03-29T01:00:04Z"));
}

TEST(Schedule, NoneNeverFires) {
  const auto s = Schedule::Parse("NONE", "", "UTC");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->NextFireMs(0), std::nullopt);
}

TEST(Schedule, ErrorsNameTheField) {
  const auto error_of = [](const char* type, const char* conf, const char* zone) {
    const auto parsed = Schedule::Parse(type, conf, zone);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    return parsed.status();
  };
  absl::Status e = error_of("CRONTAB", "0 0 9 * * ?", "UTC");
  EXPECT_EQ(cronwheel::ErrorField(e), "schedule_type");
  EXPECT_EQ(e.message(), "unknown schedule type 'CRONTAB'; allowed are CRON, FIX_RATE, FIX_DELAY, NONE");

  e = error_of("FIX_RATE", "abc", "UTC");
  EXPECT_EQ(cronwheel::ErrorField(e), "schedule_conf");
  EXPECT_EQ(e.message(), "FIX_RATE needs whole seconds >= 1 (at most 2147483647), got 'abc'");
  for (const char* bad : {"0", "-5", "1.5", "", " 5", "2147483648", "99999999999"}) {
    e = error_of("FIX_DELAY", bad, "UTC");
    EXPECT_EQ(cronwheel::ErrorField(e), "schedule_conf") << bad;
    EXPECT_EQ(e.message(),
              std::string("FIX_DELAY needs whole seconds >= 1 (at most 2147483647), got '") + bad + "'");
  }

  e = error_of("CRON", "0 0 25 * * ?", "UTC");
  EXPECT_EQ(cronwheel::ErrorField(e), "schedule_conf");
  EXPECT_EQ(e.message(),
            "invalid cron expression '0 0 25 * * ?': hour field: token '25' is out of range; allowed are "
            "0-23, with , - * /");

  e = error_of("CRON", "0 0 9 * * ?", "Mars/Base");
  EXPECT_EQ(cronwheel::ErrorField(e), "time_zone");
  EXPECT_EQ(e.message(), "unknown time zone 'Mars/Base'; use an IANA name such as 'UTC' or 'Asia/Shanghai'");
}

}  // namespace
