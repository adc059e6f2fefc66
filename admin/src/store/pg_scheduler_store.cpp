#include "admin/store/pg_scheduler_store.hpp"

#include <fmt/format.h>

#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "admin/schedule/partitions.hpp"
#include "admin/store/fire_log.hpp"
#include "admin/store/migrations.hpp"
#include "cronwheel/json.hpp"
#include "store/calendar_table.hpp"
#include "store/job_table.hpp"
#include "store/pg_util.hpp"
#include "store/workflow_table.hpp"

namespace cronwheel::admin {
namespace {

DueJob DueJobFromRow(const pqxx::row& r) {
  return DueJob{
      .id = r["id"].as<int>(),
      .group_id = r["group_id"].as<int>(),
      .schedule_type = r["schedule_type"].as<std::string>(),
      .schedule_conf = r["schedule_conf"].as<std::string>(),
      .time_zone = r["time_zone"].as<std::string>(),
      .misfire_strategy =
          ParseMisfireStrategy(r["misfire_strategy"].c_str()).value_or(MisfireStrategy::kDoNothing),
      .next_fire_ms = r["next_fire_ms"].as<std::int64_t>(),
      .calendar_ids = r["calendar_ids"].is_null()
                          ? std::vector<int>()
                          : nlohmann::json::parse(r["calendar_ids"].c_str()).get<std::vector<int>>(),
      .start_ms = r["start_ms"].as<std::int64_t>(),
      .end_ms = r["end_ms"].as<std::int64_t>()};
}

// The partitions this scan may take (schedule/partitions.hpp): P, and the ones assigned to `node_id` by the
// live admins as of `now_ms`.
std::pair<int, std::vector<int>> Assignment(pqxx::transaction_base& tx, std::string_view node_id,
                                            std::int64_t now_ms, std::chrono::milliseconds grace) {
  std::vector<NodeBeat> beats;
  for (const auto& r : tx.exec(R"sql(SELECT node_id, heartbeat_ms, lease_until_ms FROM admin_node)sql")) {
    beats.push_back({.node_id = r["node_id"].as<std::string>(),
                     .heartbeat_ms = r["heartbeat_ms"].as<std::int64_t>(),
                     .lease_until_ms = r["lease_until_ms"].as<std::int64_t>()});
  }
  const int total = tx.exec1(R"sql(SELECT count(*) FROM schedule_partition)sql")[0].as<int>();
  if (total == 0) {
    // Without partitions nothing would be scanned: say so rather than fire nothing in silence.
    throw std::runtime_error(
        "table schedule_partition is empty; refusing to scan (restart an admin to recreate it)");
  }
  return {total, AssignedPartitions(total, LiveNodes(beats, now_ms, grace.count()), node_id)};
}

}  // namespace

PgSchedulerStore::PgSchedulerStore(PgPool& pool, Settings settings) : pool_(pool), settings_(settings) {}

ScanOutcome PgSchedulerStore::Scan(std::string_view node_id, int limit, ringwheel::Clock& clock,
                                   ScanPlanner& planner) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec(fmt::format("SET LOCAL lock_timeout = {}; SET LOCAL idle_in_transaction_session_timeout = {}",
                        settings_.lock_timeout.count(), settings_.idle_in_transaction_timeout.count()));
    ScanOutcome out;
    const auto [total, assigned] = Assignment(tx, node_id, clock.NowMs(), settings_.liveness_grace);
    out.partitions_total = total;
    const auto lock_start = clock.SteadyNow();
    std::vector<int> held;
    for (const auto& r :
         tx.exec_params(R"sql(
           SELECT id FROM schedule_partition
            WHERE id = ANY($1::int[]) OR scanned_ms < $2
            ORDER BY id
              FOR UPDATE SKIP LOCKED
         )sql",
                        PgArray<int>(assigned), clock.NowMs() - settings_.takeover_after.count())) {
      held.push_back(r["id"].as<int>());
    }
    out.lock_wait = std::chrono::duration_cast<std::chrono::microseconds>(clock.SteadyNow() - lock_start);
    out.partitions_held = static_cast<int>(held.size());
    out.now_ms = clock.NowMs();  // after the locks: time spent taking them does not skew decisions
    if (held.empty()) {
      tx.commit();
      return out;
    }
    const auto horizon = out.now_ms + planner.settings().pre_read.count();
    const auto rows = tx.exec_params(kDueJobsSql, horizon, limit, total, PgArray<int>(held));
    std::vector<DueJob> due;
    due.reserve(rows.size());
    for (const auto& r : rows)
      due.push_back(DueJobFromRow(r));
    out.jobs_read = due.size();
    out.full_batch = static_cast<int>(due.size()) >= limit;
    if (!due.empty()) {
      const auto plan = planner.Plan(due, out.now_ms, calendar_table::Compiled(tx, due));
      out.fires = fire_log::InsertPlanned(tx, plan.fires, node_id, out.now_ms);
      job_table::Advance(tx, plan.advances);
    }
    // Run-once requests of the same partitions due within the same horizon become MANUAL fires.
    const auto run_once = job_table::TakeDueRunOnce(tx, horizon, total, held, limit);
    if (!run_once.empty()) {
      auto fires = fire_log::InsertRunOnce(tx, run_once, node_id, out.now_ms);
      out.fires.insert(out.fires.end(), std::make_move_iterator(fires.begin()),
                       std::make_move_iterator(fires.end()));
      out.full_batch = out.full_batch || static_cast<int>(run_once.size()) >= limit;
    }
    // Workflows of the same partitions: their runs, and the fires of their first nodes. They have a planner
    // of their own: its cache of parsed schedules is keyed by id, and a workflow's id is not a job's.
    if (!workflow_planner_) workflow_planner_.emplace(planner.settings());
    auto [workflow_fires, workflows_read] =
        workflow_table::ScanDue(tx, horizon, total, held, limit, *workflow_planner_, node_id, out.now_ms);
    out.fires.insert(out.fires.end(), std::make_move_iterator(workflow_fires.begin()),
                     std::make_move_iterator(workflow_fires.end()));
    out.full_batch = out.full_batch || static_cast<int>(workflows_read) >= limit;
    tx.exec_params(
        R"sql(UPDATE schedule_partition SET scanned_ms = $2, owner_node = $3 WHERE id = ANY($1::int[]))sql",
        PgArray<int>(held), out.now_ms, std::string(node_id));
    tx.commit();
    return out;
  });
}

std::vector<ClaimedFire> PgSchedulerStore::ClaimForDispatch(std::string_view node_id,
                                                            std::span<const std::int64_t> log_ids,
                                                            std::int64_t claim_ms,
                                                            std::span<const std::int64_t> doubtful_claims) {
  if (log_ids.empty()) return {};
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    fire_log::ReleaseDoubtfulClaims(tx, node_id, log_ids, doubtful_claims);
    auto claimed = fire_log::ClaimForDispatch(tx, node_id, log_ids, claim_ms);
    tx.commit();
    return claimed;
  });
}

std::vector<ClaimedFire> PgSchedulerStore::OwnUnclaimed(std::string_view node_id, std::int64_t after_log_id,
                                                        int limit) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    return fire_log::OwnUnclaimed(tx, node_id, after_log_id, limit);
  });
}

std::uint64_t PgSchedulerStore::CommitsInDoubt() {
  return pool_.stats().commits_in_doubt;
}

std::vector<std::int64_t> PgSchedulerStore::WithdrawnAt(std::span<const std::int64_t> instants_ms) {
  if (instants_ms.empty()) return {};
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    auto out = fire_log::WithdrawnAt(tx, instants_ms);
    tx.commit();
    return out;
  });
}

void PgSchedulerStore::MarkSkipped(std::span<const std::int64_t> log_ids, std::string_view note) {
  if (log_ids.empty()) return;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    fire_log::MarkSkipped(tx, log_ids, note);
    tx.commit();
  });
}

std::vector<std::int64_t> PgSchedulerStore::CreateShards(std::int64_t base_log_id, int total,
                                                         std::string_view node_id, std::int64_t now_ms) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    auto ids = fire_log::CreateShards(tx, base_log_id, total, node_id, now_ms);
    tx.commit();
    return ids;
  });
}

int ResizeSchedulePartitions(pqxx::connection& conn, int partitions) {
  if (partitions < 1) throw std::invalid_argument("schedule_partitions must be at least 1");
  pqxx::work tx(conn);
  tx.exec_params(R"sql(SELECT pg_advisory_xact_lock($1))sql", kMigrationLockKey);
  const int before = tx.exec1(R"sql(SELECT count(*) FROM schedule_partition)sql")[0].as<int>();
  if (before != partitions) {
    tx.exec_params(R"sql(DELETE FROM schedule_partition WHERE id >= $1)sql", partitions);
    tx.exec_params(R"sql(
      INSERT INTO schedule_partition (id) SELECT generate_series(0, $1 - 1) ON CONFLICT (id) DO NOTHING
    )sql",
                   partitions);
  }
  tx.commit();
  return before;
}

}  // namespace cronwheel::admin
