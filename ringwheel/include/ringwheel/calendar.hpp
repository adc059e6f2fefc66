#pragma once
// Calendars: whole local days on which a schedule does not fire, and the window a schedule fires in.
//
// A Calendar excludes days of its own time zone: listed dates (Quartz's HolidayCalendar), and days of the
// week (Quartz's WeeklyCalendar; "business days" exclude Saturday and Sunday). An instant is excluded when
// its wall date in the calendar's zone is. Calendars are values: cheap to copy (the dates are shared).
//
// A FireWindow is a schedule (ringwheel/schedule.hpp) restricted to instants in [start_ms, end_ms] that no
// calendar excludes: Quartz's Trigger.getFireTimeAfter with a calendar, startTime and endTime. Excluded
// instants are not fires; the walk jumps over an excluded day to the next included one, so a job firing
// every second costs one schedule evaluation per excluded day, not one per second of it.
//
// Thread-safety: const member functions may be called concurrently. Units: instants are epoch ms; dates
// are days since 1970-01-01 (date::sys_days counts).

#include <absl/status/statusor.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ringwheel/schedule.hpp"

namespace date {
class time_zone;
}

namespace ringwheel {

// A civil date as "YYYY-MM-DD" <-> days since 1970-01-01. Parse errors name the text:
//   "invalid date '2026-02-30'; use YYYY-MM-DD, a date that exists (years 1970 to 2199)"
absl::StatusOr<std::int32_t> ParseDate(std::string_view text);
std::string FormatDate(std::int32_t day);

class Calendar {
 public:
  // Days of the week by index: 0 Sunday, 1 Monday, ... 6 Saturday.
  using Weekdays = std::array<bool, 7>;
  static constexpr Weekdays kNoWeekdays = {};
  static constexpr Weekdays kWeekend = {true, false, false, false, false, false, true};

  // A calendar in `zone` (an IANA name, "" = UTC) excluding `dates` (days since 1970-01-01, any order,
  // repeats allowed) and the days of the week marked in `weekdays`. An unknown zone is a NotFound status
  // (the message of FindTimeZone, ringwheel/time_zone.hpp). O(n log n) in the dates.
  static absl::StatusOr<Calendar> Make(std::string_view zone, std::vector<std::int32_t> dates,
                                       Weekdays weekdays = kNoWeekdays);

  // Whether the wall date of `ms` in the calendar's zone is excluded. O(log dates).
  [[nodiscard]] bool Excludes(std::int64_t ms) const;
  // The wall date of `ms` in the calendar's zone (days since 1970-01-01).
  [[nodiscard]] std::int32_t LocalDate(std::int64_t ms) const { return static_cast<std::int32_t>(DayOf(ms)); }
  // The first instant after `ms` whose wall date is not excluded: the start (local midnight, or the end of
  // a DST gap at midnight) of the next included day. nullopt when no day of the next 3660 (ten years) is
  // included. O(excluded days crossed * log dates).
  [[nodiscard]] std::optional<std::int64_t> NextIncludedMs(std::int64_t ms) const;
  // The start of the day after the wall date of `ms` (local midnight, or the end of a DST gap at midnight),
  // excluded or not. O(1).
  [[nodiscard]] std::int64_t NextDayStartMs(std::int64_t ms) const;

  [[nodiscard]] const std::string& zone_name() const { return zone_name_; }
  [[nodiscard]] const Weekdays& weekdays() const { return weekdays_; }
  [[nodiscard]] std::span<const std::int32_t> dates() const { return *dates_; }  // sorted, unique

 private:
  Calendar() = default;
  [[nodiscard]] bool ExcludesDay(std::int64_t day) const;
  [[nodiscard]] std::int64_t DayOf(std::int64_t ms) const;

  std::string zone_name_;
  const date::time_zone* zone_ = nullptr;
  Weekdays weekdays_ = kNoWeekdays;
  std::shared_ptr<const std::vector<std::int32_t>> dates_;
};

// A schedule restricted to a window and calendars. Holds pointers: `schedule` and every calendar must
// outlive it (it is made per use, e.g. per job in a scan).
class FireWindow {
 public:
  // `start_ms` / `end_ms`: the first and last instant that may fire (0 = no bound).
  FireWindow(const Schedule& schedule, std::span<const Calendar* const> calendars, std::int64_t start_ms,
             std::int64_t end_ms)
      : schedule_(schedule), calendars_(calendars), start_ms_(start_ms), end_ms_(end_ms) {}

  // Whether `ms` may fire: inside the window and excluded by no calendar (says nothing of whether the
  // schedule has an instant there). O(calendars * log dates).
  [[nodiscard]] bool Allows(std::int64_t ms) const;
  // The first instant of the schedule strictly after `from_ms` that Allows(); nullopt when the schedule
  // ends, the window ends first, or the calendars exclude every day of the next ten years. Never hangs:
  // at most 4000 excluded days are crossed per call.
  [[nodiscard]] std::optional<std::int64_t> NextFireMs(std::int64_t from_ms) const;
  // Allows(ms) ? ms : NextFireMs(ms): where a walk that stands on `ms` really starts.
  [[nodiscard]] std::optional<std::int64_t> FirstFireFromMs(std::int64_t ms) const;

  [[nodiscard]] bool unbounded() const { return calendars_.empty() && start_ms_ == 0 && end_ms_ == 0; }

 private:
  const Schedule& schedule_;
  std::span<const Calendar* const> calendars_;
  std::int64_t start_ms_;
  std::int64_t end_ms_;
};

}  // namespace ringwheel
