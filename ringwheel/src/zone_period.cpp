#include "zone_period.hpp"

#include <date/tz.h>

#include <algorithm>
#include <chrono>

namespace ringwheel::detail {

ZonePeriod PeriodAt(const date::time_zone* zone, std::int64_t t) {
  if (zone == nullptr) return {};
  const auto info = zone->get_info(date::sys_seconds{std::chrono::seconds{t}});
  // date-tz reports the first and last periods with begin/end at the limits of its range; clamp them to
  // our sentinels so arithmetic on them cannot overflow.
  return {std::max(info.begin.time_since_epoch().count(), kNoTransitionBefore),
          std::min(info.end.time_since_epoch().count(), kNoTransitionAfter), info.offset.count()};
}

}  // namespace ringwheel::detail
