// What the failure monitor, the alarm's claim and retention ask of alert_channel, alert_state and alert_log
// (store/alert_channel_table.hpp). The REST API's statements on alert_channel are PgAlertChannelStore's
// (store/pg_alert_channel_store.cpp).
#include "store/alert_channel_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cronwheel/json.hpp"
#include "cronwheel/text.hpp"
#include "store/pg_util.hpp"

namespace cronwheel::admin {
namespace {

// How long an alert being sent is the sending admin's: past it, another admin sends it again.
constexpr std::int64_t kAlertLeaseMs = 600'000;

}  // namespace

namespace alert_channel_table {

std::string JsonOf(const std::string& ids_expr) {
  return fmt::format(R"sql((SELECT coalesce(json_agg(json_build_object(
      'id', a.id, 'name', a.name, 'kind', a.kind, 'preset', a.preset, 'target', a.target,
      'body_template', a.body_template, 'secret', a.secret, 'events', a.events, 'threshold', a.threshold,
      'silence_s', a.silence_s) ORDER BY a.id), '[]')
    FROM alert_channel a WHERE a.id = ANY({})))sql",
                     ids_expr);
}

std::vector<AlertChannel> FromJson(const std::string& json_text) {
  std::vector<AlertChannel> out;
  const auto j = nlohmann::json::parse(json_text, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& o : j) {
    AlertChannel c;
    c.id = o.value("id", 0);
    c.name = o.value("name", std::string());
    c.kind = ParseAlertKind(o.value("kind", std::string())).value_or(AlertKind::kWebhook);
    c.preset = ParseAlertPreset(o.value("preset", std::string())).value_or(AlertPreset::kJson);
    c.target = o.value("target", std::string());
    c.body_template = o.value("body_template", std::string());
    c.secret = o.value("secret", std::string());
    c.events = o.value("events", std::vector<std::string>());
    c.threshold = o.value("threshold", 1);
    c.silence_s = o.value("silence_s", 0);
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<AlertPlan> PlanAlerts(pqxx::transaction_base& tx, const FailedFire& fire, std::string_view event,
                                  const nlohmann::json& alarm, std::int64_t now_ms) {
  std::vector<AlertPlan> plans;
  for (const auto& c : fire.alert_channels) {
    const auto rule = c.Rule();
    if (std::find(rule.events.begin(), rule.events.end(), event) == rule.events.end()) continue;
    tx.exec_params(R"sql(
      INSERT INTO alert_state (job_id, channel_id) VALUES ($1, $2) ON CONFLICT DO NOTHING
    )sql",
                   fire.job_id, c.id);
    // The lock orders the failures of one job on one channel, on any admin.
    const auto row = tx.exec_params1(R"sql(
      SELECT s.streak, s.last_failure_ms, s.silenced_until_ms, s.suppressed, s.alerted,
             s.last_failure_ms > 0 AND EXISTS (
               SELECT 1 FROM job_log l
                WHERE l.job_id = s.job_id AND l.scheduled_ms > s.last_failure_ms AND l.handle_code = 200)
               AS success_since
        FROM alert_state s WHERE s.job_id = $1 AND s.channel_id = $2 FOR UPDATE
    )sql",
                                     fire.job_id, c.id);
    const AlertState state{.streak = row[0].as<int>(),
                           .last_failure_ms = row[1].as<std::int64_t>(),
                           .silenced_until_ms = row[2].as<std::int64_t>(),
                           .suppressed = row[3].as<int>(),
                           .alerted = row[4].as<bool>()};
    const auto step =
        DecideAlert(rule, state, event, fire.scheduled_ms, row["success_since"].as<bool>(), now_ms);
    tx.exec_params(R"sql(
      UPDATE alert_state SET streak = $3, last_failure_ms = $4, silenced_until_ms = $5, suppressed = $6,
                             alerted = $7
       WHERE job_id = $1 AND channel_id = $2
    )sql",
                   fire.job_id, c.id, step.next.streak, step.next.last_failure_ms,
                   step.next.silenced_until_ms, step.next.suppressed, step.next.alerted);
    std::string message;
    if (step.decision == AlertDecision::kBelowThreshold) {
      message = fmt::format("failure {} in a row of the {} the channel waits for", step.next.streak,
                            rule.threshold);
    } else if (step.decision == AlertDecision::kSuppress) {
      message = fmt::format("held back: the silence window lasts until {} ms ({} held back so far)",
                            state.silenced_until_ms, step.next.suppressed);
    }
    const bool send = step.decision == AlertDecision::kSend;
    auto recorded = alarm;
    if (recorded.is_object()) recorded["suppressed"] = step.suppressed;
    const auto id =
        tx.exec_params1(R"sql(
      INSERT INTO alert_log (job_id, channel_id, channel_name, log_id, event, outcome, next_attempt_ms, message,
                             alarm, created_ms, updated_ms)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $10)
      RETURNING id
    )sql",
                        fire.job_id, c.id, c.name, fire.log_id, std::string(event),
                        send ? std::string("SENDING") : std::string(ToString(step.decision)),
                        send ? now_ms + kAlertLeaseMs : 0, message, DumpLossy(recorded), now_ms)[0]
            .as<std::int64_t>();
    plans.push_back({.alert_id = id, .channel = c, .decision = step.decision, .suppressed = step.suppressed});
  }
  return plans;
}

void FinishAlerts(pqxx::transaction_base& tx, std::span<const AlertDelivery> deliveries,
                  std::int64_t now_ms) {
  for (const auto& d : deliveries) {
    const int attempts = d.attempts_before + 1;
    const bool again = !d.ok && !d.final && attempts < kMaxAlertAttempts;
    const auto outcome = d.ok ? "SENT" : again ? "RETRYING" : "FAILED";
    tx.exec_params(R"sql(
      UPDATE alert_log SET outcome = $2, attempts = $3, next_attempt_ms = $4, message = $5, updated_ms = $6
       WHERE id = $1
    )sql",
                   d.alert_id, std::string(outcome), attempts,
                   again ? now_ms + AlertRetryDelayMs(attempts) : 0, std::string(Utf8Prefix(d.message, 2000)),
                   now_ms);
  }
}

std::vector<PendingAlert> ClaimRecoveries(pqxx::transaction_base& tx, std::int64_t now_ms, int limit) {
  // The first success after the last failure counted, for the states whose alert was sent.
  const auto rows = tx.exec_params(fmt::format(R"sql(
    WITH r AS (
      SELECT s.job_id, s.channel_id, s.streak, ok.id AS log_id, ok.scheduled_ms, ok.trigger_type
        FROM alert_state s
        CROSS JOIN LATERAL (
          SELECT l.id, l.scheduled_ms, l.trigger_type FROM job_log l
           WHERE l.job_id = s.job_id AND l.scheduled_ms > s.last_failure_ms AND l.handle_code = 200
           ORDER BY l.scheduled_ms LIMIT 1) ok
       WHERE s.alerted
       LIMIT $1
         FOR UPDATE OF s SKIP LOCKED),
    -- The streak starts again; what a silence window held back is still said by the next alert.
    reset AS (
      UPDATE alert_state s SET alerted = false, streak = 0
        FROM r WHERE s.job_id = r.job_id AND s.channel_id = r.channel_id)
    SELECT r.*, j.description, g.app_name, {} AS channel
      FROM r JOIN job j ON j.id = r.job_id JOIN job_group g ON g.id = j.group_id
     ORDER BY r.job_id, r.channel_id
  )sql",
                                               JsonOf("ARRAY[r.channel_id]")),
                                   limit);
  std::vector<PendingAlert> out;
  for (const auto& r : rows) {
    auto channels = FromJson(r["channel"].c_str());
    if (channels.empty()) continue;
    const auto& events = channels[0].events;
    if (std::find(events.begin(), events.end(), kAlertRecovered) == events.end()) continue;
    PendingAlert p;
    p.channel = std::move(channels[0]);
    p.alarm = {{"event", "job_recovered"},
               {"log_id", r["log_id"].as<std::int64_t>()},
               {"job_id", r["job_id"].as<int>()},
               {"job_description", r["description"].as<std::string>()},
               {"app_name", r["app_name"].as<std::string>()},
               {"trigger_type", r["trigger_type"].as<std::string>()},
               {"scheduled_ms", r["scheduled_ms"].as<std::int64_t>()},
               {"trigger_code", 200},
               {"handle_code", 200},
               {"streak", r["streak"].as<int>()}};
    p.alert_id =
        tx.exec_params1(R"sql(
      INSERT INTO alert_log (job_id, channel_id, channel_name, log_id, event, outcome, next_attempt_ms, message,
                             alarm, created_ms, updated_ms)
      VALUES ($1, $2, $3, $4, 'RECOVERED', 'SENDING', $5, '', $6::jsonb, $7, $7)
      RETURNING id
    )sql",
                        r["job_id"].as<int>(), p.channel->id, p.channel->name, r["log_id"].as<std::int64_t>(),
                        now_ms + kAlertLeaseMs, DumpLossy(p.alarm), now_ms)[0]
            .as<std::int64_t>();
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<PendingAlert> ClaimAlertRetries(pqxx::transaction_base& tx, std::int64_t now_ms, int limit) {
  const auto rows = tx.exec_params(fmt::format(R"sql(
    WITH due AS (
      SELECT id FROM alert_log
       WHERE outcome IN ('RETRYING', 'SENDING') AND next_attempt_ms > 0 AND next_attempt_ms <= $1
       ORDER BY next_attempt_ms LIMIT $2 FOR UPDATE SKIP LOCKED),
    leased AS (
      UPDATE alert_log a SET next_attempt_ms = $1 + $3, updated_ms = $1 FROM due WHERE a.id = due.id
      RETURNING a.id, a.attempts, a.channel_id, a.alarm)
    SELECT leased.id, leased.attempts, leased.alarm::text AS alarm, {} AS channel
      FROM leased ORDER BY leased.id
  )sql",
                                               JsonOf("ARRAY[leased.channel_id]")),
                                   now_ms, limit, kAlertLeaseMs);
  std::vector<PendingAlert> out;
  for (const auto& r : rows) {
    PendingAlert p;
    p.alert_id = r["id"].as<std::int64_t>();
    p.attempts = r["attempts"].as<int>();
    p.alarm = nlohmann::json::parse(r["alarm"].c_str(), nullptr, false);
    auto channels = FromJson(r["channel"].c_str());
    if (!channels.empty()) p.channel = std::move(channels[0]);
    p.suppressed = p.alarm.is_object() ? p.alarm.value("suppressed", 0) : 0;
    out.push_back(std::move(p));
  }
  return out;
}

std::int64_t DeleteEndedAlerts(pqxx::transaction_base& tx, std::int64_t before_ms, int limit) {
  // In id order, which is the order of creation: the scan of the key stops after `limit` old rows.
  return static_cast<std::int64_t>(tx.exec_params(R"sql(
    DELETE FROM alert_log WHERE id IN (
      SELECT id FROM alert_log WHERE created_ms < $1 AND outcome NOT IN ('SENDING', 'RETRYING')
       ORDER BY id LIMIT $2)
  )sql",
                                                  before_ms, limit)
                                       .affected_rows());
}

}  // namespace alert_channel_table

}  // namespace cronwheel::admin
