#include "ringwheel/schedule.hpp"

#include <date/tz.h>

#include <limits>

#include "ringwheel/time_zone.hpp"
#include "zone_period.hpp"

namespace ringwheel {
namespace {

// FIX_RATE / FIX_DELAY periods are an int in XXL-JOB (seconds); the same bound here (about 68 years).
constexpr std::int64_t kMaxPeriodSeconds = std::numeric_limits<std::int32_t>::max();

// Whole seconds >= 1 written as plain decimal digits.
std::optional<std::int64_t> ParsePeriodSeconds(std::string_view conf) {
  if (conf.empty() || conf.size() > 10) return std::nullopt;
  std::int64_t v = 0;
  for (const char c : conf) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v < 1 || v > kMaxPeriodSeconds) return std::nullopt;
  return v;
}

}  // namespace

std::optional<ScheduleType> ParseScheduleType(std::string_view text) {
  if (text == "CRON") return ScheduleType::kCron;
  if (text == "FIX_RATE") return ScheduleType::kFixRate;
  if (text == "FIX_DELAY") return ScheduleType::kFixDelay;
  if (text == "NONE") return ScheduleType::kNone;
  return std::nullopt;
}

std::string_view ToString(ScheduleType type) {
  switch (type) {
    case ScheduleType::kCron:
      return "CRON";
    case ScheduleType::kFixRate:
      return "FIX_RATE";
    case ScheduleType::kFixDelay:
      return "FIX_DELAY";
    case ScheduleType::kNone:
      return "NONE";
  }
  return "NONE";
}

absl::StatusOr<Schedule> Schedule::Parse(std::string_view type, std::string_view conf,
                                         std::string_view zone) {
  Schedule schedule;
  const std::optional<ScheduleType> parsed_type = ParseScheduleType(type);
  if (!parsed_type) {
    return cronwheel::FieldError("schedule_type", "unknown schedule type '" + std::string(type) +
                                                      "'; allowed are CRON, FIX_RATE, FIX_DELAY, NONE");
  }
  schedule.type_ = *parsed_type;
  schedule.conf_ = std::string(conf);

  switch (schedule.type_) {
    case ScheduleType::kCron: {
      absl::StatusOr<CronExpression> cron = CronExpression::Parse(conf);
      if (!cron.ok()) {
        return cronwheel::FieldError("schedule_conf", "invalid cron expression '" + std::string(conf) +
                                                          "': " + std::string(cron.status().message()));
      }
      schedule.cron_ = *std::move(cron);
      break;
    }
    case ScheduleType::kFixRate:
    case ScheduleType::kFixDelay: {
      const std::optional<std::int64_t> seconds = ParsePeriodSeconds(conf);
      if (!seconds) {
        return cronwheel::FieldError(
            "schedule_conf", std::string(ToString(schedule.type_)) + " needs whole seconds >= 1 (at most " +
                                 std::to_string(kMaxPeriodSeconds) + "), got '" + std::string(conf) + "'");
      }
      schedule.period_ms_ = *seconds * 1000;
      break;
    }
    case ScheduleType::kNone:
      break;  // conf is not used (XXL-JOB leaves it empty)
  }

  const absl::StatusOr<const date::time_zone*> found = FindTimeZone(zone);
  if (!found.ok()) return cronwheel::FieldError("time_zone", std::string(found.status().message()));
  schedule.zone_ = *found;
  schedule.zone_name_ = zone.empty() ? std::string("UTC") : std::string(zone);
  return schedule;
}

std::optional<std::int64_t> Schedule::NextFireMs(std::int64_t from_ms) const {
  switch (type_) {
    case ScheduleType::kCron:
      return cron_->NextFireMs(from_ms, zone_);
    case ScheduleType::kFixRate:
    case ScheduleType::kFixDelay: {
      if (from_ms > std::numeric_limits<std::int64_t>::max() - period_ms_ - 1000) return std::nullopt;
      // from + period, rounded up to a whole second (XXL-JOB 3.4+).
      const std::int64_t next = from_ms + period_ms_;
      return -detail::FloorDiv(-next, 1000) * 1000;
    }
    case ScheduleType::kNone:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace ringwheel
