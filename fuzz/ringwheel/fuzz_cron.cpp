// fuzz_cron: libFuzzer target for the cron parser and next-fire search. Any input may be rejected; an
// accepted one must yield fires that are whole seconds, strictly increasing and strictly after the
// instant asked from, in UTC and in DST zones (New York, Lord Howe's 30-minute shift), without hanging.
#include <date/tz.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ringwheel/cron.hpp"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 256) return 0;  // expressions are short; longer inputs only slow the search down
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto expr = ringwheel::CronExpression::Parse(text);
  if (!expr.ok()) {
    Check(!expr.status().message().empty());
    return 0;
  }
  Check(expr->text() == text);
  static const std::array<const date::time_zone*, 3> kZones{nullptr, date::locate_zone("America/New_York"),
                                                            date::locate_zone("Australia/Lord_Howe")};
  // 2026-01-01T00:00:00Z, New York's 2026 spring-forward and fall-back instants minus a minute, 1969, and
  // 2040-11-04T05:59:00Z (a fall-back that only the TZif footer rule knows about).
  static constexpr std::array<std::int64_t, 5> kFrom{1'767'225'600'000, 1'772'953'140'000, 1'793'512'740'000,
                                                     -86'400'000, 2'235'621'540'000};
  for (const date::time_zone* zone : kZones) {
    for (const std::int64_t from : kFrom) {
      std::int64_t after = from;
      for (const std::int64_t fire : expr->NextFiresMs(from, zone, 4)) {
        Check(fire > after);
        Check(fire % 1000 == 0);
        after = fire;
      }
    }
  }
  return 0;
}
