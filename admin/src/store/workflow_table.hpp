#pragma once
// The writes of workflow runs (tables workflow_run, workflow_run_node; sql/016_workflows.sql) that move a run
// on, made inside the transactions that record what ends a node: a callback (PgResultStore::RecordCallbacks),
// the failure monitor's claim (PgResultStore::ClaimFailures), a person's kill; and the start of a run (the
// scan, a trigger). So what finishes a node and what starts after it are one transaction: an admin killed in
// between loses no node and runs none twice (docs/architecture.md, "Workflows"). The readiness rules are
// admin/model/workflow.hpp's Advance; the fires are written by store/fire_log.hpp (InsertWorkflowFires).
// Private to admin/src/store.
//
// Locking: a run's row is locked (FOR UPDATE, in id order) before its nodes are read, so of two admins
// recording the ends of two nodes of one run at once, the second waits and then sees the first's.
// Thread-safety: stateless functions; the transaction belongs to the calling thread. Errors: pqxx exceptions
// propagate.

#include <cstdint>
#include <map>
#include <optional>
#include <pqxx/pqxx>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/fire.hpp"
#include "admin/model/result.hpp"
#include "admin/model/workflow.hpp"
#include "admin/model/workflow_access.hpp"
#include "admin/results/result_store.hpp"
#include "admin/schedule/scan_planner.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin::workflow_table {

// A node's fire ended: `log_id` is the fire (for a broadcast, its shard 0's id; for a retry of a shard, the
// same). Ignored unless the node is RUNNING with `log_id` as its latest fire (a fire of a node killed or
// re-run meanwhile changes nothing).
struct NodeEnd {
  std::int64_t run_id = 0;
  std::string node;
  std::int64_t log_id = 0;
  NodeState state = NodeState::kSuccess;  // kSuccess, kFailed or kKilled
};
// Records the ends and moves each run on (Advance): starts the nodes that are ready (WORKFLOW fires owned
// by `node_id`, due now), skips the ones that can no longer run, ends the run when all nodes have.
// Returns the fires written.
std::vector<Fire> EndNodes(pqxx::transaction_base& tx, std::span<const NodeEnd> ends,
                           std::string_view node_id, std::int64_t now_ms);

// The retries written for failed node fires (`planned` and `written` in the same order): each becomes its
// node's latest fire. A retry of a broadcast's shard is not listed (the broadcast's shard 0 stays the node's
// fire).
void AddRetries(pqxx::transaction_base& tx, std::span<const PlannedRetry> planned,
                std::span<const Fire> written);

struct RunStart {
  int workflow_id = 0;
  std::string trigger_type = "MANUAL";  // CRON, MISFIRE, MANUAL, API
  std::int64_t scheduled_ms = 0;        // the roots' fires are due then
  std::optional<std::string> param;     // nullopt = the workflow's
  std::string created_by;
  bool skipped = false;  // a DO_NOTHING misfire: recorded SKIPPED, nothing runs
  std::string note;
  // Whom the run fires its nodes for: each node of the graph read here must pass MayFireNodes, else nothing
  // is written (StartedRun::refused). nullptr: checked by the caller (the scan checks run_as).
  const NodeFirer* firer = nullptr;
};
struct StartedRun {
  std::int64_t run_id = 0;  // 0: the workflow is gone, or a scheduled instant already has its run
  std::vector<Fire> fires;
  std::optional<Error> refused;  // RunStart::firer may not fire a node (MayFireNodes's error)
};
StartedRun StartRun(pqxx::transaction_base& tx, const RunStart& start, std::string_view node_id,
                    std::int64_t now_ms);

// Withdraws the scheduled runs of workflow `workflow_id` that are due after now (`clock`, read after the
// locks fire_log::WithdrawUnsent takes, for the same reason) and have not started:
// the scan writes a run and its first nodes' fires up to the pre-read window ahead (5 s), so a workflow
// disabled, rescheduled or deleted would still run them. A run is withdrawn, its fires and itself deleted,
// only when no executor has accepted any of its fires (locked first, so a sender cannot claim one meanwhile:
// it then finds the fire gone and sends nothing); the fires an admin had claimed for their second are named
// in fire_withdrawn, as a job's (fire_log::WithdrawUnsent), and that admin does not send them. The caller
// holds the workflow's schedule partition (job_table::LockSchedulePartition).
// Returns the runs withdrawn.
int WithdrawUnstarted(pqxx::transaction_base& tx, int workflow_id, ringwheel::Clock& clock);

// Kills run `run_id` for `who`: KILLED, its WAITING nodes SKIPPED, its RUNNING nodes KILLED and their open
// fires (those of job_log.workflow_run_id = run_id, no other) recorded killed (fire_log::MarkKilled).
// Returns the fires that an executor had accepted (to be told to kill them). kNotFound; kConflict when the
// run has ended; MayFireNodes's errors ("killing") when `who` may not operate the job of a fire to kill
// (checked before anything is written; the caller rolls back on any error).
Result<std::vector<KilledFire>> KillRun(pqxx::transaction_base& tx, std::int64_t run_id, const NodeFirer& who,
                                        std::int64_t now_ms);

// Re-runs node `key` of run `run_id` and what follows it: they are WAITING again (their fires are kept in
// log_ids), the run RUNNING, and the node starts at once when its parents allow. kNotFound; kConflict when
// the run is still running or the node did not fail (FAILED or KILLED); MayFireNodes's errors when `who`
// may not fire the node or one that follows it.
Result<std::vector<Fire>> RerunNode(pqxx::transaction_base& tx, std::int64_t run_id, std::string_view key,
                                    const NodeFirer& who, std::string_view node_id, std::int64_t now_ms);

// The nodes `keys` of `graph` with their jobs' groups as they are now (nullopt: the job is gone).
std::vector<NodeJob> NodeJobsOf(pqxx::transaction_base& tx, const WorkflowGraph& graph,
                                const std::vector<std::string>& keys);
// The same from `group_of` (job id -> group), read once for many graphs by JobGroupsOf.
std::vector<NodeJob> NodeJobsIn(const WorkflowGraph& graph, const std::vector<std::string>& keys,
                                const std::map<int, int>& group_of);
std::map<int, int> JobGroupsOf(pqxx::transaction_base& tx, const std::vector<int>& job_ids);

// The scan (store/pg_scheduler_store.hpp): the enabled workflows of the schedule partitions `held` (id %
// `total`) due at or before `horizon_ms`, at most `limit`, planned by `planner` as a job's schedule is
// (misfires, the time zone): each instant becomes a run (CRON, MISFIRE, or SKIPPED for a DO_NOTHING misfire)
// whose roots' fires are due at its instant, and the workflows advance. Returns the fires written and how
// many workflows were read.
std::pair<std::vector<CommittedFire>, std::size_t> ScanDue(pqxx::transaction_base& tx,
                                                           std::int64_t horizon_ms, int total,
                                                           std::span<const int> held, int limit,
                                                           ScanPlanner& planner, std::string_view node_id,
                                                           std::int64_t now_ms);

// A workflow_run.graph column read back (an empty graph if it is not one), and a bigint[] column read as
// array_to_json(...)::text.
WorkflowGraph GraphOfColumn(const pqxx::field& f);
std::vector<std::int64_t> IdsOfColumn(const pqxx::field& f);

// A run and its nodes; nullopt when there is none.
std::optional<WorkflowRun> GetRun(pqxx::transaction_base& tx, std::int64_t run_id);

}  // namespace cronwheel::admin::workflow_table
