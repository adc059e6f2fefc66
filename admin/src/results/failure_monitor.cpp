#include "admin/results/failure_monitor.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "admin/schedule/next_fire.hpp"
#include "admin/store/fire_log.hpp"
#include "store/pg_util.hpp"

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kStuckAlarmMs = 600'000;

AlarmEvent EventOf(const fire_log::FailedFire& f) {
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
                    .alarm_webhook = f.alarm_webhook};
}

// A FIX_DELAY job waiting for the failed run: a failed trigger brings no callback, so the next fire is set
// here.
void ResumeFixDelay(pqxx::transaction_base& tx, const fire_log::FailedFire& f, std::int64_t now_ms) {
  if (f.schedule_type != "FIX_DELAY" || !f.job_enabled || f.job_next_fire_ms != kAwaitingCompletion) return;
  tx.exec_params(R"sql(UPDATE job SET next_fire_ms = $2 WHERE id = $1 AND next_fire_ms = $3)sql", f.job_id,
                 NextAfterCompletion(f.schedule_conf, f.time_zone, now_ms), kAwaitingCompletion);
}

}  // namespace

FailureMonitor::FailureMonitor(Settings settings, ringwheel::Clock& clock, PgPool& pool, AlarmSender& alarms,
                               ScheduleRetry schedule_retry)
    : settings_(std::move(settings)),
      clock_(clock),
      pool_(pool),
      alarms_(alarms),
      schedule_retry_(std::move(schedule_retry)) {}

FailureMonitor::Round FailureMonitor::RunOnce() {
  Round round;
  const auto now = clock_.NowMs();
  std::vector<fire_log::FailedFire> claimed;
  std::vector<bool> retried;  // by index into `claimed`: a retry follows, no alarm yet
  std::vector<std::pair<Fire, std::chrono::milliseconds>> retries;

  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    // An admin that died while alarming leaves its claims behind: give up on those alarms.
    fire_log::AbandonStuckAlarms(tx, now - kStuckAlarmMs);
    claimed = fire_log::ClaimFailed(tx, settings_.node_id, now, settings_.batch);
    retried.assign(claimed.size(), false);
    std::vector<fire_log::PlannedRetry> planned;
    std::vector<std::chrono::milliseconds> delays;
    for (std::size_t i = 0; i < claimed.size(); ++i) {
      const auto& f = claimed[i];
      if (!f.job_exists) continue;
      if (f.retries_left > 0) {
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
      ResumeFixDelay(tx, f, now);
    }
    auto fires = fire_log::InsertRetries(tx, planned, settings_.node_id, now);
    for (std::size_t i = 0; i < fires.size(); ++i)
      retries.emplace_back(std::move(fires[i]), delays[i]);
    tx.commit();
  });
  round.claimed = static_cast<int>(claimed.size());
  round.retries = static_cast<int>(retries.size());
  for (auto& [fire, delay] : retries)
    schedule_retry_(std::move(fire), delay);

  // Alarms, outside the transaction: they talk to mail servers and webhooks.
  std::vector<fire_log::AlarmStatus> statuses;
  statuses.reserve(claimed.size());
  for (std::size_t i = 0; i < claimed.size(); ++i) {
    fire_log::AlarmStatus s{.log_id =
                                claimed[i].log_id};  // 1: no alarm (no channel, job gone, retry follows)
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
  if (!statuses.empty()) {
    WithConnection(pool_, [&](pqxx::connection& conn) {
      pqxx::work tx(conn);
      fire_log::SetAlarmStatus(tx, statuses);
      tx.commit();
    });
  }
  return round;
}

}  // namespace cronwheel::admin
