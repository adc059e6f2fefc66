#pragma once
// Private: the UTC offset periods of a zone, in whole seconds: the one place ringwheel reads offsets.
//
// date-tz built with USE_OS_TZDB (Debian) reads the explicit transitions of the TZif files and ignores
// their footer, the POSIX TZ rule for everything after the last explicit transition (HowardHinnant/date
// #794). Debian's files list transitions up to 2037, so date-tz alone loses DST from 2038 on. PeriodAt()
// uses date-tz up to the last listed transition and the footer rule (posix_tz.hpp) after it; the footer is
// read once per zone from /usr/share/zoneinfo/<name>, the file date-tz itself loaded.
//
// Thread-safety: all functions may be called concurrently.

#include <cstdint>
#include <optional>

#include "posix_tz.hpp"

namespace date {
class time_zone;
}

namespace ringwheel::detail {

// Instants far enough out to mean "no transition" (well beyond the year 2199 search bound).
inline constexpr std::int64_t kNoTransitionBefore = -(std::int64_t{1} << 50);
inline constexpr std::int64_t kNoTransitionAfter = std::int64_t{1} << 50;
// Larger than any UTC offset ever used (the extremes are about -15:56 and +15:13 local mean time).
inline constexpr std::int64_t kMaxAbsOffset = std::int64_t{26} * 3600;

// [begin, end) epoch seconds during which local wall time = UTC + offset.
struct ZonePeriod {
  std::int64_t begin = kNoTransitionBefore;
  std::int64_t end = kNoTransitionAfter;
  std::int64_t offset = 0;  // seconds east of UTC
};

// The period containing epoch second `t` in `zone` (nullptr = UTC: one endless period at offset 0).
ZonePeriod PeriodAt(const date::time_zone* zone, std::int64_t t);

// The instant (epoch s) of wall time `local` (seconds since 1970-01-01T00:00 wall time) in `zone`: its
// first occurrence when it occurs twice, the end of the gap when it does not exist (the rule of cron.hpp).
std::int64_t LocalToInstant(const date::time_zone* zone, std::int64_t local);

// The zone's TZif footer rule (nullopt: none, or the file could not be read or parsed). For tests.
std::optional<PosixTz> FooterRule(const date::time_zone* zone);

// Floor division and modulo for possibly negative numerators (divisor > 0).
constexpr std::int64_t FloorDiv(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}
constexpr std::int64_t FloorMod(std::int64_t a, std::int64_t b) {
  return a - FloorDiv(a, b) * b;
}

}  // namespace ringwheel::detail
