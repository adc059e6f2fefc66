#pragma once
// A job's schedule: type + conf + IANA time zone -> the next fire instant. One function for every type,
// so the admin's scheduler, the console's preview and cronwheel-cron agree exactly.
//
// Types (XXL-JOB's ScheduleTypeEnum spelling; facts in docs/xxl-job-protocol.md §5):
//   CRON       conf is a Quartz cron expression (ringwheel/cron.hpp) read in the schedule's zone.
//   FIX_RATE   conf is whole seconds >= 1: next = from + conf s, rounded up to a whole second
//              (XXL-JOB 3.4+ rounds a result with milliseconds up).
//   FIX_DELAY  conf is whole seconds >= 1 counted from when the previous run *finished*. NextFireMs(from)
//              returns from + conf s (rounded up as FIX_RATE); the admin passes the finish time as `from`
//              when a callback arrives. (XXL-JOB only declares this type; cronwheel implements it.)
//   NONE       never fires on its own: manual, API, child or retry triggers only. NextFireMs is nullopt.
//
// Thread-safety: a Schedule is immutable after Parse; const members may be called concurrently.

#include <absl/status/statusor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cronwheel/status.hpp"
#include "ringwheel/cron.hpp"

namespace date {
class time_zone;
}

namespace ringwheel {

enum class ScheduleType { kCron, kFixRate, kFixDelay, kNone };

// "CRON", "FIX_RATE", "FIX_DELAY", "NONE" (exact, upper case); nullopt otherwise.
std::optional<ScheduleType> ParseScheduleType(std::string_view text);
std::string_view ToString(ScheduleType type);

class Schedule {
 public:
  // Validates all three parts. The zone is an IANA name ("UTC", "Asia/Shanghai", "America/New_York")
  // looked up in the system tz database (date-tz); an empty zone means "UTC".
  // On the first problem found, checked in the order type, conf, zone, returns an InvalidArgument status
  // whose message names the value and says what is valid, and which names the JSON/DB field to blame
  // (cronwheel::ErrorField, base/include/cronwheel/status.hpp), e.g. (field: message)
  //   schedule_type: "unknown schedule type 'X'; allowed are CRON, FIX_RATE, FIX_DELAY, NONE"
  //   schedule_conf: "invalid cron expression '0 0 25 * * ?': hour field: token '25' is out of range; ..."
  //   schedule_conf: "FIX_RATE needs whole seconds >= 1 (at most 2147483647), got 'abc'"
  //   time_zone:     "unknown time zone 'Mars/Base'; use an IANA name such as 'UTC' or 'Asia/Shanghai'"
  // FIX_RATE / FIX_DELAY conf is plain decimal digits (no sign, blanks or fraction), 1..2147483647 (an int
  // in XXL-JOB). NONE ignores conf. Thread-safe (the tz database is loaded once, on first use).
  static absl::StatusOr<Schedule> Parse(std::string_view type, std::string_view conf, std::string_view zone);

  // The first fire instant strictly after `from_ms` (epoch ms), or nullopt when the schedule never fires
  // again (NONE; a cron expression that is exhausted, e.g. a past year). Never hangs: the cron search is
  // bounded. Complexity: O(1) for FIX_*; for CRON see CronExpression::NextFireMs (DST rule in cron.hpp).
  [[nodiscard]] std::optional<std::int64_t> NextFireMs(std::int64_t from_ms) const;

  [[nodiscard]] ScheduleType type() const { return type_; }
  [[nodiscard]] const std::string& conf() const { return conf_; }
  [[nodiscard]] const date::time_zone* zone() const { return zone_; }
  [[nodiscard]] const std::string& zone_name() const { return zone_name_; }

 private:
  Schedule() = default;
  ScheduleType type_ = ScheduleType::kNone;
  std::string conf_;
  std::string zone_name_;
  const date::time_zone* zone_ = nullptr;
  std::int64_t period_ms_ = 0;          // FIX_RATE / FIX_DELAY
  std::optional<CronExpression> cron_;  // CRON
};

}  // namespace ringwheel
