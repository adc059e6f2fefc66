#include "admin/schedule/next_fire.hpp"

#include <algorithm>

namespace cronwheel::admin {

std::optional<std::int64_t> FirstFireOnStart(std::string_view schedule_type, std::string_view schedule_conf,
                                             std::string_view time_zone, std::int64_t now_ms,
                                             std::chrono::milliseconds pre_read) {
  const auto s = ringwheel::Schedule::Parse(schedule_type, schedule_conf, time_zone);
  if (!s.ok()) return std::nullopt;
  return s->NextFireMs(now_ms + pre_read.count());
}

std::int64_t NextAfterCompletion(std::string_view schedule_conf, std::string_view time_zone,
                                 std::int64_t finished_ms) {
  const auto s = ringwheel::Schedule::Parse("FIX_DELAY", schedule_conf, time_zone);
  const auto next = s.ok() ? s->NextFireMs(finished_ms) : std::nullopt;
  return next.value_or(finished_ms + 1000);
}

std::optional<std::int64_t> ResumeAfterMisfires(const ringwheel::FireWindow& schedule, std::int64_t now_ms,
                                                std::chrono::milliseconds threshold) {
  return schedule.NextFireMs(now_ms - threshold.count() - 1);
}

std::chrono::milliseconds RetryBackoff(int backoff_s, int attempt, std::chrono::seconds max) {
  if (backoff_s <= 0) return std::chrono::milliseconds(0);
  std::int64_t ms = static_cast<std::int64_t>(backoff_s) * 1000;
  for (int i = 1; i < attempt && ms < max.count() * 1000; ++i)
    ms *= 2;
  return std::chrono::milliseconds(std::min<std::int64_t>(ms, max.count() * 1000));
}

}  // namespace cronwheel::admin
