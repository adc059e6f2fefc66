#include "admin/results/failure_monitor.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "admin/schedule/next_fire.hpp"

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kStuckAlarmMs = 600'000;

AlarmEvent EventOf(const FailedFire& f) {
  return AlarmEvent{.log_id = f.log_id,
                    .job_id = f.job_id,
                    .job_description = f.job_description,
                    .app_name = f.app_name,
                    .trigger_type = f.trigger_type,
                    .scheduled_ms = f.scheduled_ms,
                    .trigger_code = f.trigger_code,
                    .trigger_msg = f.trigger_msg,
                    .handle_code = f.handle_code,
                    .handle_msg = f.handle_msg,
                    .alarm_email = f.alarm_email,
                    .alarm_webhook = f.alarm_webhook,
                    .channels = f.alert_channels};
}

}  // namespace

FailureMonitor::FailureMonitor(Settings settings, ringwheel::Clock& clock, ResultStore& store,
                               AlarmSender& alarms, ScheduleRetry schedule_retry)
    : settings_(std::move(settings)),
      clock_(clock),
      store_(store),
      alarms_(alarms),
      schedule_retry_(std::move(schedule_retry)) {}

FailureMonitor::Round FailureMonitor::RunOnce() {
  Round round;
  const auto now = clock_.NowMs();
  std::vector<bool> retried;  // by index into the claimed fires: a retry follows, no alarm yet
  std::vector<std::chrono::milliseconds> delays;
  auto failures = store_.ClaimFailures(
      settings_.node_id, now, settings_.batch, now - kStuckAlarmMs, [&](std::span<const FailedFire> claimed) {
        retried.assign(claimed.size(), false);
        std::vector<PlannedRetry> planned;
        for (std::size_t i = 0; i < claimed.size(); ++i) {
          const auto& f = claimed[i];
          if (!f.job_exists || f.retries_left <= 0) continue;
          const int attempt = std::max(1, f.job_retry_count - f.retries_left + 1);
          const auto delay = RetryBackoff(f.job_retry_backoff_s, attempt, settings_.max_backoff);
          planned.push_back(
              {.job_id = f.job_id,
               .group_id = f.group_id,
               .due_ms = now + delay.count(),
               .param = f.executor_param,
               .retries_left = f.retries_left - 1,
               .shard_index = f.shard_index,
               .shard_total = f.shard_total,
               .parent_log_id = f.log_id,
               .note = fmt::format("Fail retry trigger: attempt {} after fire {} failed (back-off {} ms)",
                                   attempt, f.log_id, delay.count())});
          delays.push_back(delay);
          retried[i] = true;
        }
        return planned;
      });
  const auto& claimed = failures.claimed;
  std::vector<std::pair<Fire, std::chrono::milliseconds>> retries;
  for (std::size_t i = 0; i < failures.retries.size(); ++i)
    retries.emplace_back(std::move(failures.retries[i]), delays[i]);
  round.claimed = static_cast<int>(claimed.size());
  round.retries = static_cast<int>(retries.size());
  for (auto& [fire, delay] : retries)
    schedule_retry_(std::move(fire), delay);

  // Alarms, outside the transaction: they talk to mail servers and webhooks.
  std::vector<AlarmStatus> statuses;
  statuses.reserve(claimed.size());
  for (std::size_t i = 0; i < claimed.size(); ++i) {
    AlarmStatus s{.log_id = claimed[i].log_id};  // 1: no alarm (no channel, job gone, retry follows)
    if (claimed[i].job_exists && !retried[i]) {
      const auto outcome = alarms_.Send(EventOf(claimed[i]));
      if (outcome.attempted) {
        s.status = outcome.ok ? 2 : 3;
        s.note = "alarm: " + outcome.message;
        (outcome.ok ? round.alarms_sent : round.alarms_failed)++;
      }
    }
    statuses.push_back(std::move(s));
  }
  store_.SetAlarmStatus(statuses);
  return round;
}

}  // namespace cronwheel::admin
