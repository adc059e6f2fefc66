#include "admin/model/ics_import.hpp"

#include <date/date.h>
#include <fmt/format.h>
#include <libical/ical.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <set>

#include "cronwheel/text.hpp"

namespace cronwheel::admin {
namespace {

struct ComponentFree {
  void operator()(icalcomponent* c) const { icalcomponent_free(c); }
};
struct IteratorFree {
  void operator()(icalrecur_iterator* i) const { icalrecur_iterator_free(i); }
};
// Frees libical's per-thread ring of temporary buffers however the import ends.
struct RingFree {
  RingFree() = default;
  RingFree(const RingFree&) = delete;
  RingFree& operator=(const RingFree&) = delete;
  ~RingFree() { icalmemory_free_ring(); }
};

// The wall date of `t` as written (days since 1970-01-01).
std::int32_t DayOf(const icaltimetype& t) {
  const date::year_month_day ymd{date::year{t.year}, date::month{static_cast<unsigned>(t.month)},
                                 date::day{static_cast<unsigned>(t.day)}};
  return static_cast<std::int32_t>(date::sys_days(ymd).time_since_epoch().count());
}

bool Valid(const icaltimetype& t) {
  return !icaltime_is_null_time(t) && icaltime_is_valid_time(t) && t.year >= 1970 && t.year <= 2199 &&
         date::year_month_day{date::year{t.year}, date::month{static_cast<unsigned>(t.month)},
                              date::day{static_cast<unsigned>(t.day)}}
             .ok();
}

// A refusal for passing limit `name`: kInvalid with its FieldError (ics_import.hpp).
Error LimitPassed(std::string message, const char* name, std::int64_t max, std::int64_t actual) {
  FieldErrors fields{{"ics", message, "limit", {{"limit", name}, {"max", max}, {"actual", actual}}}};
  return Error::Invalid(std::move(message), std::move(fields));
}

// Whether the content line at `line` (unfolded lines start at a line break; a folded one starts with a space
// or tab) begins with `name` followed by ':' or ';', in any case (RFC 5545 §3.1).
bool LineIs(std::string_view line, std::string_view name) {
  if (line.size() <= name.size()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(line[i])) != name[i]) return false;
  }
  return line[name.size()] == ':' || line[name.size()] == ';';
}

// Whether `value` (the rest of a line, its line break's '\r' aside) is `upper`, in any case.
bool ValueIs(std::string_view value, std::string_view upper) {
  if (!value.empty() && value.back() == '\r') value.remove_suffix(1);
  return value.size() == upper.size() &&
         std::equal(value.begin(), value.end(), upper.begin(),
                    [](char a, char b) { return std::toupper(static_cast<unsigned char>(a)) == b; });
}

// Counts the components and RRULEs of the file's content lines, before libical builds its tree.
Result<void> CheckCounts(std::string_view text, const IcsLimits& limits) {
  int components = 0;
  int rules = 0;
  for (std::size_t at = 0; at < text.size();) {
    auto end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const auto line = text.substr(at, end - at);
    if (LineIs(line, "BEGIN") && !ValueIs(line.substr(6), "VCALENDAR")) ++components;
    if (LineIs(line, "RRULE")) ++rules;
    at = end + 1;
  }
  if (components > limits.max_components) {
    return LimitPassed(fmt::format("the iCalendar file has {} components (BEGIN: lines: events, alarms, time "
                                   "zones); at most {} are imported at once: split the file",
                                   components, limits.max_components),
                       "max_components", limits.max_components, components);
  }
  if (rules > limits.max_rules) {
    return LimitPassed(fmt::format("the iCalendar file has {} recurrence rules (RRULE lines); at most {} are "
                                   "imported at once: split the file",
                                   rules, limits.max_rules),
                       "max_rules", limits.max_rules, rules);
  }
  return {};
}

std::string Summary(icalcomponent* event) {
  const char* s = icalcomponent_get_summary(event);
  return s == nullptr ? std::string() : std::string(Utf8Prefix(s, 200));
}

}  // namespace

Result<IcsImport> ImportIcs(std::string_view text, std::int32_t from_day, std::int32_t to_day,
                            const ringwheel::Clock& clock, const IcsLimits& limits) {
  const auto deadline = clock.SteadyNow() + limits.max_time;
  if (text.size() > kMaxIcsBytes) {
    return Error::Invalid(
        fmt::format("the iCalendar file is {} bytes; at most {} are read", text.size(), kMaxIcsBytes));
  }
  if (text.find("BEGIN:VCALENDAR") == std::string_view::npos) {
    return Error::Invalid(
        "not an iCalendar file: it has no BEGIN:VCALENDAR line (export the calendar as .ics)");
  }
  if (auto counted = CheckCounts(text, limits); !counted) return counted.error();
  const RingFree free_ring;
  const std::string copy(text);  // libical reads a NUL-terminated string
  const std::unique_ptr<icalcomponent, ComponentFree> root(icalparser_parse_string(copy.c_str()));
  if (!root) return Error::Invalid("not an iCalendar file: libical could not parse it");
  icalcomponent* calendar = root.get();
  if (icalcomponent_isa(calendar) != ICAL_VCALENDAR_COMPONENT) {
    calendar = icalcomponent_get_first_component(root.get(), ICAL_VCALENDAR_COMPONENT);
    if (calendar == nullptr) return Error::Invalid("not an iCalendar file: it holds no VCALENDAR");
  }
  IcsImport out;
  for (auto* p = icalcomponent_get_first_property(calendar, ICAL_X_PROPERTY); p != nullptr;
       p = icalcomponent_get_next_property(calendar, ICAL_X_PROPERTY)) {
    const char* name = icalproperty_get_x_name(p);
    const char* value = icalproperty_get_x(p);
    if (name != nullptr && value != nullptr && std::string_view(name) == "X-WR-CALNAME")
      out.calendar_name = Utf8Prefix(value, 64);
  }
  std::vector<CalendarDay> days;
  std::int64_t instants = 0;  // occurrences computed, in all
  const auto out_of_time = [&] {
    return LimitPassed(fmt::format("importing the iCalendar file took more than {} ms (stopped at event {}); "
                                   "split the file or narrow ics_from and ics_to",
                                   limits.max_time.count(), out.events),
                       "max_time_ms", limits.max_time.count(), out.events);
  };
  for (auto* event = icalcomponent_get_first_component(calendar, ICAL_VEVENT_COMPONENT); event != nullptr;
       event = icalcomponent_get_next_component(calendar, ICAL_VEVENT_COMPONENT)) {
    ++out.events;
    if (clock.SteadyNow() >= deadline) return out_of_time();
    const auto summary = Summary(event);
    if (icalcomponent_get_status(event) == ICAL_STATUS_CANCELLED) {
      ++out.cancelled;
      continue;
    }
    const auto start = icalcomponent_get_dtstart(event);
    if (!Valid(start)) {
      return Error::Invalid(
          fmt::format("event {} ('{}') has no valid DTSTART: a date (YYYYMMDD) or date-time "
                      "of the years 1970 to 2199 is needed",
                      out.events, summary));
    }
    // An all-day event lasts to its DTEND, exclusive; any other gives the day it starts.
    int length = 1;
    if (start.is_date) {
      const auto end = icalcomponent_get_dtend(event);
      if (Valid(end) && end.is_date && DayOf(end) > DayOf(start)) length = DayOf(end) - DayOf(start);
      length = std::min(length, 366);
    }
    const auto add = [&](std::int32_t first) {
      for (int i = 0; i < length; ++i)
        days.push_back({.day = first + i, .name = summary});
    };
    auto* rrule = icalcomponent_get_first_property(event, ICAL_RRULE_PROPERTY);
    auto* rdate = icalcomponent_get_first_property(event, ICAL_RDATE_PROPERTY);
    if (rrule == nullptr && rdate == nullptr) {
      add(DayOf(start));
      continue;
    }
    // A recurring event: its occurrences within [from_day, to_day], less its EXDATEs.
    std::set<std::int32_t> excluded;
    for (auto* p = icalcomponent_get_first_property(event, ICAL_EXDATE_PROPERTY); p != nullptr;
         p = icalcomponent_get_next_property(event, ICAL_EXDATE_PROPERTY)) {
      const auto t = icalproperty_get_exdate(p);
      if (Valid(t)) excluded.insert(DayOf(t));
    }
    std::set<std::int32_t> occurrences;
    if (rrule == nullptr) occurrences.insert(DayOf(start));  // RDATE adds to DTSTART, which always occurs
    for (; rrule != nullptr; rrule = icalcomponent_get_next_property(event, ICAL_RRULE_PROPERTY)) {
      const std::unique_ptr<icalrecur_iterator, IteratorFree> it(
          icalrecur_iterator_new(icalproperty_get_rrule(rrule), start));
      if (!it) {
        return Error::Invalid(
            fmt::format("event {} ('{}') has an RRULE libical cannot expand", out.events, summary));
      }
      for (int n = 0; n < limits.max_instants_per_rule; ++n) {
        if (++instants > limits.max_instants) {
          return LimitPassed(
              fmt::format(
                  "expanding the recurring events of the iCalendar file passed {} occurrences (at "
                  "event {} '{}'); at most {} are computed in one import: narrow ics_from and ics_to, "
                  "or split the file",
                  limits.max_instants, out.events, summary, limits.max_instants),
              "max_instants", limits.max_instants, instants);
        }
        if ((n & 255) == 255 && clock.SteadyNow() >= deadline) return out_of_time();
        const auto t = icalrecur_iterator_next(it.get());
        if (!Valid(t) || DayOf(t) > to_day) break;
        occurrences.insert(DayOf(t));
      }
    }
    for (auto* p = icalcomponent_get_first_property(event, ICAL_RDATE_PROPERTY); p != nullptr;
         p = icalcomponent_get_next_property(event, ICAL_RDATE_PROPERTY)) {
      const auto t = icalproperty_get_rdate(p).time;
      if (Valid(t)) occurrences.insert(DayOf(t));
    }
    for (const auto day : occurrences) {
      if (day >= from_day && day <= to_day && !excluded.contains(day)) add(day);
    }
    // Duplicates are merged as they pile up; more distinct days than a calendar may hold are refused (events
    // were dropped silently here before).
    if (days.size() > 4 * kMaxCalendarDays) {
      NormaliseDays(days);
      if (days.size() > kMaxCalendarDays) {
        return LimitPassed(
            fmt::format("the iCalendar file gives more than {} days (at event {} '{}'); a calendar "
                        "holds at most {}: narrow ics_from and ics_to, or split the file",
                        kMaxCalendarDays, out.events, summary, kMaxCalendarDays),
            "max_days", static_cast<std::int64_t>(kMaxCalendarDays), static_cast<std::int64_t>(days.size()));
      }
    }
  }
  if (out.events == 0) return Error::Invalid("the iCalendar file has no events (VEVENT)");
  NormaliseDays(days);
  out.days = std::move(days);
  return out;
}

}  // namespace cronwheel::admin
