#include "admin/model/calendar.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "admin/model/validation.hpp"
#include "cronwheel/text.hpp"
#include "ringwheel/time_zone.hpp"

namespace cronwheel::admin {

std::string_view ToString(CalendarKind kind) {
  return kind == CalendarKind::kBusinessDays ? "BUSINESS_DAYS" : "EXCLUDE_DATES";
}

std::optional<CalendarKind> ParseCalendarKind(std::string_view text) {
  if (text == "EXCLUDE_DATES") return CalendarKind::kExcludeDates;
  if (text == "BUSINESS_DAYS") return CalendarKind::kBusinessDays;
  return std::nullopt;
}

std::string ValidValues(CalendarKind) {
  return "EXCLUDE_DATES, BUSINESS_DAYS";
}

absl::StatusOr<ringwheel::Calendar> JobCalendar::Compile() const {
  std::vector<std::int32_t> dates;
  dates.reserve(days.size());
  for (const auto& d : days)
    dates.push_back(d.day);
  return ringwheel::Calendar::Make(
      time_zone, std::move(dates),
      kind == CalendarKind::kBusinessDays ? ringwheel::Calendar::kWeekend : ringwheel::Calendar::kNoWeekdays);
}

void NormaliseDays(std::vector<CalendarDay>& days) {
  std::stable_sort(days.begin(), days.end(), [](const auto& a, const auto& b) { return a.day < b.day; });
  std::vector<CalendarDay> out;
  out.reserve(days.size());
  for (auto& d : days) {
    if (!out.empty() && out.back().day == d.day) {
      auto& name = out.back().name;
      if (!d.name.empty() && name.find(d.name) == std::string::npos) {
        if (!name.empty()) name += "; ";
        name += d.name;
      }
      continue;
    }
    out.push_back(std::move(d));
  }
  days = std::move(out);
}

void CheckCalendar(const JobCalendar& c, FieldErrors& errors) {
  if (c.name.empty() || c.name.size() > 64 || IsBlank(c.name)) {
    errors.push_back({"name",
                      fmt::format("must be 1 to 64 characters, got {}", c.name.size()),
                      "length",
                      {{"min", 1}, {"max", 64}, {"actual", c.name.size()}}});
  }
  if (c.description.size() > 255) {
    errors.push_back({"description",
                      fmt::format("must be at most 255 characters, got {}", c.description.size()),
                      "length",
                      {{"min", 0}, {"max", 255}, {"actual", c.description.size()}}});
  }
  if (const auto zone = ringwheel::FindTimeZone(c.time_zone); !zone.ok())
    errors.push_back({"time_zone", std::string(zone.status().message()), "format", {{"what", "time_zone"}}});
  if (c.days.size() > kMaxCalendarDays) {
    errors.push_back({"days",
                      fmt::format("at most {} days, got {}", kMaxCalendarDays, c.days.size()),
                      "length",
                      {{"min", 0}, {"max", kMaxCalendarDays}, {"actual", c.days.size()}}});
  }
  for (const auto& d : c.days) {
    if (d.name.size() > 200) {
      errors.push_back({"days",
                        fmt::format("the name of {} must be at most 200 characters, got {}",
                                    ringwheel::FormatDate(d.day), d.name.size()),
                        "length",
                        {{"min", 0}, {"max", 200}, {"actual", d.name.size()}}});
      break;
    }
  }
}

}  // namespace cronwheel::admin
