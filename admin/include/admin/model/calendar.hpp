#pragma once
// Calendars as the API and the store see them (docs/operations.md, "Calendars and windows"): a named,
// shared list of whole days of one time zone on which the jobs that name it do not fire. The scheduling
// rule itself is ringwheel's (ringwheel/calendar.hpp: Quartz's HolidayCalendar and WeeklyCalendar); this
// is the stored shape, its checks, and its compiled form.
//
// Plain values and pure functions; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "admin/model/result.hpp"
#include "ringwheel/calendar.hpp"

namespace cronwheel::admin {

enum class CalendarKind {
  kExcludeDates,  // the listed days are excluded
  kBusinessDays,  // Saturdays, Sundays and the listed days (holidays) are excluded
};
std::string_view ToString(CalendarKind kind);  // "EXCLUDE_DATES", "BUSINESS_DAYS"
std::optional<CalendarKind> ParseCalendarKind(std::string_view text);
std::string ValidValues(CalendarKind);  // "EXCLUDE_DATES, BUSINESS_DAYS"

// One listed day: days since 1970-01-01 (a wall date of the calendar's zone), and what it is ("" = unnamed).
struct CalendarDay {
  std::int32_t day = 0;
  std::string name;
  bool operator==(const CalendarDay&) const = default;
};

inline constexpr std::size_t kMaxCalendarDays =
    5000;  // twenty years of a country's holidays, many times over

struct JobCalendar {
  int id = 0;
  std::string name;  // 1 to 64 characters, unique
  std::string description;
  CalendarKind kind = CalendarKind::kExcludeDates;
  std::string time_zone = "UTC";  // IANA name
  std::vector<CalendarDay> days;  // sorted by day, each day once (NormaliseDays)
  std::int64_t created_ms = 0;
  std::int64_t updated_ms = 0;

  // The scheduling rule. An unknown zone is a NotFound status (CheckCalendar refuses it before it is saved).
  [[nodiscard]] absl::StatusOr<ringwheel::Calendar> Compile() const;
};

// Sorts `days` by day and keeps each day once; two names for one day are joined with "; ".
void NormaliseDays(std::vector<CalendarDay>& days);

// The checks that need no database, one FieldError per problem: name 1 to 64 characters; description at most
// 255; time_zone an IANA name; at most kMaxCalendarDays days, each name at most 200 characters.
void CheckCalendar(const JobCalendar& calendar, FieldErrors& errors);

// Compiled calendars by id, as the scan and the preview use them.
using CalendarSet = std::unordered_map<int, ringwheel::Calendar>;

}  // namespace cronwheel::admin
