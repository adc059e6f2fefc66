// cronwheel-cron, run as a process (CRONWHEEL_CRON_TOOL is its path, set by CMake).
#include <gtest/gtest.h>

#include <string>

#include "cwtest/shell.hpp"

namespace {

cwtest::ShellRun RunTool(const std::string& args, bool with_stderr = true) {
  return cwtest::RunShell(std::string(CRONWHEEL_CRON_TOOL) + " " + args +
                          (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

// What a successful run printed (exit code 0 expected).
std::string Printed(const std::string& args) {
  const auto r = RunTool(args);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return r.out;
}

TEST(CronTool, PrintsIsoWithOffsetAndEpochMs) {
  EXPECT_EQ(Printed("--tz America/New_York --from 2026-03-08T00:00:00 --count 3 '0 30 2 * * ?'"),
            "2026-03-08T03:00:00-04:00\t1772953200000\n"
            "2026-03-09T02:30:00-04:00\t1773037800000\n"
            "2026-03-10T02:30:00-04:00\t1773124200000\n");
}

TEST(CronTool, DefaultsToUtcAndFiveLinesAndAcceptsEpochMs) {
  EXPECT_EQ(Printed("--from 1767225600000 '0 0 12 * * ?'"),
            "2026-01-01T12:00:00+00:00\t1767268800000\n"
            "2026-01-02T12:00:00+00:00\t1767355200000\n"
            "2026-01-03T12:00:00+00:00\t1767441600000\n"
            "2026-01-04T12:00:00+00:00\t1767528000000\n"
            "2026-01-05T12:00:00+00:00\t1767614400000\n");
}

TEST(CronTool, PrintsFewerLinesWhenTheExpressionStopsFiring) {
  EXPECT_EQ(Printed("--from 2005-12-30T12:00:00Z '0 15 10 * * ? 2005'"),
            "2005-12-31T10:15:00+00:00\t1136024100000\n");
}

TEST(CronTool, ParseErrorGoesToStderrWithExitCodeTwo) {
  const auto r = RunTool("'0 0 12 ? * 8'", /*with_stderr=*/false);  // nothing on stdout
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  const auto both = RunTool("'0 0 12 ? * 8'");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_EQ(both.out,
            "cronwheel-cron: day-of-week field: token '8' is out of range; allowed are 1-7 or SUN-SAT, with "
            ", - * / ? "
            "L #\n");
}

TEST(CronTool, BadZoneOrInstantOrUsageExitTwo) {
  EXPECT_EQ(RunTool("--tz Mars/Base '0 0 12 * * ?'").exit_code, 2);
  EXPECT_EQ(RunTool("--from yesterday '0 0 12 * * ?'").exit_code, 2);
  EXPECT_EQ(RunTool("--count 0 '0 0 12 * * ?'").exit_code, 2);
  EXPECT_EQ(RunTool("").exit_code, 2);
  EXPECT_EQ(RunTool("--help").exit_code, 0);
}

}  // namespace
