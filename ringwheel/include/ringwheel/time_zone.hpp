#pragma once
// IANA time zones and ISO-8601 instants, for schedules (ringwheel/schedule.hpp), the console's preview
// and cronwheel-cron. Zones come from date-tz (the system tz database in /usr/share/zoneinfo); a zone
// pointer stays valid for the life of the process.
//
// Thread-safety: every function may be called from any thread.

#include <absl/status/statusor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace date {
class time_zone;
}

namespace ringwheel {

// The zone named `name` ("UTC", "Asia/Shanghai", "America/New_York"); an empty name is "UTC".
// The zone (never nullptr), or for an unknown name a NotFound status whose message is
//   "unknown time zone 'Mars/Base'; use an IANA name such as 'UTC' or 'Asia/Shanghai'".
// The first call loads the tz database index (milliseconds); later calls are a map lookup.
absl::StatusOr<const date::time_zone*> FindTimeZone(std::string_view name);

// `ms` (epoch ms) as ISO-8601 wall time in `zone` (nullptr = UTC) with its UTC offset, e.g.
// "2026-03-08T03:00:00-04:00"; milliseconds are shown only when not zero ("...T03:00:00.250-04:00").
std::string FormatIso8601(std::int64_t ms, const date::time_zone* zone);

// Parses "YYYY-MM-DD[(T| )HH:MM[:SS[.fff]]][Z|+HH:MM|+HHMM|+HH]" or a plain integer of epoch ms.
// Without an offset the wall time is read in `zone` (nullptr = UTC): a wall time inside a DST gap maps
// to the end of the gap, one that occurs twice to its first occurrence (the rule of ringwheel/cron.hpp).
// The instant (epoch ms), or an InvalidArgument status whose message names the text and the accepted
// forms: "invalid instant 'soon'; use ISO-8601 such as '2026-03-08T01:30:00' (wall time in the zone), ...".
absl::StatusOr<std::int64_t> ParseInstantMs(std::string_view text, const date::time_zone* zone);

}  // namespace ringwheel
