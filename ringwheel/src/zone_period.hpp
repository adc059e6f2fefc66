#pragma once
// Private: the UTC offset periods of a zone, in whole seconds, as the cron search needs them.
// One place to change if the offsets after a zone's last listed transition are ever computed from the
// TZif POSIX footer (see the limit noted in ringwheel/cron.hpp).

#include <cstdint>

namespace date {
class time_zone;
}

namespace ringwheel::detail {

// Instants far enough out to mean "no transition" (well beyond the year 2199 search bound).
inline constexpr std::int64_t kNoTransitionBefore = -(std::int64_t{1} << 50);
inline constexpr std::int64_t kNoTransitionAfter = std::int64_t{1} << 50;

// [begin, end) epoch seconds during which local wall time = UTC + offset.
struct ZonePeriod {
  std::int64_t begin = kNoTransitionBefore;
  std::int64_t end = kNoTransitionAfter;
  std::int64_t offset = 0;  // seconds east of UTC
};

// The period containing epoch second `t` in `zone` (nullptr = UTC: one endless period at offset 0).
ZonePeriod PeriodAt(const date::time_zone* zone, std::int64_t t);

// Floor division and modulo for possibly negative numerators (divisor > 0).
constexpr std::int64_t FloorDiv(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}
constexpr std::int64_t FloorMod(std::int64_t a, std::int64_t b) {
  return a - FloorDiv(a, b) * b;
}

}  // namespace ringwheel::detail
