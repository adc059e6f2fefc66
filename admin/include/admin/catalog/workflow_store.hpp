#pragma once
// What the rules of workflows (catalog/workflow_service.hpp) need from the database, as an interface free of
// libpqxx: PgWorkflowStore (store/pg_workflow_store.hpp) in production, cwtest::MemoryWorkflowStore
// (tests/support) in unit tests. Its statements on a workflow's definition hold no rule: which references a
// saved workflow must have, when its first fire is computed and when its runs written ahead are withdrawn
// are WorkflowService's.
//
// A run's operations (start, kill, re-run a node, a killed fire's node) are whole steps of the run tables'
// owner (store/workflow_table.hpp), which the scan and the callbacks share: their rules (who may fire a
// node, which runs and nodes may be killed or re-run) live there and their refusals come back as Results
// (RunStarted::refused, KillRun, RerunNode). They are not moved here.
//
// Transactions: Transact runs a body against one Tx, in one database transaction; the body says whether to
// commit. Reads inside it see the transaction's own writes. Locks are taken where a method says so, in the
// order the scan takes them (a workflow's schedule partition, then its row: as a job's,
// docs/architecture.md "Stops and changes against the scan").
//
// Errors: database failures throw (DatabaseUnavailable and the driver's exceptions, as the other stores).
// Thread-safety: implementations are safe from several threads; a Tx belongs to the thread running its body.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "admin/model/fire.hpp"
#include "admin/model/result.hpp"
#include "admin/model/workflow.hpp"
#include "admin/model/workflow_access.hpp"

namespace cronwheel::admin {

class WorkflowStore {
 public:
  // A run started by hand or by the API (workflow_table::StartRun): its id (0 when there is no such
  // workflow) and the fires of its first nodes, or the refusal of the run's access check (`firer` may not
  // fire a node of the graph read in the run's transaction: MayFireNodes), when nothing was written.
  struct RunStarted {
    std::int64_t run_id = 0;
    std::vector<Fire> fires;
    std::optional<Error> refused;
  };

  // One transaction. Its methods are the statements of the workflow rules, each O(rows it touches).
  class Tx {
   public:
    virtual ~Tx() = default;

    // Locks the schedule partition workflow `id` is scanned with (job_table::LockSchedulePartition): a scan
    // holding it has committed the runs it wrote for the workflow before this goes on.
    virtual void LockSchedulePartition(int id) = 0;
    // Workflow `id`, its row locked for update; nullopt when there is none.
    virtual std::optional<Workflow> LockWorkflow(int id) = 0;
    // Existence, for the checks of a saved workflow: the group, and which of `job_ids` are jobs.
    virtual bool GroupExists(int group_id) = 0;
    virtual std::set<int> ExistingJobs(std::span<const int> job_ids) = 0;
    // Inserts `workflow` (its id ignored) saved at `now_ms` (created and updated times), its runs fired for
    // user `workflow.run_as_user_id` (none when there is no such user); returns the row as stored.
    virtual Workflow InsertWorkflow(const Workflow& workflow, std::int64_t now_ms) = 0;
    // Writes every field of `workflow` over row `workflow.id`, updated at max(now_ms, its last update + 1);
    // returns the row as stored.
    virtual Workflow UpdateWorkflow(const Workflow& workflow, std::int64_t now_ms) = 0;
    // Withdraws the workflow's runs written ahead by the scan that have not started, with their fires, as
    // read on the store's clock once their fires are locked (workflow_table::WithdrawUnstarted); the caller
    // holds its schedule partition. Returns how many runs.
    virtual int WithdrawUnstarted(int id) = 0;
    // Deletes workflow `id`'s row. False when there was none.
    virtual bool DeleteWorkflow(int id) = 0;

    // Run operations (above): a MANUAL or API run of workflow `id` due at `now_ms` with `param` (nullopt =
    // the workflow's), created by `firer.username`, whose first fires are owned by `node_id`.
    virtual RunStarted StartRun(int id, const std::string& trigger_type,
                                const std::optional<std::string>& param, const NodeFirer& firer,
                                const std::string& node_id, std::int64_t now_ms) = 0;
    // workflow_table::KillRun and RerunNode: kNotFound, kConflict, MayFireNodes's errors; nothing written
    // when they refuse.
    virtual Result<std::vector<KilledFire>> KillRun(std::int64_t run_id, const NodeFirer& who,
                                                    std::int64_t now_ms) = 0;
    virtual Result<std::vector<Fire>> RerunNode(std::int64_t run_id, const std::string& key,
                                                const NodeFirer& who, const std::string& node_id,
                                                std::int64_t now_ms) = 0;
    // Ends the node of fire `log_id` as KILLED and starts what follows it (workflow_table::EndNodes); the
    // fires written. Nothing when the fire is not a node's.
    virtual std::vector<Fire> EndKilledNode(std::int64_t log_id, const std::string& node_id,
                                            std::int64_t now_ms) = 0;
  };

  virtual ~WorkflowStore() = default;

  // Runs `body` in one transaction, committed when it returns true and rolled back when it returns false or
  // throws (the exception goes on).
  virtual void Transact(const std::function<bool(Tx&)>& body) = 0;

  // Reads, each its own read-only transaction.
  virtual std::optional<Workflow> Get(int id) = 0;
  // By id; only those of `group_ids` when given. O(workflows).
  virtual std::vector<Workflow> List(const std::optional<std::vector<int>>& group_ids) = 0;
  // The group of each of `job_ids` that is a job.
  virtual std::map<int, int> JobGroups(const std::vector<int>& job_ids) = 0;
  virtual std::optional<WorkflowRun> GetRun(std::int64_t run_id) = 0;
  // The newest `limit` runs of workflow `id` (nodes included), newest first.
  virtual std::vector<WorkflowRun> ListRuns(int id, int limit) = 0;
  // The open fires of job `job_id` that the executor at `executor_address` accepted and that are not of run
  // `run_id` (at most 20, by id).
  virtual std::vector<std::int64_t> OtherOpenFires(int job_id, const std::string& executor_address,
                                                   std::int64_t run_id) = 0;
};

}  // namespace cronwheel::admin
