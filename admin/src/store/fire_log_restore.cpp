// The statement of store/fire_log.hpp that closes, on a database restored from a backup, the fires it shows
// open for admins that are not alive (CloseAfterRestore).
#include <pqxx/pqxx>

#include "admin/store/fire_log.hpp"
#include "admin/store/pg_lease_store.hpp"

namespace cronwheel::admin::fire_log {

RestoreClosure CloseAfterRestore(pqxx::transaction_base& tx, std::int64_t now_ms) {
  // An owner is alive while a session holds its node lock in this database: a restored database's server
  // has no such session, however recent the lease its admin_node row shows (a restore point a few seconds
  // back leaves leases that still run).
  const auto r = tx.exec_params1(R"sql(
    WITH orphan AS (
      SELECT o.log_id FROM fire_open o LEFT JOIN admin_node n ON n.node_id = o.owner_node
       WHERE o.owner_node IS NULL OR n.node_id IS NULL
          OR NOT EXISTS (SELECT 1 FROM pg_locks l
                          WHERE l.locktype = 'advisory' AND l.classid = $4 AND l.objid = n.lock_key::oid
                            AND l.objsubid = 2 AND l.granted
                            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))
       FOR UPDATE OF o),
    gone AS (
      DELETE FROM fire_open f USING orphan WHERE f.log_id = orphan.log_id
      RETURNING f.log_id, f.scheduled_ms, f.trigger_ms),
    unsent AS (
      UPDATE job_log l SET skipped = true,
             trigger_msg = CASE WHEN l.trigger_msg = '' THEN $2 ELSE l.trigger_msg || E'\n' || $2 END
        FROM gone
       WHERE l.id = gone.log_id AND l.scheduled_ms = gone.scheduled_ms AND gone.trigger_ms = 0
      RETURNING l.id, l.scheduled_ms),
    running AS (
      UPDATE job_log l SET handle_code = 500, handle_ms = $1, alarm_status = 1,
             handle_msg = CASE WHEN l.handle_msg = '' THEN $3 ELSE l.handle_msg || E'\n' || $3 END
        FROM gone
       WHERE l.id = gone.log_id AND l.scheduled_ms = gone.scheduled_ms AND gone.trigger_ms > 0
      RETURNING l.id),
    alarm AS (
      INSERT INTO fire_alarm (log_id, scheduled_ms) SELECT id, scheduled_ms FROM unsent
      ON CONFLICT (log_id) DO NOTHING)
    SELECT (SELECT count(*) FROM unsent) AS unsent, (SELECT count(*) FROM running) AS running
  )sql",
                                 now_ms,
                                 "not sent: the database was restored from a backup to a point before this "
                                 "fire's outcome, and it may have run after that point (after_restore)",
                                 "result unknown: the database was restored from a backup to a point before "
                                 "this fire's result; the executor may have reported it to the admin of "
                                 "before the restore (after_restore). Not retried",
                                 kNodeLockClass);
  return {.unsent = r["unsent"].as<std::size_t>(), .running = r["running"].as<std::size_t>()};
}

}  // namespace cronwheel::admin::fire_log
