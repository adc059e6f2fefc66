#pragma once
// Quartz cron expressions, as XXL-JOB users write them (XXL-JOB evaluates them with Quartz's
// CronExpression; cronwheel adds a time zone per job).
//
// API contract (the implementation documents the grammar, the DST rules and the complexity here):
//   * Parse() accepts 6 or 7 fields: second minute hour day-of-month month day-of-week [year 1970-2199];
//     `* , - /` (including `0/5`, `10/15`), `?` in exactly one of day-of-month and day-of-week, `L`, `L-3`,
//     `LW`, `15W`, `6#3`, `5L`, JAN-DEC, SUN-SAT with Quartz numbering 1 = SUN ... 7 = SAT; case-insensitive.
//     A parse error names the field, the token and what is allowed.
//   * NextFireMs() returns the first matching second strictly after an instant, in a time zone, or nullopt
//     when the expression never fires again; the search is bounded and never hangs.

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
  // Returns nullopt and fills *error (when non-null) with e.g.
  //   "day-of-week field: token '8' is out of range; allowed are 1-7 or SUN-SAT, with , - / L #".
  static std::optional<CronExpression> Parse(std::string_view text, std::string* error);

  // First fire strictly after `after_ms` (epoch ms) with the fields read as wall time in `zone`
  // (nullptr = UTC). Fire instants are whole seconds.
  [[nodiscard]] std::optional<std::int64_t> NextFireMs(std::int64_t after_ms, const date::time_zone* zone) const;

  // Up to `count` consecutive fires after `after_ms`; fewer when the expression stops firing.
  [[nodiscard]] std::vector<std::int64_t> NextFiresMs(std::int64_t after_ms, const date::time_zone* zone,
                                                      std::size_t count) const;

  // The expression as given to Parse().
  [[nodiscard]] const std::string& text() const { return text_; }

 private:
  CronExpression() = default;
  std::string text_;
  // The parsed fields are the implementation's choice (bitsets are typical).
};

}  // namespace ringwheel
