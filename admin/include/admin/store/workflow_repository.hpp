#pragma once
// Workflows (tables workflow, workflow_run, workflow_run_node; sql/016_workflows.sql) on PostgreSQL, for the
// REST API (/api/v1/workflows, /api/v1/workflow-runs; docs/operations.md, "Workflows"). The API reads and
// checks a body (ReadWorkflowBody) and the caller's access before it calls these; here is what needs the
// database: each node's job exists, a run starts with the fires of its first nodes, a run is killed or a node
// re-run under the run's lock (store/workflow_table.hpp holds those writes).
//
// Thread-safety: safe from any thread (pooled connections). Errors: expected outcomes are Results (kInvalid
// with fields, kNotFound, kConflict); database failures throw.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/fire.hpp"
#include "admin/model/result.hpp"
#include "admin/model/workflow.hpp"
#include "admin/model/workflow_access.hpp"
#include "admin/store/pg_pool.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class WorkflowRepository {
 public:
  using Edit = std::function<Result<void>(Workflow&)>;
  struct Settings {
    std::chrono::milliseconds pre_read{5000};  // the scan's: an enabled workflow's first fire is after it
  };
  // A started run: its id and the fires of its first nodes, to send now.
  struct Started {
    std::int64_t run_id = 0;
    std::vector<Fire> fires;
  };

  WorkflowRepository(ringwheel::Clock& clock, PgPool& pool, Settings settings)
      : clock_(clock), pool_(pool), settings_(settings) {}

  // The group of each of `job_ids` that exists (for the API's access check of a workflow's nodes).
  std::map<int, int> JobGroups(const std::vector<int>& job_ids);
  // kInvalid (nodes[i].job_id) when a node's job does not exist; an enabled one gets its first fire. Its
  // scheduled runs are fired for `w.run_as_user_id` (the saver: admin/model/workflow_access.hpp).
  Result<Workflow> Create(Workflow w);
  // Applies `edit` to the stored workflow (locked) and saves it. Disabled or rescheduled, its runs written
  // ahead by the scan that have not started are withdrawn (workflow_table::WithdrawUnstarted). kNotFound,
  // kInvalid.
  Result<Workflow> Update(int id, const Edit& edit);
  // Deletes it with its runs: those not started are withdrawn with their fires; the fires of runs under way
  // finish as fires of their jobs. kNotFound.
  Result<void> Delete(int id);
  std::optional<Workflow> Get(int id);
  // By id; only those of `group_ids` when given.
  std::vector<Workflow> List(const std::optional<std::vector<int>>& group_ids);

  // A run of workflow `id` triggered by hand (MANUAL) or API by `who`, with `param` (nullopt = the
  // workflow's). kNotFound; MayFireNodes's kNotFound / kForbidden when `who` may not fire every node of the
  // graph (read in the run's own transaction, so the run starts with the graph checked). Nothing is written
  // then.
  Result<Started> Trigger(int id, bool by_api, const std::optional<std::string>& param, const NodeFirer& who,
                          const std::string& node_id);
  std::optional<WorkflowRun> GetRun(std::int64_t run_id);
  // The newest `limit` runs of workflow `id` (nodes included), newest first.
  std::vector<WorkflowRun> ListRuns(int id, int limit);
  // KILLED; its fires' records closed (only the run's own: job_log.workflow_run_id); returns those an
  // executor runs. kNotFound, kConflict (ended); MayFireNodes's errors ("killing") when `who` may not
  // operate the job of a node whose fire would be killed, with nothing changed.
  Result<std::vector<KilledFire>> KillRun(std::int64_t run_id, const NodeFirer& who);
  // Re-runs a FAILED or KILLED node and what follows it, in its ended run, for `who`. kNotFound, kConflict;
  // MayFireNodes's errors when `who` may not fire the node or one that follows it.
  Result<std::vector<Fire>> RerunNode(std::int64_t run_id, const std::string& key, const NodeFirer& who,
                                      const std::string& node_id);
  // The open fires of job `job_id` that the executor at `executor_address` accepted and that are not of
  // run `run_id` (at most 20, by id): what an XXL-JOB executor's /kill of the job would end besides the
  // run's.
  std::vector<std::int64_t> OtherOpenFires(int job_id, const std::string& executor_address,
                                           std::int64_t run_id);
  // Ends the node of a fire a person killed (the logs' kill route) and starts what follows it; the fires
  // written are returned to send. Nothing when the fire is not a node's.
  std::vector<Fire> FireKilled(std::int64_t log_id, const std::string& node_id);

 private:
  ringwheel::Clock& clock_;
  PgPool& pool_;
  Settings settings_;
};

}  // namespace cronwheel::admin
