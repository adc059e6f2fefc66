#pragma once
// Importing a calendar's days from an iCalendar file (RFC 5545, `.ics`): what a calendar application or a
// government's holiday feed exports. Parsed with libical (Debian's libical-dev), never by hand.
//
// Every VEVENT gives days: an all-day event (DTSTART;VALUE=DATE) the days from DTSTART up to DTEND, which is
// exclusive as RFC 5545 says (one day without DTEND); an event with a time the wall date its DTSTART is
// written in. A recurring event (RRULE, RDATE, less EXDATE) gives its occurrences from `from_day` to
// `to_day`, at most 10,000 of them; a single event is kept whatever its date. Cancelled events
// (STATUS:CANCELLED) give none. Each day is named by the events' SUMMARY.
//
// Bounds (security review 2, N5: an ADMIN imports files that come from third parties; 10,000 recurring
// events held a handler thread for 99.5 s, 45,000 RRULEs grew the admin by 143 MB). Before libical sees the
// file, its content lines are counted: at most `max_components` components (BEGIN: lines, VCALENDAR aside)
// and `max_rules` RRULE lines, so libical's tree (about 3 KB per RRULE) stays small. While expanding, at most
// `max_instants_per_rule` occurrences per RRULE and `max_instants` in all are computed, and the import
// stops once `max_time` of steady time (the injected clock) has passed; a file giving more distinct days than
// a calendar holds (kMaxCalendarDays, limit "max_days") is refused as the days pile up. Each refusal is
// kInvalid naming the limit and the file's value, with one FieldError (field "ics", code "limit", params
// {"limit": name, "max": the limit, "actual": the value or more}). Whatever libical allocated is freed on
// return, its per-thread ring of temporary buffers included.
//
// Thread-safety: reentrant (libical keeps no state between calls here). Complexity: linear in the file and
// in the occurrences expanded, both bounded.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/calendar.hpp"
#include "admin/model/result.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

struct IcsImport {
  std::vector<CalendarDay> days;  // sorted, each day once (NormaliseDays)
  std::string calendar_name;      // X-WR-CALNAME, "" when the file has none
  int events = 0;                 // VEVENTs read
  int cancelled = 0;              // of those, STATUS:CANCELLED (no days)
};

inline constexpr std::size_t kMaxIcsBytes = 1 << 20;

// What one import may cost (see above). The defaults hold a country's holidays for decades, or a team's
// calendar of a few years, many times over.
struct IcsLimits {
  int max_components = 5'000;          // BEGIN: lines (VEVENT, VALARM, VTIMEZONE, ...), VCALENDAR aside
  int max_rules = 1'000;               // RRULE lines
  int max_instants_per_rule = 10'000;  // occurrences computed per RRULE (before the window's end)
  int max_instants = 100'000;          // occurrences computed in all
  std::chrono::milliseconds max_time{std::chrono::seconds(5)};  // steady time, read from the clock
};

// The days of the iCalendar `text` (see above). kInvalid naming the problem: the text is not an iCalendar
// file (no BEGIN:VCALENDAR, or libical cannot parse it), is over kMaxIcsBytes, has no VEVENT, an event
// has no DTSTART libical can read ("event 3 ('Boxing Day') has no valid DTSTART: ..."), or a limit of
// `limits` is passed ("... has 10000 components (BEGIN: lines); at most 5000 are imported ..."). `clock`
// gives the steady time the import is held to.
Result<IcsImport> ImportIcs(std::string_view text, std::int32_t from_day, std::int32_t to_day,
                            const ringwheel::Clock& clock, const IcsLimits& limits = {});

}  // namespace cronwheel::admin
