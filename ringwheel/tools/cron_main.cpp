// cronwheel-cron: prints the next fires of a Quartz cron expression, for users debugging a schedule.
//
//   cronwheel-cron [--tz ZONE] [--from ISO-8601|epoch-ms] [--count N] 'EXPR'
//
// Prints up to N lines "<ISO-8601 with UTC offset>\t<epoch ms>" (fewer when the expression stops
// firing). Exit codes: 0 success, 2 a bad expression, zone, instant or command line (message on stderr).
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "ringwheel/clock.hpp"
#include "ringwheel/cron.hpp"
#include "ringwheel/time_zone.hpp"

namespace {

constexpr int kUsageError = 2;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Prints the next fire times of a Quartz cron expression (second minute hour day-of-month month "
      "day-of-week [year]), one per line: ISO-8601 wall time with its UTC offset, a tab, epoch ms."};
  std::string tz = "UTC";
  std::string from;
  std::size_t count = 5;
  std::vector<std::string> words;
  app.add_option("--tz", tz, "IANA time zone the fields are read in, e.g. Asia/Shanghai")
      ->capture_default_str();
  app.add_option(
      "--from", from,
      "list fires strictly after this instant: ISO-8601 (2026-03-08T01:30:00, with Z or an offset, or "
      "else wall time in --tz) or epoch milliseconds; default: now");
  app.add_option("--count", count, "how many fires to print")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("expr", words, "the cron expression, quoted, e.g. '0 0/5 * * * ?'")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kUsageError;
  }

  std::string text;
  for (const std::string& w : words)
    text += (text.empty() ? "" : " ") + w;

  const absl::StatusOr<const date::time_zone*> zone = ringwheel::FindTimeZone(tz);
  if (!zone.ok()) {
    std::cerr << "cronwheel-cron: --tz: " << zone.status().message() << "\n";
    return kUsageError;
  }
  std::int64_t after_ms = 0;
  if (from.empty()) {
    after_ms = ringwheel::RealClock::Instance().NowMs();
  } else if (const absl::StatusOr<std::int64_t> parsed = ringwheel::ParseInstantMs(from, *zone);
             parsed.ok()) {
    after_ms = *parsed;
  } else {
    std::cerr << "cronwheel-cron: --from: " << parsed.status().message() << "\n";
    return kUsageError;
  }
  const absl::StatusOr<ringwheel::CronExpression> expr = ringwheel::CronExpression::Parse(text);
  if (!expr.ok()) {
    std::cerr << "cronwheel-cron: " << expr.status().message() << "\n";
    return kUsageError;
  }
  for (const std::int64_t ms : expr->NextFiresMs(after_ms, *zone, count)) {
    std::cout << ringwheel::FormatIso8601(ms, *zone) << '\t' << ms << '\n';
  }
  return 0;
}
