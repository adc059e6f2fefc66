#pragma once
// Quartz cron expressions, as XXL-JOB users write them (XXL-JOB evaluates them with Quartz's
// CronExpression; cronwheel adds an IANA time zone per job).
//
// Grammar (Quartz 2.x CronExpression; case-insensitive; fields separated by blanks):
//
//   second minute hour day-of-month month day-of-week [year]
//
//   field          values              special characters
//   second         0-59                , - * /
//   minute         0-59                , - * /
//   hour           0-23                , - * /
//   day-of-month   1-31                , - * / ? L W       (L, L-3, LW, L-3W, 15W)
//   month          1-12 or JAN-DEC     , - * /
//   day-of-week    1-7 or SUN-SAT      , - * / ? L #       (1 = SUN ... 7 = SAT; L, 5L, 6#3, FRI#3)
//   year           1970-2199           , - * /             (optional; absent = every year)
//
//   *       every value.                  a-b    a through b; a > b wraps (hour 22-2 = 22,23,0,1,2).
//   a/n     a, a+n, ... up to the field's maximum (minute 10/15 = 10,25,40,55); * /n and /n start at
//           the field's minimum; a-b/n steps inside the range. n is 1..59 (second, minute), 1..23
//           (hour), 1..31, 1..12, 1..7 (day-of-week) as in Quartz.
//   ?       "no value": Quartz requires it in exactly one of day-of-month and day-of-week.
//   L       day-of-month: the last day of the month; L-3 the third-to-last; LW the last weekday
//           (Mon-Fri) of the month; L-3W the weekday nearest the third-to-last day.
//           day-of-week: alone it is 7 (SAT); 5L is the last Thursday of the month.
//   15W     the weekday nearest the 15th, never crossing into another month (1W on a Saturday is
//           Monday the 3rd; 31W on a Sunday is Friday the 29th). A day the month does not have
//           (31W in April) does not fire that month.
//   6#3     the third Friday of the month (n#k, k = 1..5; no fire in a month without a fifth one).
//   L, W and # take a single day: they cannot be combined with lists or ranges (as Quartz).
//
// Errors: Parse() returns an InvalidArgument status whose message names the field, the token and what is
// allowed, e.g.
//   "day-of-week field: token '8' is out of range; allowed are 1-7 or SUN-SAT, with , - * / ? L #".
//
// Time zones and daylight-saving time. The fields are matched against the wall-clock time of the
// given IANA zone (date-tz, /usr/share/zoneinfo). Where the zone's UTC offset changes:
//
//   * Gap (spring forward; America/New_York 2026-03-08 02:00 EST -> 03:00 EDT): wall times in
//     [02:00, 03:00) do not exist. If the expression matches one or more of them, it fires once, at
//     the first instant after the gap (07:00Z, shown as 03:00 EDT). "0 30 2 * * ?" fires at 03:00 EDT
//     that day; "0 10 * * * ?" fires 01:10 EST, 03:00 EDT (for the missing 02:10), 03:10 EDT.
//     Nothing is skipped and nothing fires twice.
//   * Overlap (fall back; America/New_York 2026-11-01 02:00 EDT -> 01:00 EST): wall times in
//     [01:00, 02:00) occur twice.
//       - A fixed-time expression (second, minute and hour are each a number or a list of numbers:
//         no *, - or /) fires once, at the first occurrence: "0 30 1 * * ?" fires at 01:30 EDT
//         (05:30Z) only.
//       - An interval expression (any of second, minute, hour has *, - or /) follows real time and
//         fires at its matching wall times in both passes: "0 0/30 * * * ?" fires 01:00 EDT,
//         01:30 EDT, 01:00 EST, 01:30 EST, 02:00 EST.
//   The rule is decided at parse time (interval()). It is what Vixie cron / cronie, Cronos and
//   Quartz.NET 4 do, and what users expect: a daily job runs once per day even on a 23- or 25-hour day,
//   and a periodic job keeps its cadence in real time. Quartz (Java) itself has no rule: its FAQ says
//   a gap time "may never occur" (the fire is lost) and an overlap time may fire twice, and its
//   java.util.Calendar arithmetic can stop an interval trigger for the repeated hour. Shifts of any size
//   (Australia/Lord_Howe's 30 minutes) follow the same rule.
//
// Limits: fires lie in years 1970-2199 (Quartz's year range); after 2199-12-31 there is no next fire.
// Offsets: date-tz (USE_OS_TZDB) gives the transitions listed in the system TZif files (Debian lists them up
// to 2037) and ignores the files' POSIX-rule footer (HowardHinnant/date #794), which would lose DST from
// 2038 on; ringwheel applies the footer rule after a zone's last listed transition (src/zone_period.hpp),
// so the DST rule above holds through 2199, as far as today's tz rules stay in force.
//
// Thread-safety: a CronExpression is immutable after Parse(); const members may be called concurrently.
// Complexity: NextFireMs jumps field by field over per-field bitsets (never second by second); a
// typical expression costs a few hundred nanoseconds. An expression that never fires again ("0 0 0 30
// 2 ?", a past year) is detected by a search bounded by the year 2199: a few thousand cheap steps.

#include <absl/status/statusor.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace date {
class time_zone;
}

namespace ringwheel {

class CronExpression {
 public:
  // The expression, or an InvalidArgument status whose message is e.g.
  //   "day-of-week field: token '8' is out of range; allowed are 1-7 or SUN-SAT, with , - * / ? L #".
  static absl::StatusOr<CronExpression> Parse(std::string_view text);

  // First fire strictly after `after_ms` (epoch ms) with the fields read as wall time in `zone`
  // (nullptr = UTC), following the DST rule above. Fire instants are whole seconds. nullopt when the
  // expression never fires again (before 2200).
  [[nodiscard]] std::optional<std::int64_t> NextFireMs(std::int64_t after_ms,
                                                       const date::time_zone* zone) const;

  // Up to `count` consecutive fires after `after_ms`; fewer when the expression stops firing.
  [[nodiscard]] std::vector<std::int64_t> NextFiresMs(std::int64_t after_ms, const date::time_zone* zone,
                                                      std::size_t count) const;

  // The expression as given to Parse().
  [[nodiscard]] const std::string& text() const { return text_; }

  // True for an interval expression (second, minute or hour uses *, - or /): it fires in both passes of
  // a fall-back overlap. False for a fixed-time expression: it fires at the first occurrence only.
  [[nodiscard]] bool interval() const { return interval_; }

 private:
  // How the day is chosen: exactly one of day-of-month and day-of-week is '?'.
  enum class DayRule : std::uint8_t {
    kDaysOfMonth,     // days_ (bits 1-31)
    kLastDay,         // L, L-n: last day minus day_arg_
    kLastDayWeekday,  // LW, L-nW: weekday nearest (last day minus day_arg_)
    kNearestWeekday,  // nW: weekday nearest day day_arg_
    kDaysOfWeek,      // weekdays_ (bit 0 = Sunday ... 6 = Saturday)
    kLastWeekdayOf,   // nL: last day_arg_ (0 = Sunday) of the month
    kNthWeekdayOf,    // n#k: nth_-th day_arg_ of the month
  };

  friend class CronParser;

  CronExpression() = default;

  // Smallest matching wall time >= local_s (seconds since 1970-01-01T00:00 wall time), or nullopt when
  // none before 2200.
  [[nodiscard]] std::optional<std::int64_t> NextLocal(std::int64_t local_s) const;
  // Bits 1..31: the days of month `m` of year `y` that match the day rule.
  [[nodiscard]] std::uint32_t DayMask(int y, unsigned m) const;
  // Smallest year >= y allowed by the year field, or -1.
  [[nodiscard]] int NextYear(int y) const;

  std::string text_;
  std::uint64_t seconds_ = 0;  // bit s, 0-59
  std::uint64_t minutes_ = 0;  // bit m, 0-59
  std::uint32_t hours_ = 0;    // bit h, 0-23
  std::uint32_t days_ = 0;     // bit d, 1-31 (kDaysOfMonth)
  std::uint16_t months_ = 0;   // bit m, 1-12
  std::uint8_t weekdays_ = 0;  // bit w, 0 = Sunday (kDaysOfWeek)
  DayRule day_rule_ = DayRule::kDaysOfMonth;
  int day_arg_ = 0;
  int nth_ = 0;
  std::array<std::uint64_t, 4> years_{};  // bit (y - 1970), 1970-2199
  bool interval_ = false;
};

}  // namespace ringwheel
