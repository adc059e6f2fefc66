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
// Thread-safety: reentrant (libical keeps no state between calls here). Complexity: linear in the file and
// in the occurrences expanded.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/calendar.hpp"
#include "admin/model/result.hpp"

namespace cronwheel::admin {

struct IcsImport {
  std::vector<CalendarDay> days;  // sorted, each day once (NormaliseDays)
  std::string calendar_name;      // X-WR-CALNAME, "" when the file has none
  int events = 0;                 // VEVENTs read
  int cancelled = 0;              // of those, STATUS:CANCELLED (no days)
};

inline constexpr std::size_t kMaxIcsBytes = 1 << 20;

// The days of the iCalendar `text` (see above). kInvalid naming the problem: the text is not an iCalendar
// file (no BEGIN:VCALENDAR, or libical cannot parse it), is over kMaxIcsBytes, has no VEVENT, or an event
// has no DTSTART libical can read ("event 3 ('Boxing Day') has no valid DTSTART: ...").
Result<IcsImport> ImportIcs(std::string_view text, std::int32_t from_day, std::int32_t to_day);

}  // namespace cronwheel::admin
