#include "ringwheel/calendar.hpp"

#include <date/date.h>

#include <algorithm>
#include <charconv>

#include "ringwheel/time_zone.hpp"
#include "zone_period.hpp"

namespace ringwheel {
namespace {

constexpr std::int64_t kDaySeconds = 86'400;
constexpr int kMaxIncludedSearchDays = 3660;
constexpr int kMaxExcludedDaysPerWalk = 4000;

}  // namespace

absl::StatusOr<std::int32_t> ParseDate(std::string_view text) {
  const auto invalid = [&] {
    return absl::InvalidArgumentError("invalid date '" + std::string(text.substr(0, 40)) +
                                      "'; use YYYY-MM-DD, a date that exists (years 1970 to 2199)");
  };
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return invalid();
  int y = 0;
  unsigned m = 0;
  unsigned d = 0;
  const auto digits = [&](std::size_t at, std::size_t n, auto& out) {
    const auto* first = text.data() + at;
    const auto r = std::from_chars(first, first + n, out);
    return r.ec == std::errc() && r.ptr == first + n;
  };
  if (!digits(0, 4, y) || !digits(5, 2, m) || !digits(8, 2, d)) return invalid();
  const date::year_month_day ymd{date::year{y}, date::month{m}, date::day{d}};
  if (!ymd.ok() || y < 1970 || y > 2199) return invalid();
  return static_cast<std::int32_t>(date::sys_days(ymd).time_since_epoch().count());
}

std::string FormatDate(std::int32_t day) {
  return date::format("%F", date::sys_days(date::days(day)));
}

absl::StatusOr<Calendar> Calendar::Make(std::string_view zone, std::vector<std::int32_t> dates,
                                        Weekdays weekdays) {
  auto tz = FindTimeZone(zone);
  if (!tz.ok()) return tz.status();
  std::sort(dates.begin(), dates.end());
  dates.erase(std::unique(dates.begin(), dates.end()), dates.end());
  Calendar c;
  c.zone_name_ = zone.empty() ? "UTC" : std::string(zone);
  c.zone_ = *tz;
  c.weekdays_ = weekdays;
  c.dates_ = std::make_shared<const std::vector<std::int32_t>>(std::move(dates));
  return c;
}

std::int64_t Calendar::DayOf(std::int64_t ms) const {
  const auto t = detail::FloorDiv(ms, 1000);
  return detail::FloorDiv(t + detail::PeriodAt(zone_, t).offset, kDaySeconds);
}

bool Calendar::ExcludesDay(std::int64_t day) const {
  // 1970-01-01 was a Thursday (4).
  if (weekdays_[static_cast<std::size_t>(detail::FloorMod(day + 4, 7))]) return true;
  return std::binary_search(dates_->begin(), dates_->end(), day);
}

bool Calendar::Excludes(std::int64_t ms) const {
  return ExcludesDay(DayOf(ms));
}

std::optional<std::int64_t> Calendar::NextIncludedMs(std::int64_t ms) const {
  auto day = DayOf(ms) + 1;
  for (int i = 0; i < kMaxIncludedSearchDays; ++i, ++day) {
    if (!ExcludesDay(day)) return detail::LocalToInstant(zone_, day * kDaySeconds) * 1000;
  }
  return std::nullopt;
}

std::int64_t Calendar::NextDayStartMs(std::int64_t ms) const {
  return detail::LocalToInstant(zone_, (DayOf(ms) + 1) * kDaySeconds) * 1000;
}

bool FireWindow::Allows(std::int64_t ms) const {
  if (start_ms_ > 0 && ms < start_ms_) return false;
  if (end_ms_ > 0 && ms > end_ms_) return false;
  return std::none_of(calendars_.begin(), calendars_.end(),
                      [&](const Calendar* c) { return c->Excludes(ms); });
}

std::optional<std::int64_t> FireWindow::NextFireMs(std::int64_t from_ms) const {
  auto from = from_ms;
  if (start_ms_ > 0 && from < start_ms_ - 1) from = start_ms_ - 1;
  for (int crossed = 0; crossed <= kMaxExcludedDaysPerWalk; ++crossed) {
    const auto next = schedule_.NextFireMs(from);
    if (!next || (end_ms_ > 0 && *next > end_ms_)) return std::nullopt;
    const auto excluding = std::find_if(calendars_.begin(), calendars_.end(),
                                        [&](const Calendar* c) { return c->Excludes(*next); });
    if (excluding == calendars_.end()) return next;
    // Over the excluded day at once: the schedule's next instant from the start of the next included one.
    const auto resume = (*excluding)->NextIncludedMs(*next);
    if (!resume) return std::nullopt;
    from = std::max(*next, *resume - 1);
  }
  return std::nullopt;
}

std::optional<std::int64_t> FireWindow::FirstFireFromMs(std::int64_t ms) const {
  return Allows(ms) ? std::optional<std::int64_t>(ms) : NextFireMs(ms);
}

}  // namespace ringwheel
