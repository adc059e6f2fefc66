// Parsing: what is accepted, and that every error names the field, the token and what is allowed.
#include <gtest/gtest.h>

#include <string>

#include "ringwheel/cron.hpp"
#include "test_time.hpp"

namespace {

using ringwheel::CronExpression;

std::string ErrorOf(const std::string& text) {
  const auto expr = CronExpression::Parse(text);
  if (expr.ok()) return "(parsed)";
  return std::string(expr.status().message());
}

TEST(CronParse, AcceptsQuartzSyntax) {
  for (const char* text : {
           "0 0 12 * * ?",
           "0 15 10 ? * *",
           "0 15 10 * * ? 2005",
           "0 0/5 14,18 * * ?",
           "0 0-5 14 * * ?",
           "0 10,44 14 ? 3 WED",
           "0 15 10 ? * MON-FRI",
           "0 15 10 L * ?",
           "0 15 10 L-2 * ?",
           "0 15 10 ? * 6L",
           "0 15 10 ? * 6L 2002-2005",
           "0 15 10 ? * 6#3",
           "0 0 12 1/5 * ?",
           "0 11 11 11 11 ?",
           "0 0 12 LW * ?",
           "0 0 12 15W * ?",
           "0 0 12 L-3W * ?",
           "*/5 * * * * ?",
           "/5 * * * * ?",
           "0 0 0 ? * L",
           "0 0 0 ? JAN-DEC SUN-SAT",
           "0 0 0 ? * FRI#1",
           "0 0 0 ? * SATL",
           "0 0 22-2 * * ?",
           "0 0 0 1 * ? 1970-2199",
           "0 0 0 1 * ? */10",
           "  0\t0  12 * * ?  ",
       }) {
    const auto expr = CronExpression::Parse(text);
    EXPECT_TRUE(expr.ok()) << text << ": " << expr.status();
  }
}

TEST(CronParse, IsCaseInsensitiveAndKeepsTheOriginalText) {
  const auto lower = CronExpression::Parse("0 15 10 ? jan-mar mon-fri");
  const auto upper = CronExpression::Parse("0 15 10 ? JAN-MAR MON-FRI");
  ASSERT_TRUE(lower.ok() && upper.ok());
  EXPECT_EQ(lower->text(), "0 15 10 ? jan-mar mon-fri");
  const std::int64_t after = rwtest::Utc("2026-01-01T00:00:00Z");
  EXPECT_EQ(lower->NextFiresMs(after, nullptr, 20), upper->NextFiresMs(after, nullptr, 20));
  EXPECT_TRUE(CronExpression::Parse("0 0 12 lw * ?").ok());
  EXPECT_TRUE(CronExpression::Parse("0 0 12 ? * 6l").ok());
}

TEST(CronParse, ClassifiesIntervalAndFixedTimeExpressions) {
  // The DST overlap rule (cron.hpp) depends on this.
  for (const char* text :
       {"0 * * * * ?", "0 0/30 * * * ?", "0 30 1-9 * * ?", "*/10 0 1 * * ?", "0 0 * ? * MON"}) {
    const auto e = CronExpression::Parse(text);
    ASSERT_TRUE(e.ok()) << text << ": " << e.status();
    EXPECT_TRUE(e->interval()) << text;
  }
  for (const char* text : {"0 30 2 * * ?", "0 0,30 2 * * ?", "0 15 10 ? * MON-FRI", "0 0 12 1/5 * ?"}) {
    const auto e = CronExpression::Parse(text);
    ASSERT_TRUE(e.ok()) << text << ": " << e.status();
    EXPECT_FALSE(e->interval()) << text;
  }
}

TEST(CronParse, ErrorsNameTheFieldTheTokenAndWhatIsAllowed) {
  EXPECT_EQ(ErrorOf("0 0 12 ? * 8"),
            "day-of-week field: token '8' is out of range; allowed are 1-7 or SUN-SAT, with , - * / ? L #");
  EXPECT_EQ(ErrorOf("60 0 12 * * ?"),
            "second field: token '60' is out of range; allowed are 0-59, with , - * /");
  EXPECT_EQ(ErrorOf("0 0-61 12 * * ?"),
            "minute field: token '61' is out of range; allowed are 0-59, with , - * /");
  EXPECT_EQ(ErrorOf("0 0 24 * * ?"),
            "hour field: token '24' is out of range; allowed are 0-23, with , - * /");
  EXPECT_EQ(ErrorOf("0 0 12 32 * ?"),
            "day-of-month field: token '32' is out of range; allowed are 1-31, with , - * / ? L W");
  EXPECT_EQ(ErrorOf("0 0 12 0 * ?"),
            "day-of-month field: token '0' is out of range; allowed are 1-31, with , - * / ? L W");
  EXPECT_EQ(ErrorOf("0 0 12 * FOO ?"),
            "month field: token 'FOO' is not a number or a name; allowed are 1-12 or JAN-DEC, with , - * /");
  EXPECT_EQ(ErrorOf("0 0 12 * 13 ?"),
            "month field: token '13' is out of range; allowed are 1-12 or JAN-DEC, with , - * /");
  EXPECT_EQ(ErrorOf("0 0 12 * * ? 1969"),
            "year field: token '1969' is out of range; allowed are 1970-2199, with , - * /");
  EXPECT_EQ(ErrorOf("0 0 12 * * ? 2010-2005"),
            "year field: token '2010-2005' is a range whose end is before its start; allowed are 1970-2199, "
            "with , - * /");
  EXPECT_EQ(ErrorOf("0 0/0 12 * * ?"),
            "minute field: token '0/0' has an invalid step; the number after '/' must be 1-59; allowed are "
            "0-59, with , - * /");
  EXPECT_EQ(ErrorOf("0 0/60 12 * * ?"),
            "minute field: token '0/60' has an invalid step; the number after '/' must be 1-59; allowed are "
            "0-59, with , - * /");
  EXPECT_EQ(ErrorOf("0 0 12/24 * * ?"),
            "hour field: token '12/24' has an invalid step; the number after '/' must be 1-23; allowed are "
            "0-23, with , - * /");
  EXPECT_EQ(ErrorOf("0 1,,2 12 * * ?"),
            "minute field: token '1,,2' has an empty list item; allowed are 0-59, with , - * /");
  EXPECT_EQ(
      ErrorOf("0 ? 12 * * ?"),
      "minute field: token '?' is not allowed here ('?' belongs in day-of-month or day-of-week); allowed are "
      "0-59, with , - * /");
  EXPECT_EQ(ErrorOf("x 0 12 * * ?"),
            "second field: token 'x' is not a number; allowed are 0-59, with , - * /");
  EXPECT_EQ(ErrorOf("0 0 12 L,15 * ?"),
            "day-of-month field: token 'L,15' combines 'L' with other days, which Quartz does not support; "
            "allowed are "
            "1-31, with , - * / ? L W");
  EXPECT_EQ(ErrorOf("0 0 12 L-31 * ?"),
            "day-of-month field: token 'L-31' is not L, L-n, LW or L-nW with n in 0-30; allowed are 1-31, "
            "with , - * "
            "/ ? L W");
  EXPECT_EQ(
      ErrorOf("0 0 12 1-5W * ?"),
      "day-of-month field: token '1-5W' uses 'W' with a list or range; 'W' takes a single day such as 15W; "
      "allowed are 1-31, with , - * / ? L W");
  EXPECT_EQ(ErrorOf("0 0 12 ? * 6#6"),
            "day-of-week field: token '6#6' has an invalid week; in n#k, k must be 1-5; allowed are 1-7 or "
            "SUN-SAT, "
            "with , - * / ? L #");
  EXPECT_EQ(
      ErrorOf("0 0 12 ? * 1,6#3"),
      "day-of-week field: token '1,6#3' uses '#' with a list or range; '#' takes a single n#k such as 6#3; "
      "allowed are 1-7 or SUN-SAT, with , - * / ? L #");
  EXPECT_EQ(
      ErrorOf("0 0 12 ? * 1-6L"),
      "day-of-week field: token '1-6L' uses 'L' with a list or range; 'L' takes a single day such as 6L; "
      "allowed are 1-7 or SUN-SAT, with , - * / ? L #");
  EXPECT_EQ(ErrorOf("0 0 12 ? * mon-Fry"),
            "day-of-week field: token 'Fry' is not a number or a name; allowed are 1-7 or SUN-SAT, with , - "
            "* / ? L #");
  EXPECT_EQ(ErrorOf("0 0 12 ? * MONDAY"),
            "day-of-week field: token 'MONDAY' is not a number or a name; allowed are 1-7 or SUN-SAT, with , "
            "- * / ? "
            "L #");
}

TEST(CronParse, QuestionMarkMustBeInExactlyOneDayField) {
  EXPECT_EQ(ErrorOf("0 0 12 * * *"),
            "day-of-month and day-of-week fields: exactly one of them must be '?' (Quartz does not support "
            "both), got "
            "'*' and '*'; write e.g. '0 0 12 * * ?' (every day) or '0 0 12 ? * MON' (Mondays)");
  EXPECT_EQ(ErrorOf("0 0 12 ? * ?"),
            "day-of-month and day-of-week fields: only one of them may be '?'; write e.g. '0 0 12 * * ?' "
            "(every day) "
            "or '0 0 12 ? * MON' (Mondays)");
}

TEST(CronParse, WrongFieldCountExplainsTheQuartzForm) {
  EXPECT_EQ(ErrorOf(""),
            "expected 6 or 7 fields (second minute hour day-of-month month day-of-week [year]), got 0 in ''");
  EXPECT_EQ(ErrorOf("0 0 0 1 1 ? 2030 x"),
            "expected 6 or 7 fields (second minute hour day-of-month month day-of-week [year]), got 8 in '0 "
            "0 0 1 1 ? "
            "2030 x'");
  EXPECT_EQ(
      ErrorOf("*/5 * * * *"),
      "expected 6 or 7 fields (second minute hour day-of-month month day-of-week [year]), got 5 in '*/5 * * "
      "* "
      "*'; a Quartz expression starts with seconds: write '0 ' before a 5-field Unix expression and '?' in "
      "day-of-month or day-of-week, e.g. '0 */5 * * * ?'");
}

TEST(CronParse, RefusesWithInvalidArgument) {
  EXPECT_EQ(CronExpression::Parse("nonsense").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(CronExpression::Parse("0 0 12 * * ?").ok());
}

}  // namespace
