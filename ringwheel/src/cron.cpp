#include "ringwheel/cron.hpp"

#include <date/date.h>

#include <algorithm>
#include <bit>
#include <chrono>

#include "cron_years.hpp"
#include "zone_period.hpp"

// The evaluation of a parsed expression: the next instants, in a zone, through gaps and overlaps
// (ringwheel/cron.hpp; the parser is cron_parse.cpp).
namespace ringwheel {
namespace {

using cron_years::kMaxYear;
using cron_years::kMinYear;
using detail::FloorDiv;
using detail::ZonePeriod;

constexpr std::int64_t kSecondsPerDay = 86400;
// 2200-01-01T00:00:00Z: nothing fires at or after this instant (well, a zone east of UTC may still fire
// a few hours of 2199-12-31 wall time after it; the search bound is the wall-clock year).
constexpr std::int64_t kEndOfSearchS =
    std::int64_t{date::sys_days{date::year{2200} / 1 / 1}.time_since_epoch().count()} * kSecondsPerDay;
// Longer than any UTC offset change on record (Kwajalein 1993 dropped a whole day: a gap, not an
// overlap; the largest overlap is below 24 h). Bounds where the second pass of an overlap can be.
constexpr std::int64_t kMaxOverlapS = 2 * kSecondsPerDay;

int NextBit(std::uint64_t mask, int from) {
  if (from >= 64) return -1;
  const std::uint64_t rest = mask & (~std::uint64_t{0} << static_cast<unsigned>(from));
  return rest == 0 ? -1 : std::countr_zero(rest);
}

}  // namespace

int CronExpression::NextYear(int y) const {
  for (int i = std::max(y, kMinYear) - kMinYear; i <= kMaxYear - kMinYear;) {
    const auto word = static_cast<std::size_t>(i / 64);
    const std::uint64_t bits = years_.at(word) >> static_cast<unsigned>(i % 64);
    if (bits != 0) return kMinYear + i + std::countr_zero(bits);
    i = static_cast<int>(word + 1) * 64;
  }
  return -1;
}

std::uint32_t CronExpression::DayMask(int y, unsigned m) const {
  const date::year_month ym{date::year{y}, date::month{m}};
  const auto dim = static_cast<int>(static_cast<unsigned>((ym / date::last).day()));
  const auto first = static_cast<int>(date::weekday{date::sys_days{ym / 1}}.c_encoding());  // 0 = Sunday
  const auto weekday_of = [first](int d) { return (first + d - 1) % 7; };
  const auto bit = [](int d) { return std::uint32_t{1} << static_cast<unsigned>(d); };
  // Quartz's W: the weekday nearest day d without leaving the month.
  const auto nearest_weekday = [&](int d) -> std::uint32_t {
    if (d < 1 || d > dim) return 0;
    const int w = weekday_of(d);
    if (w == 6) d = d == 1 ? d + 2 : d - 1;    // Saturday: Friday before, or Monday the 3rd
    if (w == 0) d = d == dim ? d - 2 : d + 1;  // Sunday: Monday after, or Friday before the last day
    return bit(d);
  };
  switch (day_rule_) {
    case DayRule::kDaysOfMonth:
      return days_ & ((bit(dim) - 1) << 1);
    case DayRule::kLastDay:
      return dim - day_arg_ >= 1 ? bit(dim - day_arg_) : 0;
    case DayRule::kLastDayWeekday:
      return nearest_weekday(dim - day_arg_);
    case DayRule::kNearestWeekday:
      return nearest_weekday(day_arg_);
    case DayRule::kDaysOfWeek: {
      std::uint32_t mask = 0;
      for (int d = 1; d <= 7; ++d) {
        if ((weekdays_ >> weekday_of(d) & 1U) == 0) continue;
        for (int dd = d; dd <= dim; dd += 7)
          mask |= bit(dd);
      }
      return mask;
    }
    case DayRule::kLastWeekdayOf:
      return bit(dim - (weekday_of(dim) - day_arg_ + 7) % 7);
    case DayRule::kNthWeekdayOf: {
      const int d = 1 + (day_arg_ - first + 7) % 7 + 7 * (nth_ - 1);
      return d <= dim ? bit(d) : 0;
    }
  }
  return 0;
}

std::optional<std::int64_t> CronExpression::NextLocal(std::int64_t local_s) const {
  const std::int64_t day_number = FloorDiv(local_s, kSecondsPerDay);
  const auto second_of_day = static_cast<int>(local_s - day_number * kSecondsPerDay);
  const date::year_month_day ymd{date::sys_days{date::days{
      static_cast<int>(std::clamp<std::int64_t>(day_number, -1, kEndOfSearchS / kSecondsPerDay + 1))}}};
  int y = static_cast<int>(ymd.year());
  auto m = static_cast<int>(static_cast<unsigned>(ymd.month()));
  auto d = static_cast<int>(static_cast<unsigned>(ymd.day()));
  int h = second_of_day / 3600;
  int mi = second_of_day / 60 % 60;
  int s = second_of_day % 60;
  if (y < kMinYear) {
    y = kMinYear;
    m = d = 1;
    h = mi = s = 0;
  }
  std::uint32_t day_mask = 0;
  int mask_y = 0;
  int mask_m = 0;
  // Each pass either returns or moves (y, m, d, h, mi, s) strictly forward, resetting the smaller fields;
  // y is bounded by kMaxYear, so the loop ends.
  for (;;) {
    const int ny = NextYear(y);
    if (ny < 0) return std::nullopt;
    if (ny != y) {
      y = ny;
      m = d = 1;
      h = mi = s = 0;
    }
    const int nm = NextBit(months_, m);
    if (nm < 0) {
      ++y;
      m = d = 1;
      h = mi = s = 0;
      continue;
    }
    if (nm != m) {
      m = nm;
      d = 1;
      h = mi = s = 0;
    }
    if (mask_y != y || mask_m != m) {
      day_mask = DayMask(y, static_cast<unsigned>(m));
      mask_y = y;
      mask_m = m;
    }
    const int nd = NextBit(day_mask, d);
    if (nd < 0) {
      ++m;
      d = 1;
      h = mi = s = 0;
      continue;
    }
    if (nd != d) {
      d = nd;
      h = mi = s = 0;
    }
    const int nh = NextBit(hours_, h);
    if (nh < 0) {
      ++d;
      h = mi = s = 0;
      continue;
    }
    if (nh != h) {
      h = nh;
      mi = s = 0;
    }
    const int nmi = NextBit(minutes_, mi);
    if (nmi < 0) {
      ++h;
      mi = s = 0;
      continue;
    }
    if (nmi != mi) {
      mi = nmi;
      s = 0;
    }
    const int ns = NextBit(seconds_, s);
    if (ns < 0) {
      ++mi;
      s = 0;
      continue;
    }
    const date::sys_days day{date::year{y} / date::month{static_cast<unsigned>(m)} /
                             date::day{static_cast<unsigned>(d)}};
    return std::int64_t{day.time_since_epoch().count()} * kSecondsPerDay + std::int64_t{h} * 3600 +
           std::int64_t{mi} * 60 + ns;
  }
}

std::optional<std::int64_t> CronExpression::NextFireMs(std::int64_t after_ms,
                                                       const date::time_zone* zone) const {
  if (after_ms >= kEndOfSearchS * 1000) return std::nullopt;
  // Fires are whole seconds strictly after after_ms. Before 1970 the wall-clock search starts at 1970.
  std::int64_t candidate = std::max<std::int64_t>(FloorDiv(after_ms, 1000) + 1, -kSecondsPerDay);
  // Walk the zone's offset periods: find the first matching wall time at or after the candidate's wall
  // time under the candidate's offset, then check it against the period (see the DST rule in cron.hpp).
  // Each pass returns or moves `candidate` forward to a later period, close to the match when it is far
  // away: a handful of passes, bounded by a guard.
  for (int pass = 0; pass < 4096; ++pass) {
    const ZonePeriod period = detail::PeriodAt(zone, candidate);
    const std::int64_t local_start = candidate + period.offset;
    const std::optional<std::int64_t> local = NextLocal(local_start);
    if (!local) {
      // No matching wall time >= local_start at all. Only a later period whose wall clock restarts earlier
      // (after a fall-back) can still match, in its repeated part.
      if (period.end >= detail::kNoTransitionAfter) return std::nullopt;
      const ZonePeriod next = detail::PeriodAt(zone, period.end);
      if (period.end + next.offset >= local_start) return std::nullopt;
      candidate = period.end;
      continue;
    }
    if (*local >= period.end + period.offset) {
      // The match lies beyond this period's wall-clock range.
      const ZonePeriod next = detail::PeriodAt(zone, period.end);
      if (*local < period.end + next.offset) return period.end * 1000;  // in a gap: fire once at its end
      // Skip ahead when that is safe (a sparse expression would otherwise walk two periods a year). A later
      // instant t has wall time t + offset(t) >= local_start - (offset range), so a fire whose wall time is
      // below local_start can only lie within the offset range (< 2 * kMaxAbsOffset) after `candidate`, and
      // none lies in this period. Every other fire has a wall time >= *local, so it is at or after
      // *local - kMaxAbsOffset.
      candidate = period.end - candidate >= 2 * detail::kMaxAbsOffset
                      ? std::max(period.end, *local - detail::kMaxAbsOffset)
                      : period.end;
      continue;
    }
    const std::int64_t instant = *local - period.offset;
    if (!interval_ && period.begin > detail::kNoTransitionBefore && instant - period.begin < kMaxOverlapS) {
      const ZonePeriod previous = detail::PeriodAt(zone, period.begin - 1);
      if (previous.offset > period.offset && *local < period.begin + previous.offset) {
        // Second pass of a fall-back overlap: a fixed-time expression already fired at the first one.
        candidate = period.begin + previous.offset - period.offset;
        continue;
      }
    }
    return instant * 1000;
  }
  return std::nullopt;
}

std::vector<std::int64_t> CronExpression::NextFiresMs(std::int64_t after_ms, const date::time_zone* zone,
                                                      std::size_t count) const {
  std::vector<std::int64_t> fires;
  fires.reserve(std::min<std::size_t>(count, 1024));
  while (fires.size() < count) {
    const std::optional<std::int64_t> next = NextFireMs(after_ms, zone);
    if (!next) break;
    fires.push_back(*next);
    after_ms = *next;
  }
  return fires;
}

}  // namespace ringwheel
