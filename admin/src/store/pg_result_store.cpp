#include "admin/store/pg_result_store.hpp"

#include <fmt/format.h>

#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "admin/store/fire_log.hpp"
#include "admin/store/log_partitions.hpp"
#include "admin/store/trigger_result_writer.hpp"
#include "cronwheel/json.hpp"
#include "store/alert_channel_table.hpp"
#include "store/job_table.hpp"
#include "store/pg_util.hpp"
#include "store/workflow_table.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::admin {

std::vector<std::pair<std::int64_t, std::optional<std::string>>> PgResultStore::GroupTokensOf(
    std::span<const std::int64_t> log_ids) {
  if (log_ids.empty()) return {};
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<std::pair<std::int64_t, std::optional<std::string>>> out;
    std::set<std::int64_t> unknown(log_ids.begin(), log_ids.end());
    const auto take = [&](const pqxx::result& rows) {
      for (const auto& r : rows) {
        const auto id = r["id"].as<std::int64_t>();
        if (unknown.erase(id) == 0) continue;
        out.emplace_back(id, r["access_token"].is_null()
                                 ? std::nullopt
                                 : std::optional(r["access_token"].as<std::string>()));
      }
    };
    // Open fires are found in fire_open; the others (a repeated callback, say) by id in every partition of
    // job_log.
    take(tx.exec_params(R"sql(
      SELECT o.log_id AS id, g.access_token FROM fire_open o JOIN job_group g ON g.id = o.group_id
       WHERE o.log_id = ANY($1::bigint[])
    )sql",
                        PgArray<std::int64_t>(log_ids)));
    if (!unknown.empty()) {
      const std::vector<std::int64_t> rest(unknown.begin(), unknown.end());
      take(tx.exec_params(R"sql(
        SELECT l.id, g.access_token FROM job_log l JOIN job_group g ON g.id = l.group_id
         WHERE l.id = ANY($1::bigint[])
      )sql",
                          PgArray<std::int64_t>(rest)));
    }
    return out;
  });
}

CallbacksRecorded PgResultStore::RecordCallbacks(std::span<const HandleResult> results,
                                                 const std::string& node_id, std::int64_t now_ms) {
  // The trigger results kept back for these callbacks are written with them, or given back if this fails.
  std::vector<TriggerResult> triggers;
  if (held_ != nullptr) {
    std::vector<std::int64_t> ids;
    ids.reserve(results.size());
    for (const auto& r : results)
      ids.push_back(r.log_id);
    triggers = held_->TakeHeld(ids);
  }
  try {
    return Record(results, triggers, node_id, now_ms);
  } catch (...) {
    if (held_ != nullptr) held_->GiveBack(std::move(triggers));
    throw;
  }
}

CallbacksRecorded PgResultStore::Record(std::span<const HandleResult> results,
                                        std::span<const TriggerResult> triggers, const std::string& node_id,
                                        std::int64_t now_ms) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    CallbacksRecorded out;
    const auto done = fire_log::RecordHandleResults(tx, results, triggers, now_ms);
    std::vector<fire_log::HandledFire> succeeded;
    std::vector<fire_log::HandledFire> nodes_succeeded;  // fires of workflow nodes
    std::vector<int> finished_jobs;
    for (const auto& d : done) {
      out.recorded.push_back(
          {.log_id = d.log_id, .type = d.type, .scheduled_ms = d.scheduled_ms, .start_ms = d.start_ms});
      finished_jobs.push_back(d.job_id);
      if (d.handle_code != xxljob::kCodeSuccess) continue;
      // A workflow node's fire is followed by its workflow's edges, not its job's child jobs.
      (d.workflow_run_id != 0 ? nodes_succeeded : succeeded).push_back(d);
    }
    job_table::ResumeFixDelay(tx, finished_jobs, now_ms);
    out.children = fire_log::InsertChildren(tx, succeeded, node_id, now_ms);
    // A failed node's fire waits for the failure monitor (its retries); a succeeded one (a broadcast node:
    // once all its shards have) moves its run on here, in the same transaction.
    if (!nodes_succeeded.empty()) {
      std::vector<workflow_table::NodeEnd> ends;
      for (const auto& p : fire_log::FanInBroadcasts(tx, nodes_succeeded)) {
        ends.push_back({.run_id = p.workflow_run_id,
                        .node = p.workflow_node,
                        .log_id = p.broadcast_log_id != 0 ? p.broadcast_log_id : p.log_id,
                        .state = NodeState::kSuccess});
      }
      auto started = workflow_table::EndNodes(tx, ends, node_id, now_ms);
      out.children.insert(out.children.end(), std::make_move_iterator(started.begin()),
                          std::make_move_iterator(started.end()));
    }
    tx.commit();
    return out;
  });
}

ResultStore::FailuresClaimed PgResultStore::ClaimFailures(const std::string& node_id, std::int64_t now_ms,
                                                          int limit, std::int64_t stuck_before_ms,
                                                          const PlanRetries& plan) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    FailuresClaimed out;
    // An admin that died while alarming leaves its claims behind: give up on those alarms.
    fire_log::AbandonStuckAlarms(tx, stuck_before_ms);
    out.claimed = fire_log::ClaimFailed(tx, node_id, now_ms, limit);
    const auto planned = plan(out.claimed);
    std::vector<int> finished_jobs;
    for (const auto& f : out.claimed)
      if (f.job_exists) finished_jobs.push_back(f.job_id);
    job_table::ResumeFixDelay(tx, finished_jobs, now_ms);
    out.retries = fire_log::InsertRetries(tx, planned, node_id, now_ms);
    // Workflow nodes: a retry becomes the node's latest fire; a final failure ends the node and moves its
    // run on, in this transaction.
    workflow_table::AddRetries(tx, planned, out.retries);
    std::set<std::int64_t> retried;
    for (const auto& p : planned)
      retried.insert(p.parent_log_id);
    std::vector<workflow_table::NodeEnd> ends;
    for (const auto& f : out.claimed) {
      if (f.workflow_run_id == 0 || retried.contains(f.log_id)) continue;
      ends.push_back({.run_id = f.workflow_run_id,
                      .node = f.workflow_node,
                      .log_id = f.broadcast_log_id != 0 ? f.broadcast_log_id : f.log_id,
                      .state = NodeState::kFailed});
    }
    out.started = workflow_table::EndNodes(tx, ends, node_id, now_ms);
    tx.commit();
    return out;
  });
}

void PgResultStore::SetAlarmStatus(std::span<const AlarmStatus> statuses) {
  if (statuses.empty()) return;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    fire_log::SetAlarmStatus(tx, statuses);
    tx.commit();
  });
}

std::vector<AlertPlan> PgResultStore::PlanAlerts(const FailedFire& fire, std::string_view event,
                                                 const nlohmann::json& alarm, std::int64_t now_ms) {
  if (fire.alert_channels.empty()) return {};
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    auto plans = alert_channel_table::PlanAlerts(tx, fire, event, alarm, now_ms);
    tx.commit();
    return plans;
  });
}

void PgResultStore::FinishAlerts(std::span<const AlertDelivery> deliveries, std::int64_t now_ms) {
  if (deliveries.empty()) return;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    alert_channel_table::FinishAlerts(tx, deliveries, now_ms);
    tx.commit();
  });
}

std::vector<PendingAlert> PgResultStore::ClaimAlertRetries(std::int64_t now_ms, int limit) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    auto pending = alert_channel_table::ClaimAlertRetries(tx, now_ms, limit);
    tx.commit();
    return pending;
  });
}

std::vector<PendingAlert> PgResultStore::ClaimRecoveries(std::int64_t now_ms, int limit) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    auto recovered = alert_channel_table::ClaimRecoveries(tx, now_ms, limit);
    tx.commit();
    return recovered;
  });
}

std::vector<RunningFire> PgResultStore::RunningSince(std::int64_t sent_before_ms, int limit) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<RunningFire> out;
    for (const auto& r : tx.exec_params(R"sql(
           SELECT o.log_id AS id, o.executor_address, g.app_name, g.address_type, g.access_token
             FROM fire_open o JOIN job_group g ON g.id = o.group_id
            WHERE o.trigger_ms > 0 AND o.trigger_ms <= $1
            ORDER BY o.log_id LIMIT $2
         )sql",
                                        sent_before_ms, limit)) {
      out.push_back({.log_id = r["id"].as<std::int64_t>(),
                     .executor_address = r["executor_address"].as<std::string>(),
                     .app_name = r["app_name"].as<std::string>(),
                     .manual_group = r["address_type"].as<std::string>() == "MANUAL",
                     .group_token = r["access_token"].is_null()
                                        ? std::nullopt
                                        : std::optional(r["access_token"].as<std::string>())});
    }
    return out;
  });
}

void PgResultStore::MarkLost(std::span<const std::int64_t> log_ids, std::int64_t now_ms,
                             const std::string& message) {
  if (log_ids.empty()) return;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    fire_log::MarkLost(tx, log_ids, now_ms, message);
    tx.commit();
  });
}

void PgResultStore::EnsurePartitions(std::int64_t now_ms) {
  WithConnection(pool_, [&](pqxx::connection& conn) { log_partitions::Ensure(conn, now_ms); });
}

void PgResultStore::UpdateReport(std::int64_t now_ms, int days) {
  constexpr std::int64_t kDayMs = log_partitions::kDayMs;
  const auto today = now_ms - now_ms % kDayMs;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    for (int back = 0; back < days; ++back) {
      const auto start = today - back * kDayMs;
      tx.exec_params(R"sql(
        INSERT INTO log_report (day, running_count, success_count, failed_count, updated_ms)
        SELECT to_timestamp($1 / 1000.0)::date,
               count(*) FILTER (WHERE status IN ('PENDING', 'RUNNING')),
               count(*) FILTER (WHERE status = 'SUCCESS'),
               count(*) FILTER (WHERE status IN ('FAILED', 'SKIPPED')), $3
          FROM job_log WHERE scheduled_ms >= $1 AND scheduled_ms < $2
        ON CONFLICT (day) DO UPDATE
           SET running_count = EXCLUDED.running_count, success_count = EXCLUDED.success_count,
               failed_count = EXCLUDED.failed_count, updated_ms = EXCLUDED.updated_ms
      )sql",
                     start, start + kDayMs, now_ms);
    }
    tx.commit();
  });
}

std::vector<RunAlarm> PgResultStore::ClaimRunAlarms(std::int64_t now_ms, int limit) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    std::vector<RunAlarm> out;
    for (const auto& r :
         tx.exec_params(fmt::format(R"sql(
           WITH pick AS (
             SELECT id FROM workflow_run
              WHERE alarm_status = 1 OR (alarm_status = 4 AND alarm_ms < $1::bigint - 600000)
              ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED),
           r AS (
             UPDATE workflow_run w SET alarm_status = 4, alarm_ms = $1 FROM pick WHERE w.id = pick.id
             RETURNING w.id, w.workflow_id, w.group_id, w.trigger_type, w.scheduled_ms, w.note)
           SELECT r.*, w.name, g.app_name,
                  (SELECT string_agg(n.key || ' ' || n.state ||
                                     coalesce(' (fire ' || n.log_ids[cardinality(n.log_ids)] || ')', ''),
                                     ', ' ORDER BY n.key)
                     FROM workflow_run_node n WHERE n.run_id = r.id AND n.state IN ('FAILED', 'KILLED'))
                    AS failed_nodes,
                  {} AS alert_channels
             FROM r JOIN workflow w ON w.id = r.workflow_id LEFT JOIN job_group g ON g.id = r.group_id
            ORDER BY r.id
         )sql",
                                    alert_channel_table::JsonOf("coalesce(g.alert_channel_ids, '{}')")),
                        now_ms, limit)) {
      out.push_back(
          {.run_id = r["id"].as<std::int64_t>(),
           .workflow_id = r["workflow_id"].as<int>(),
           .workflow_name = r["name"].as<std::string>(),
           .app_name = r["app_name"].is_null() ? std::string() : r["app_name"].as<std::string>(),
           .trigger_type = r["trigger_type"].as<std::string>(),
           .scheduled_ms = r["scheduled_ms"].as<std::int64_t>(),
           .note = r["note"].as<std::string>(),
           .failed_nodes = r["failed_nodes"].is_null() ? std::string() : r["failed_nodes"].as<std::string>(),
           .channels = alert_channel_table::FromJson(r["alert_channels"].c_str())});
    }
    tx.commit();
    return out;
  });
}

void PgResultStore::FinishRunAlarms(std::span<const RunAlarmDone> done) {
  if (done.empty()) return;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& d : done)
    rows.push_back({{"i", d.run_id}, {"s", d.status}, {"n", d.note}});
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(
      UPDATE workflow_run w
         SET alarm_status = v.s, note = CASE WHEN w.note = '' THEN v.n ELSE w.note || E'\n' || v.n END
        FROM json_to_recordset($1::json) AS v(i bigint, s int, n text)
       WHERE w.id = v.i AND w.alarm_status = 4
    )sql",
                   DumpLossy(rows));
    tx.commit();
  });
}

RetentionOutcome PgResultStore::DropFiresBefore(std::int64_t cutoff_ms, int batch) {
  const auto dropped = WithConnection(
      pool_, [&](pqxx::connection& conn) { return log_partitions::DropBefore(conn, cutoff_ms, batch); });
  // Workflow runs go with their fires: the ended ones that started before the cutoff, a batch at a time.
  const auto runs = WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const auto n = tx.exec_params(R"sql(
      DELETE FROM workflow_run WHERE id IN (
        SELECT id FROM workflow_run WHERE start_ms < $1 AND state <> 'RUNNING' ORDER BY id LIMIT $2)
    )sql",
                                  cutoff_ms, batch)
                       .affected_rows();
    tx.commit();
    return static_cast<std::int64_t>(n);
  });
  // What the fires' retention leaves behind: alerts (alert_log keeps no fire's key; the ended ones created
  // before the cutoff) and run-once requests due before it that were fired or cancelled (a waiting one stays:
  // the scan still takes it). A batch a transaction, until none is left.
  const auto in_batches = [&](std::int64_t (*remove)(pqxx::transaction_base&, std::int64_t, int)) {
    std::int64_t total = 0;
    for (;;) {
      const auto n = WithConnection(pool_, [&](pqxx::connection& conn) {
        pqxx::work tx(conn);
        const auto d = remove(tx, cutoff_ms, batch);
        tx.commit();
        return d;
      });
      total += n;
      if (n < batch) return total;
    }
  };
  const auto alerts = in_batches(&alert_channel_table::DeleteEndedAlerts);
  const auto run_onces = in_batches(&job_table::DeleteEndedRunOnce);
  // The withdrawals of fires claimed and then withdrawn (sql/031): read at their instant, kept as long as
  // the fires' days.
  const auto withdrawals = in_batches(&fire_log::DeleteOldWithdrawals);
  return {.partitions = dropped.partitions,
          .default_rows = dropped.default_rows,
          .workflow_runs = runs,
          .alerts = alerts,
          .run_onces = run_onces,
          .withdrawals = withdrawals};
}

std::vector<OutputPull> PgResultStore::ClaimOutputPulls(std::int64_t now_ms, std::int64_t lease_ms,
                                                        int limit) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    auto out = fire_log::ClaimOutputPulls(tx, now_ms, lease_ms, limit);
    tx.commit();
    return out;
  });
}

void PgResultStore::FinishOutputPulls(std::span<const PulledOutput> pulled, std::int64_t now_ms) {
  if (pulled.empty()) return;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    fire_log::FinishOutputPulls(tx, pulled, now_ms);
    tx.commit();
  });
}

}  // namespace cronwheel::admin
