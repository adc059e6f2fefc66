// The examples of Quartz's CronTrigger tutorial (quartz-scheduler.org, "CronTrigger Tutorial"), plus the
// L / W / # edge cases at month ends and starts, in UTC. Every expected fire time was worked out by hand
// from a calendar (2026-01-01 is a Thursday; 2026-02-28 a Saturday; 2026-08-01 a Saturday; ...).
#include <gtest/gtest.h>

#include <cctype>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "ringwheel/cron.hpp"
#include "test_time.hpp"

namespace {

using rwtest::Utc;
using rwtest::UtcText;

struct Example {
  std::string expr;
  std::string after;                  // fires are strictly after this instant (UTC)
  std::vector<std::string> expected;  // the next fires, in order; fewer than asked = stops firing
  std::size_t ask = 0;                // how many to ask for (default: expected.size())
};

// How gtest shows an example (instead of its bytes).
void PrintTo(const Example& ex, std::ostream* os) {
  *os << "'" << ex.expr << "' after " << ex.after;
}

std::vector<std::string> Fires(const Example& ex) {
  const auto expr = ringwheel::CronExpression::Parse(ex.expr);
  if (!expr.ok()) return {"parse error: " + std::string(expr.status().message())};
  std::vector<std::string> out;
  const std::size_t n = ex.ask != 0 ? ex.ask : ex.expected.size();
  for (const std::int64_t ms : expr->NextFiresMs(Utc(ex.after), nullptr, n))
    out.push_back(UtcText(ms));
  return out;
}

class QuartzExample : public ::testing::TestWithParam<Example> {};

TEST_P(QuartzExample, FiresAtTheHandComputedTimes) {
  const Example& ex = GetParam();
  EXPECT_EQ(Fires(ex), ex.expected) << "expression '" << ex.expr << "' after " << ex.after;
}

// A function, not a static array: building std::strings at static initialisation could throw (cert-err58).
std::vector<Example> Examples() {
  return {
      // "Fire at 12pm (noon) every day"
      {"0 0 12 * * ?",
       "2026-01-01T00:00:00Z",
       {"2026-01-01T12:00:00Z", "2026-01-02T12:00:00Z", "2026-01-03T12:00:00Z"}},
      // "Fire at 10:15am every day"
      {"0 15 10 ? * *",
       "2026-01-01T00:00:00Z",
       {"2026-01-01T10:15:00Z", "2026-01-02T10:15:00Z", "2026-01-03T10:15:00Z"}},
      {"0 15 10 * * ? *", "2026-01-01T10:15:00Z", {"2026-01-02T10:15:00Z", "2026-01-03T10:15:00Z"}},
      // "Fire at 10:15am every day during the year 2005": the last fire, then nothing.
      {"0 15 10 * * ? 2005", "2005-12-30T10:15:00Z", {"2005-12-31T10:15:00Z"}, 3},
      {"0 15 10 * * ? 2005", "2026-01-01T00:00:00Z", {}, 3},
      // "Fire every minute starting at 2pm and ending at 2:59pm, every day"
      {"0 * 14 * * ?",
       "2026-01-01T14:58:30Z",
       {"2026-01-01T14:59:00Z", "2026-01-02T14:00:00Z", "2026-01-02T14:01:00Z"}},
      // "Fire every 5 minutes starting at 2pm and ending at 2:55pm, every day"
      {"0 0/5 14 * * ?",
       "2026-01-01T14:50:00Z",
       {"2026-01-01T14:55:00Z", "2026-01-02T14:00:00Z", "2026-01-02T14:05:00Z"}},
      // "... every 5 minutes from 2pm to 2:55pm, AND every 5 minutes from 6pm to 6:55pm"
      {"0 0/5 14,18 * * ?",
       "2026-01-01T14:50:00Z",
       {"2026-01-01T14:55:00Z", "2026-01-01T18:00:00Z", "2026-01-01T18:05:00Z"}},
      {"0 0/5 14,18 * * ?", "2026-01-01T18:55:00Z", {"2026-01-02T14:00:00Z"}},
      // "Fire every minute starting at 2pm and ending at 2:05pm"
      {"0 0-5 14 * * ?",
       "2026-01-01T14:04:00Z",
       {"2026-01-01T14:05:00Z", "2026-01-02T14:00:00Z", "2026-01-02T14:01:00Z"}},
      // "Fire at 2:10pm and at 2:44pm every Wednesday in the month of March" (Wednesdays 4, 11, 18, 25)
      {"0 10,44 14 ? 3 WED",
       "2026-01-01T00:00:00Z",
       {"2026-03-04T14:10:00Z", "2026-03-04T14:44:00Z", "2026-03-11T14:10:00Z", "2026-03-11T14:44:00Z"}},
      {"0 10,44 14 ? 3 WED", "2026-03-25T14:44:00Z", {"2027-03-03T14:10:00Z"}},
      // "Fire at 10:15am every Monday, Tuesday, Wednesday, Thursday and Friday" (from a Thursday)
      {"0 15 10 ? * MON-FRI",
       "2026-01-01T00:00:00Z",
       {"2026-01-01T10:15:00Z", "2026-01-02T10:15:00Z", "2026-01-05T10:15:00Z", "2026-01-06T10:15:00Z"}},
      // "Fire at 10:15am on the 15th day of every month"
      {"0 15 10 15 * ?",
       "2026-01-01T00:00:00Z",
       {"2026-01-15T10:15:00Z", "2026-02-15T10:15:00Z", "2026-03-15T10:15:00Z"}},
      // "Fire at 10:15am on the last day of every month"
      {"0 15 10 L * ?",
       "2026-01-01T00:00:00Z",
       {"2026-01-31T10:15:00Z", "2026-02-28T10:15:00Z", "2026-03-31T10:15:00Z", "2026-04-30T10:15:00Z"}},
      {"0 15 10 L * ?", "2028-02-01T00:00:00Z", {"2028-02-29T10:15:00Z"}},  // leap year
      // "Fire at 10:15am on the 2nd-to-last last day of every month" (L-2)
      {"0 15 10 L-2 * ?",
       "2026-01-01T00:00:00Z",
       {"2026-01-29T10:15:00Z", "2026-02-26T10:15:00Z", "2026-03-29T10:15:00Z", "2026-04-28T10:15:00Z"}},
      // "Fire at 10:15am on the last Friday of every month"
      {"0 15 10 ? * 6L",
       "2026-01-01T00:00:00Z",
       {"2026-01-30T10:15:00Z", "2026-02-27T10:15:00Z", "2026-03-27T10:15:00Z", "2026-04-24T10:15:00Z"}},
      {"0 15 10 ? * FRIL", "2026-01-01T00:00:00Z", {"2026-01-30T10:15:00Z"}},
      // "... on every last Friday of every month during the years 2002, 2003, 2004 and 2005"
      {"0 15 10 ? * 6L 2002-2005", "2002-01-01T00:00:00Z", {"2002-01-25T10:15:00Z", "2002-02-22T10:15:00Z"}},
      {"0 15 10 ? * 6L 2002-2005", "2005-12-01T00:00:00Z", {"2005-12-30T10:15:00Z"}, 3},
      {"0 15 10 ? * 6L 2002-2005", "2026-01-01T00:00:00Z", {}, 3},
      // "Fire at 10:15am on the third Friday of every month"
      {"0 15 10 ? * 6#3",
       "2026-01-01T00:00:00Z",
       {"2026-01-16T10:15:00Z", "2026-02-20T10:15:00Z", "2026-03-20T10:15:00Z", "2026-04-17T10:15:00Z"}},
      {"0 15 10 ? * FRI#3", "2026-01-16T10:15:00Z", {"2026-02-20T10:15:00Z"}},
      // a fifth Monday: none in January or February 2026, March 30
      {"0 0 12 ? * 2#5", "2026-01-01T00:00:00Z", {"2026-03-30T12:00:00Z", "2026-06-29T12:00:00Z"}},
      // "Fire at 12pm (noon) every 5 days every month, starting on the first day of the month" (1,6,...,31)
      {"0 0 12 1/5 * ?",
       "2026-01-25T00:00:00Z",
       {"2026-01-26T12:00:00Z", "2026-01-31T12:00:00Z", "2026-02-01T12:00:00Z", "2026-02-06T12:00:00Z"}},
      // "Fire every November 11th at 11:11am"
      {"0 11 11 11 11 ?", "2026-01-01T00:00:00Z", {"2026-11-11T11:11:00Z", "2027-11-11T11:11:00Z"}},

      // LW: the last weekday. Jan 31 is a Saturday (-> Fri 30), Feb 28 a Saturday (-> Fri 27), Mar 31 a
      // Tuesday, Apr 30 a Thursday, May 31 a Sunday (-> Fri 29).
      {"0 0 12 LW * ?",
       "2026-01-01T00:00:00Z",
       {"2026-01-30T12:00:00Z", "2026-02-27T12:00:00Z", "2026-03-31T12:00:00Z", "2026-04-30T12:00:00Z",
        "2026-05-29T12:00:00Z"}},
      // L-3W: the weekday nearest the third-to-last day (Jan 28 Wed; Feb 25 Wed; May 28 Thu).
      {"0 0 12 L-3W * ?", "2026-01-01T00:00:00Z", {"2026-01-28T12:00:00Z", "2026-02-25T12:00:00Z"}},
      // 15W: Jan 15 Thu; Feb 15 Sun -> Mon 16; Mar 15 Sun -> Mon 16; Apr 15 Wed.
      {"0 0 12 15W * ?",
       "2026-01-01T00:00:00Z",
       {"2026-01-15T12:00:00Z", "2026-02-16T12:00:00Z", "2026-03-16T12:00:00Z", "2026-04-15T12:00:00Z"}},
      // 15W in August 2026: the 15th is a Saturday -> Friday 14.
      {"0 0 12 15W * ?", "2026-08-01T00:00:00Z", {"2026-08-14T12:00:00Z"}},
      // 1W: Aug 1 2026 is a Saturday -> Monday 3 (never July 31); Nov 1 2026 a Sunday -> Monday 2.
      {"0 0 12 1W * ?", "2026-07-15T00:00:00Z", {"2026-08-03T12:00:00Z", "2026-09-01T12:00:00Z"}},
      {"0 0 12 1W * ?", "2026-10-15T00:00:00Z", {"2026-11-02T12:00:00Z"}},
      // 31W: Jan 31 Sat -> Fri 30; no Feb 31; Mar 31 Tue; no Apr 31; May 31 Sun -> Fri 29 (never June 1).
      {"0 0 12 31W * ?",
       "2026-01-01T00:00:00Z",
       {"2026-01-30T12:00:00Z", "2026-03-31T12:00:00Z", "2026-05-29T12:00:00Z"}},
      // L alone in day-of-week is Saturday (7).
      {"0 0 12 ? * L", "2026-01-01T00:00:00Z", {"2026-01-03T12:00:00Z", "2026-01-10T12:00:00Z"}},
      // Ranges that wrap: hours 22-2; FRI-MON from a Thursday; minutes 50-10/5.
      {"0 0 22-2 * * ?",
       "2026-01-01T21:00:00Z",
       {"2026-01-01T22:00:00Z", "2026-01-01T23:00:00Z", "2026-01-02T00:00:00Z", "2026-01-02T01:00:00Z",
        "2026-01-02T02:00:00Z", "2026-01-02T22:00:00Z"}},
      {"0 0 12 ? * FRI-MON",
       "2026-01-01T00:00:00Z",
       {"2026-01-02T12:00:00Z", "2026-01-03T12:00:00Z", "2026-01-04T12:00:00Z", "2026-01-05T12:00:00Z",
        "2026-01-09T12:00:00Z"}},
      {"0 50-10/5 9 * * ?",
       "2026-01-01T00:00:00Z",
       {"2026-01-01T09:00:00Z", "2026-01-01T09:05:00Z", "2026-01-01T09:10:00Z", "2026-01-01T09:50:00Z",
        "2026-01-01T09:55:00Z", "2026-01-02T09:00:00Z"}},
      // 10/15 in seconds; */20; plain step with a start.
      {"10/15 0 0 * * ?",
       "2026-01-01T00:00:00Z",
       {"2026-01-01T00:00:10Z", "2026-01-01T00:00:25Z", "2026-01-01T00:00:40Z", "2026-01-01T00:00:55Z",
        "2026-01-02T00:00:10Z"}},
      {"*/20 * * * * ?",
       "2026-01-01T00:00:00Z",
       {"2026-01-01T00:00:20Z", "2026-01-01T00:00:40Z", "2026-01-01T00:01:00Z"}},
      // Strictly after: an instant that is itself a fire is not returned; milliseconds round up.
      {"0 0 12 * * ?", "2026-01-01T12:00:00Z", {"2026-01-02T12:00:00Z"}},
      // Never fires: February 30; February 31 of a leap year.
      {"0 0 0 30 2 ?", "2026-01-01T00:00:00Z", {}, 3},
      {"0 0 0 31 2 ? 2028", "2026-01-01T00:00:00Z", {}, 3},
      // Year boundaries: the last possible fire of the searched range, then nothing.
      {"59 59 23 31 12 ? 2199", "2199-12-31T00:00:00Z", {"2199-12-31T23:59:59Z"}, 2},
      {"0 0 0 1 1 ?", "2199-06-01T00:00:00Z", {}, 2},
      // Months by name, case-insensitive.
      {"0 0 6 1 jan,Jul ?", "2026-01-01T06:00:00Z", {"2026-07-01T06:00:00Z", "2027-01-01T06:00:00Z"}},
  };
}

// Test names such as "07_0_0_5_14_18_____" (index and expression), readable in ctest output.
std::string ExampleName(const ::testing::TestParamInfo<Example>& info) {
  std::string name = (info.index < 10 ? "0" : "") + std::to_string(info.index) + "_";
  for (const char c : info.param.expr)
    name += std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Cron, QuartzExample, ::testing::ValuesIn(Examples()), ExampleName);

TEST(CronExamples, MillisecondsBeforeAFireStillReturnIt) {
  const auto expr = ringwheel::CronExpression::Parse("0 0 12 * * ?");
  ASSERT_TRUE(expr.ok()) << expr.status();
  EXPECT_EQ(expr->NextFireMs(Utc("2026-01-01T12:00:00Z") - 1, nullptr), Utc("2026-01-01T12:00:00Z"));
  EXPECT_EQ(expr->NextFireMs(Utc("2026-01-01T12:00:00Z") + 1, nullptr), Utc("2026-01-02T12:00:00Z"));
}

TEST(CronExamples, BeforeNineteenSeventyStartsAtNineteenSeventy) {
  const auto expr = ringwheel::CronExpression::Parse("0 0 12 * * ?");
  ASSERT_TRUE(expr.ok()) << expr.status();
  EXPECT_EQ(expr->NextFireMs(Utc("1960-06-01T00:00:00Z"), nullptr), Utc("1970-01-01T12:00:00Z"));
  EXPECT_EQ(expr->NextFireMs(std::numeric_limits<std::int64_t>::min(), nullptr), Utc("1970-01-01T12:00:00Z"));
  EXPECT_EQ(expr->NextFireMs(std::numeric_limits<std::int64_t>::max(), nullptr), std::nullopt);
}

}  // namespace
