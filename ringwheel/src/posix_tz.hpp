#pragma once
// Private: POSIX TZ strings, as found in the footer of a TZif file (RFC 8536 section 3.3, POSIX.1
// TZ), e.g. "EST5EDT,M3.2.0,M11.1.0", "CET-1CEST,M3.5.0,M10.5.0/3", "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0".
// The footer gives the rule in force after the file's last explicit transition; date-tz built with
// USE_OS_TZDB ignores it (HowardHinnant/date #794), so ringwheel applies it itself (zone_period.cpp).
// Pure functions, no I/O.

#include <cstdint>
#include <optional>
#include <string_view>

namespace ringwheel::detail {

// When in a year a transition happens: a day rule and a local time of day (seconds, -167 h..167 h).
struct PosixTransition {
  enum class Day : std::uint8_t {
    kJulian1,       // Jn: day n (1-365) of the year, February 29 never counted
    kJulian0,       // n: zero-based day (0-365), February 29 counted
    kMonthWeekDay,  // Mm.w.d: weekday d (0 = Sunday) of week w (1-5, 5 = last) of month m
  };
  Day day = Day::kMonthWeekDay;
  int n = 0;  // Jn / n
  int month = 0;
  int week = 0;
  int weekday = 0;
  // Local time of day, in the offset in force before the transition.
  std::int64_t time = std::int64_t{2} * 3600;
};

struct PosixTz {
  std::int64_t std_offset = 0;  // seconds east of UTC (POSIX writes west: "EST5" is -5 h)
  bool has_dst = false;
  std::int64_t dst_offset = 0;  // seconds east of UTC
  PosixTransition dst_start;    // standard -> daylight time
  PosixTransition dst_end;      // daylight -> standard time
};

// nullopt when `text` is not a valid TZ string.
std::optional<PosixTz> ParsePosixTz(std::string_view text);

// The epoch second of `t` in `year`, given the UTC offset (seconds east) in force before it.
std::int64_t TransitionInstant(const PosixTransition& t, int year, std::int64_t offset_before);

}  // namespace ringwheel::detail
