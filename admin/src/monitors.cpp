#include "admin/monitors.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "admin/scan_planner.hpp"
#include "cronwheel/net/http_address.hpp"
#include "pg_util.hpp"
#include "ringwheel/schedule.hpp"

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kDayMs = 86'400'000;
constexpr std::int64_t kStuckAlarmMs = 600'000;

std::string Str(const pqxx::field& f) {
  return f.is_null() ? std::string() : f.as<std::string>();
}

}  // namespace

// --- FailureMonitor
// -------------------------------------------------------------------------------------------

FailureMonitor::FailureMonitor(Settings settings, ringwheel::Clock& clock, PgPool& pool, AlarmSender& alarms,
                               ScheduleRetry schedule_retry)
    : settings_(std::move(settings)),
      clock_(clock),
      pool_(pool),
      alarms_(alarms),
      schedule_retry_(std::move(schedule_retry)) {}

std::chrono::milliseconds FailureMonitor::Backoff(int backoff_s, int attempt, std::chrono::seconds max) {
  if (backoff_s <= 0) return std::chrono::milliseconds(0);
  std::int64_t ms = static_cast<std::int64_t>(backoff_s) * 1000;
  for (int i = 1; i < attempt && ms < max.count() * 1000; ++i)
    ms *= 2;
  return std::chrono::milliseconds(std::min<std::int64_t>(ms, max.count() * 1000));
}

FailureMonitor::Round FailureMonitor::RunOnce() {
  Round round;
  const auto now = clock_.NowMs();
  struct Claimed {
    AlarmEvent event;
    bool job_exists = false;
    bool retried = false;  // a retry follows: no alarm yet
  };
  std::vector<Claimed> claimed;
  std::vector<std::pair<Fire, std::chrono::milliseconds>> retries;

  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    // An admin that died while alarming leaves -1 behind: give up on those alarms.
    tx.exec_params(
        "UPDATE job_log SET alarm_status = 3, handle_msg = handle_msg || E'\\nalarm: not sent, the admin "
        "sending it "
        "stopped' WHERE alarm_status = -1 AND GREATEST(trigger_ms, handle_ms, created_ms) < $1",
        now - kStuckAlarmMs);
    const auto rows = tx.exec_params(
        "WITH c AS (UPDATE job_log SET alarm_status = -1 WHERE id IN (SELECT id FROM job_log WHERE "
        "alarm_status = 0"
        "   AND status = 'FAILED' ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)"
        " RETURNING id, job_id, group_id, trigger_type, scheduled_ms, retry_count, executor_param, "
        "shard_index,"
        "   shard_total, trigger_code, trigger_msg, handle_code, handle_msg)"
        " SELECT c.id, c.job_id, c.group_id, c.trigger_type, c.scheduled_ms, c.retry_count, c.executor_param,"
        "   c.shard_index, c.shard_total, c.trigger_code, c.trigger_msg, c.handle_code, c.handle_msg,"
        "   j.id IS NOT NULL, j.description, j.retry_count, j.retry_backoff_s, j.alarm_email, "
        "j.alarm_webhook,"
        "   j.schedule_type, j.schedule_conf, j.time_zone, j.enabled, j.next_fire_ms, g.app_name"
        " FROM c LEFT JOIN job j ON j.id = c.job_id LEFT JOIN job_group g ON g.id = c.group_id ORDER BY c.id",
        settings_.batch);
    nlohmann::json new_rows = nlohmann::json::array();
    std::vector<std::chrono::milliseconds> delays;
    for (const auto& r : rows) {
      Claimed c;
      auto& e = c.event;
      e.log_id = r[0].as<std::int64_t>();
      e.job_id = r[1].as<int>();
      e.trigger_type = r[3].as<std::string>();
      e.scheduled_ms = r[4].as<std::int64_t>();
      e.trigger_code = r[9].as<int>();
      e.trigger_msg = r[10].as<std::string>();
      e.handle_code = r[11].as<int>();
      e.handle_msg = r[12].as<std::string>();
      c.job_exists = r[13].as<bool>();
      if (c.job_exists) {
        e.job_description = r[14].as<std::string>();
        e.alarm_email = r[17].as<std::string>();
        e.alarm_webhook = r[18].as<std::string>();
        e.app_name = Str(r[24]);
        const int left = r[5].as<int>();
        if (left > 0) {
          const int attempt = std::max(1, r[15].as<int>() - left + 1);
          const auto delay = Backoff(r[16].as<int>(), attempt, settings_.max_backoff);
          new_rows.push_back(
              {{"j", e.job_id},
               {"g", r[2].as<int>()},
               {"s", now + delay.count()},
               {"p", r[6].as<std::string>()},
               {"r", left - 1},
               {"si", r[7].as<int>()},
               {"st", r[8].as<int>()},
               {"parent", e.log_id},
               {"m", fmt::format("Fail retry trigger: attempt {} after fire {} failed (back-off {} ms)",
                                 attempt, e.log_id, delay.count())}});
          delays.push_back(delay);
          c.retried = true;
        }
        // FIX_DELAY: a failed trigger brings no callback, so the next fire is set here.
        if (r[19].as<std::string>() == "FIX_DELAY" && r[22].as<bool>() &&
            r[23].as<std::int64_t>() == kAwaitingCompletion) {
          const auto s = ringwheel::Schedule::Parse("FIX_DELAY", r[20].c_str(), r[21].c_str(), nullptr);
          const auto next = s ? s->NextFireMs(now) : std::nullopt;
          tx.exec_params("UPDATE job SET next_fire_ms = $2 WHERE id = $1 AND next_fire_ms = $3", e.job_id,
                         next.value_or(now + 1000), kAwaitingCompletion);
        }
      }
      claimed.push_back(std::move(c));
    }
    if (!new_rows.empty()) {
      const auto inserted = tx.exec_params(
          "INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, owner_node, executor_param, "
          "retry_count,"
          " shard_index, shard_total, parent_log_id, trigger_msg, created_ms)"
          " SELECT v.j, v.g, 'RETRY', v.s, $2, v.p, v.r, v.si, v.st, v.parent, v.m, $3"
          " FROM json_to_recordset($1::json) AS v(j int, g int, s bigint, p text, r int, si int, st int,"
          " parent bigint, m text)"
          " RETURNING id, job_id, scheduled_ms, executor_param, retry_count, shard_index, shard_total",
          new_rows.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), settings_.node_id, now);
      std::size_t i = 0;
      for (const auto& r : inserted) {
        Fire f{.log_id = r[0].as<std::int64_t>(),
               .job_id = r[1].as<int>(),
               .scheduled_ms = r[2].as<std::int64_t>(),
               .type = TriggerType::kRetry,
               .param = r[3].as<std::string>(),
               .retry_count = r[4].as<int>(),
               .shard_index = r[5].as<int>(),
               .shard_total = r[6].as<int>()};
        retries.emplace_back(std::move(f), delays[std::min(i++, delays.size() - 1)]);
      }
    }
    tx.commit();
  });
  round.claimed = static_cast<int>(claimed.size());
  round.retries = static_cast<int>(retries.size());
  for (auto& [fire, delay] : retries)
    schedule_retry_(std::move(fire), delay);

  // Alarms, outside the transaction: they talk to mail servers and webhooks.
  nlohmann::json statuses = nlohmann::json::array();
  for (const auto& c : claimed) {
    int status = 1;  // nothing to alarm (no channel, the job is gone, or a retry follows)
    std::string note;
    if (c.job_exists && !c.retried) {
      const auto outcome = alarms_.Send(c.event);
      if (outcome.attempted) {
        status = outcome.ok ? 2 : 3;
        note = "alarm: " + outcome.message;
        (outcome.ok ? round.alarms_sent : round.alarms_failed)++;
      }
    }
    statuses.push_back({{"i", c.event.log_id}, {"s", status}, {"n", note}});
  }
  if (!statuses.empty()) {
    WithConnection(pool_, [&](pqxx::connection& conn) {
      pqxx::work tx(conn);
      tx.exec_params(
          "UPDATE job_log l SET alarm_status = v.s,"
          " handle_msg = CASE WHEN v.n = '' THEN l.handle_msg WHEN l.handle_msg = '' THEN v.n"
          "   ELSE l.handle_msg || E'\\n' || v.n END"
          " FROM json_to_recordset($1::json) AS v(i bigint, s int, n text) WHERE l.id = v.i AND "
          "l.alarm_status = -1",
          statuses.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      tx.commit();
    });
  }
  return round;
}

// --- LostResultMonitor
// ----------------------------------------------------------------------------------------

LostResultMonitor::LostResultMonitor(ringwheel::Clock& clock, PgPool& pool, JobCatalog& catalog,
                                     ExecutorClient& client, std::string global_token,
                                     std::chrono::milliseconds lost_after)
    : clock_(clock),
      pool_(pool),
      catalog_(catalog),
      client_(client),
      global_token_(std::move(global_token)),
      lost_after_(lost_after) {}

int LostResultMonitor::RunOnce() {
  const auto now = clock_.NowMs();
  struct Candidate {
    std::int64_t id;
    std::string address;
    std::string app_name;
    bool manual;
    std::string token;
  };
  auto candidates = WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<Candidate> out;
    for (const auto& r : tx.exec_params(
             "SELECT l.id, l.executor_address, g.app_name, g.address_type, g.access_token FROM job_log l"
             " JOIN job_group g ON g.id = l.group_id WHERE l.status = 'RUNNING' AND l.trigger_ms <= $1"
             " ORDER BY l.id LIMIT 1000",
             now - lost_after_.count())) {
      out.push_back({r[0].as<std::int64_t>(), r[1].as<std::string>(), r[2].as<std::string>(),
                     r[3].as<std::string>() == "MANUAL",
                     r[4].is_null() ? global_token_ : r[4].as<std::string>()});
    }
    return out;
  });
  if (candidates.empty()) return 0;
  const auto registry = catalog_.Registry();
  std::map<std::string, bool> beat_ok;  // one /beat per manual address per round
  std::vector<std::int64_t> lost;
  for (const auto& c : candidates) {
    bool gone = false;
    const auto address = cronwheel::net::NormalizeAddress(c.address);
    if (c.manual) {
      auto it = beat_ok.find(address);
      if (it == beat_ok.end()) it = beat_ok.emplace(address, client_.Beat(address, c.token).ok()).first;
      gone = !it->second;
    } else {
      const auto r = registry.find(c.app_name);
      gone = r == registry.end() || std::find(r->second.begin(), r->second.end(), address) == r->second.end();
    }
    if (gone) lost.push_back(c.id);
  }
  if (lost.empty()) return 0;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(
        "UPDATE job_log SET handle_code = 500, handle_ms = $2,"
        " handle_msg = CASE WHEN handle_msg = '' THEN $3 ELSE handle_msg || E'\\n' || $3 END"
        " WHERE id = ANY($1::bigint[]) AND handle_code = 0",
        PgArray<std::int64_t>(lost), now,
        std::string("Job result lost, marked as failure: the executor is gone and sent no result"));
    tx.commit();
  });
  spdlog::warn("{} fire(s) marked failed: their executors are gone and sent no result", lost.size());
  return static_cast<int>(lost.size());
}

// --- ReportMonitor
// --------------------------------------------------------------------------------------------

ReportMonitor::ReportMonitor(ringwheel::Clock& clock, PgPool& pool, int retention_days)
    : clock_(clock), pool_(pool), retention_days_(retention_days) {}

std::int64_t ReportMonitor::RunOnce() {
  const auto now = clock_.NowMs();
  UpdateReport(now);
  if (last_retention_ms_ < 0 || now - last_retention_ms_ >= kDayMs) {
    last_retention_ms_ = now;
    return ApplyRetention(now);
  }
  return 0;
}

void ReportMonitor::UpdateReport(std::int64_t now_ms) {
  const auto today = now_ms - now_ms % kDayMs;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    for (int back = 0; back < 3; ++back) {
      const auto start = today - back * kDayMs;
      tx.exec_params(
          "INSERT INTO log_report (day, running_count, success_count, failed_count, updated_ms)"
          " SELECT to_timestamp($1 / 1000.0)::date,"
          "  count(*) FILTER (WHERE status IN ('PENDING', 'RUNNING')),"
          "  count(*) FILTER (WHERE status = 'SUCCESS'),"
          "  count(*) FILTER (WHERE status IN ('FAILED', 'SKIPPED')), $3"
          " FROM job_log WHERE scheduled_ms >= $1 AND scheduled_ms < $2"
          " ON CONFLICT (day) DO UPDATE SET running_count = EXCLUDED.running_count,"
          "  success_count = EXCLUDED.success_count, failed_count = EXCLUDED.failed_count,"
          "  updated_ms = EXCLUDED.updated_ms",
          start, start + kDayMs, now_ms);
    }
    tx.commit();
  });
}

std::int64_t ReportMonitor::ApplyRetention(std::int64_t now_ms) {
  if (retention_days_ < 3) return 0;
  const auto cutoff = now_ms - now_ms % kDayMs - static_cast<std::int64_t>(retention_days_) * kDayMs;
  std::int64_t total = 0;
  for (;;) {
    const auto n = WithConnection(pool_, [&](pqxx::connection& conn) {
      pqxx::work tx(conn);
      const auto deleted =
          tx.exec_params(
                "DELETE FROM job_log WHERE id IN (SELECT id FROM job_log WHERE scheduled_ms < $1"
                " ORDER BY id LIMIT 1000 FOR UPDATE SKIP LOCKED)",
                cutoff)
              .affected_rows();
      tx.commit();
      return static_cast<std::int64_t>(deleted);
    });
    total += n;
    if (n < 1000) break;
  }
  if (total > 0) spdlog::info("log retention: deleted {} fire(s) older than {} days", total, retention_days_);
  return total;
}

}  // namespace cronwheel::admin
