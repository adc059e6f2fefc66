#include "ringwheel/time_zone.hpp"

#include <date/tz.h>
#include <gtest/gtest.h>

#include "test_time.hpp"

namespace {

using rwtest::Utc;
using rwtest::Value;

TEST(TimeZone, FindsIanaNamesAndDefaultsToUtc) {
  EXPECT_EQ(Value(ringwheel::FindTimeZone("America/New_York")), date::locate_zone("America/New_York"));
  EXPECT_EQ(Value(ringwheel::FindTimeZone("")), date::locate_zone("UTC"));
  const auto mars = ringwheel::FindTimeZone("Mars/Base");
  EXPECT_EQ(mars.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(mars.status().message(),
            "unknown time zone 'Mars/Base'; use an IANA name such as 'UTC' or 'Asia/Shanghai'");
  EXPECT_FALSE(ringwheel::FindTimeZone("../../etc/passwd").ok());
}

TEST(TimeZone, FormatsWithTheOffsetInForce) {
  const auto* ny = date::locate_zone("America/New_York");
  EXPECT_EQ(ringwheel::FormatIso8601(Utc("2026-03-08T06:59:59Z"), ny), "2026-03-08T01:59:59-05:00");
  EXPECT_EQ(ringwheel::FormatIso8601(Utc("2026-03-08T07:00:00Z"), ny), "2026-03-08T03:00:00-04:00");
  EXPECT_EQ(ringwheel::FormatIso8601(Utc("2026-03-08T07:00:00Z") + 250, ny), "2026-03-08T03:00:00.250-04:00");
  EXPECT_EQ(ringwheel::FormatIso8601(Utc("2026-04-04T15:00:00Z"), date::locate_zone("Australia/Lord_Howe")),
            "2026-04-05T01:30:00+10:30");
  EXPECT_EQ(ringwheel::FormatIso8601(0, nullptr), "1970-01-01T00:00:00+00:00");
  EXPECT_EQ(ringwheel::FormatIso8601(-1, nullptr), "1969-12-31T23:59:59.999+00:00");
}

TEST(TimeZone, ParsesIsoAndEpochMilliseconds) {
  const auto* ny = date::locate_zone("America/New_York");
  EXPECT_EQ(Value(ringwheel::ParseInstantMs("1772953200000", ny)), Utc("2026-03-08T07:00:00Z"));
  EXPECT_EQ(Value(ringwheel::ParseInstantMs("-1000", nullptr)), -1000);
  EXPECT_EQ(Value(ringwheel::ParseInstantMs("2026-03-08T07:00:00Z", ny)), Utc("2026-03-08T07:00:00Z"));
  EXPECT_EQ(Value(ringwheel::ParseInstantMs("2026-03-08T03:00:00-04:00", nullptr)),
            Utc("2026-03-08T07:00:00Z"));
  EXPECT_EQ(Value(ringwheel::ParseInstantMs("2026-03-08T03:00:00-0400", nullptr)),
            Utc("2026-03-08T07:00:00Z"));
  EXPECT_EQ(Value(ringwheel::ParseInstantMs("2026-03-08 03:00+05:30", nullptr)), Utc("2026-03-07T21:30:00Z"));
  EXPECT_EQ(Value(ringwheel::ParseInstantMs("2026-03-08T07:00:00.5Z", nullptr)),
            Utc("2026-03-08T07:00:00Z") + 500);
  EXPECT_EQ(Value(ringwheel::ParseInstantMs("2026-03-08", nullptr)), Utc("2026-03-08T00:00:00Z"));
  // Wall time in the zone: plain, inside the gap (-> end of gap), inside the overlap (-> first occurrence).
  EXPECT_EQ(Value(ringwheel::ParseInstantMs("2026-03-08T01:30:00", ny)), Utc("2026-03-08T06:30:00Z"));
  EXPECT_EQ(Value(ringwheel::ParseInstantMs("2026-03-08T02:30:00", ny)), Utc("2026-03-08T07:00:00Z"));
  EXPECT_EQ(Value(ringwheel::ParseInstantMs("2026-11-01T01:30:00", ny)), Utc("2026-11-01T05:30:00Z"));
}

TEST(TimeZone, RejectsWhatIsNotAnInstant) {
  for (const char* bad : {"", "tomorrow", "2026-13-01", "2026-02-30", "2026-03-08T25:00",
                          "2026-03-08T03:00:00+", "2026-03-08T03:00:00Zjunk", "2026-3-8", "12:00"}) {
    const auto parsed = ringwheel::ParseInstantMs(bad, nullptr);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(parsed.status().message());
    EXPECT_NE(message.find("invalid instant '" + std::string(bad) + "'"), std::string::npos) << message;
  }
}

TEST(TimeZone, FormatAndParseRoundTrip) {
  const auto* lh = date::locate_zone("Australia/Lord_Howe");
  for (std::int64_t ms = Utc("2026-04-04T14:00:00Z"); ms < Utc("2026-04-04T16:00:00Z");
       ms += 7 * 60 * 1000 + 1) {
    EXPECT_EQ(Value(ringwheel::ParseInstantMs(ringwheel::FormatIso8601(ms, lh), lh)), ms);
  }
}

}  // namespace
