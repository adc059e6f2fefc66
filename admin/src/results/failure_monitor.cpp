#include "admin/results/failure_monitor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "admin/model/alert_rule.hpp"
#include "admin/schedule/next_fire.hpp"

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kStuckAlarmMs = 600'000;

AlarmEvent EventOf(const FailedFire& f) {
  return AlarmEvent{.event = f.skipped ? "fire_skipped" : "fire_failed",
                    .log_id = f.log_id,
                    .job_id = f.job_id,
                    .job_description = f.job_description,
                    .app_name = f.app_name,
                    .trigger_type = f.trigger_type,
                    .scheduled_ms = f.scheduled_ms,
                    .trigger_code = f.trigger_code,
                    .trigger_msg = f.trigger_msg,
                    .handle_code = f.handle_code,
                    .handle_msg = f.handle_msg,
                    // XXL-JOB's per-job alarm is for failures: a skipped instant goes to channels only.
                    .alarm_email = f.skipped ? std::string() : f.alarm_email,
                    .alarm_webhook = f.skipped ? std::string() : f.alarm_webhook,
                    .channels = {}};
}

// An alarm's values as alert_log keeps them, to send a retry again (channels aside).
nlohmann::json ToJson(const AlarmEvent& e) {
  return {{"event", e.event},
          {"streak", e.streak},
          {"log_id", e.log_id},
          {"job_id", e.job_id},
          {"job_description", e.job_description},
          {"app_name", e.app_name},
          {"trigger_type", e.trigger_type},
          {"scheduled_ms", e.scheduled_ms},
          {"trigger_code", e.trigger_code},
          {"trigger_msg", e.trigger_msg},
          {"handle_code", e.handle_code},
          {"handle_msg", e.handle_msg},
          {"suppressed", e.suppressed}};
}

AlarmEvent AlarmFromJson(const nlohmann::json& j) {
  AlarmEvent e;
  if (!j.is_object()) return e;
  e.event = j.value("event", std::string("fire_failed"));  // or fire_skipped, job_recovered
  e.streak = j.value("streak", 0);
  e.log_id = j.value("log_id", std::int64_t{0});
  e.job_id = j.value("job_id", 0);
  e.job_description = j.value("job_description", std::string());
  e.app_name = j.value("app_name", std::string());
  e.trigger_type = j.value("trigger_type", std::string());
  e.scheduled_ms = j.value("scheduled_ms", std::int64_t{0});
  e.trigger_code = j.value("trigger_code", 0);
  e.trigger_msg = j.value("trigger_msg", std::string());
  e.handle_code = j.value("handle_code", 0);
  e.handle_msg = j.value("handle_msg", std::string());
  e.suppressed = j.value("suppressed", 0);
  return e;
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
          if (!f.job_exists || f.skipped || f.retries_left <= 0) continue;
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
               .broadcast_log_id = f.broadcast_log_id,
               .workflow_run_id = f.workflow_run_id,
               .workflow_node = f.workflow_node,
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
  for (auto& fire : failures.started)
    schedule_retry_(std::move(fire), std::chrono::milliseconds(0));

  // Alarms, outside the transaction: they talk to mail servers and webhooks.
  std::vector<AlarmStatus> statuses;
  std::vector<AlertDelivery> deliveries;
  statuses.reserve(claimed.size());
  for (std::size_t i = 0; i < claimed.size(); ++i) {
    AlarmStatus s{.log_id = claimed[i].log_id};  // 1: no alarm (no channel, job gone, retry follows)
    if (claimed[i].job_exists && !retried[i]) Alarm(claimed[i], now, s, deliveries, round);
    statuses.push_back(std::move(s));
  }
  store_.SetAlarmStatus(statuses);
  // Jobs that succeeded again after an alert, then alerts whose delivery failed before, due again.
  auto pending = store_.ClaimRecoveries(now, settings_.batch);
  round.recoveries = static_cast<int>(pending.size());
  for (auto& p : store_.ClaimAlertRetries(now, settings_.batch))
    pending.push_back(std::move(p));
  for (const auto& p : pending) {
    AlertDelivery d{.alert_id = p.alert_id, .attempts_before = p.attempts};
    if (!p.channel) {
      d.final = true;
      d.message = "not sent: the channel was deleted";
    } else {
      auto event = AlarmFromJson(p.alarm);
      event.channels = {*p.channel};
      const auto outcome = alarms_.Send(event);
      d.ok = outcome.ok;
      d.message = outcome.message;
    }
    if (d.attempts_before > 0) ++round.alerts_retried;
    deliveries.push_back(std::move(d));
  }
  store_.FinishAlerts(deliveries, now);
  AlarmFailedRuns(now, round);
  return round;
}

void FailureMonitor::AlarmFailedRuns(std::int64_t now, Round& round) {
  std::vector<RunAlarmDone> done;
  for (const auto& a : store_.ClaimRunAlarms(now, settings_.batch)) {
    AlarmEvent event{.event = "workflow_run_failed",
                     .log_id = a.run_id,
                     .job_description = a.workflow_name,
                     .app_name = a.app_name,
                     .trigger_type = a.trigger_type,
                     .scheduled_ms = a.scheduled_ms,
                     .trigger_msg = a.note,
                     .handle_code = 500,
                     .handle_msg = "failed nodes: " + (a.failed_nodes.empty() ? "none" : a.failed_nodes),
                     .workflow_id = a.workflow_id};
    // The group's channels that alert failures (their rule's FAILED); each run's failure is alerted once.
    for (const auto& c : a.channels) {
      if (std::find(c.events.begin(), c.events.end(), kAlertFailed) != c.events.end())
        event.channels.push_back(c);
    }
    RunAlarmDone d{
        .run_id = a.run_id, .status = 3, .note = "alarm: no alert channel of the group alerts FAILED"};
    if (!event.channels.empty()) {
      const auto outcome = alarms_.Send(event);
      d.status = outcome.ok ? 2 : 3;
      d.note = "alarm: " + outcome.message;
      (outcome.ok ? round.alarms_sent : round.alarms_failed)++;
    }
    done.push_back(std::move(d));
  }
  store_.FinishRunAlarms(done);
}

void FailureMonitor::Alarm(const FailedFire& f, std::int64_t now, AlarmStatus& status,
                           std::vector<AlertDelivery>& deliveries, Round& round) {
  bool attempted = false;
  bool ok = true;
  std::string note;
  // The job's own alarm_email and alarm_webhook, as XXL-JOB's.
  const auto event = EventOf(f);
  if (auto outcome = alarms_.Send(event); outcome.attempted) {
    attempted = true;
    ok = outcome.ok;
    note += outcome.message;
  }
  // The alert channels of the job and its group, each by its rule.
  const auto kind = AlertEventOf(f.skipped, f.handle_code, f.handle_msg);
  for (const auto& plan : store_.PlanAlerts(f, kind, ToJson(event), now)) {
    if (plan.decision != AlertDecision::kSend) {
      note += fmt::format("channel {}: {}\n", plan.channel.name,
                          plan.decision == AlertDecision::kSuppress ? "held back (silence window)"
                                                                    : "not yet (below its threshold)");
      continue;
    }
    auto one = event;
    one.channels = {plan.channel};
    one.suppressed = plan.suppressed;
    const auto outcome = alarms_.Send(one);
    attempted = true;
    ok = ok && outcome.ok;
    note += outcome.message;
    if (!outcome.ok) note += fmt::format("channel {}: will be sent again\n", plan.channel.name);
    deliveries.push_back(
        {.alert_id = plan.alert_id, .attempts_before = 0, .ok = outcome.ok, .message = outcome.message});
  }
  if (!note.empty()) status.note = "alarm: " + note;
  if (attempted) {
    status.status = ok ? 2 : 3;
    (ok ? round.alarms_sent : round.alarms_failed)++;
  }
}

}  // namespace cronwheel::admin
