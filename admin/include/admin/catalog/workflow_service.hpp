#pragma once
// The rules of workflows (tables workflow, workflow_run, workflow_run_node; sql/016_workflows.sql;
// docs/operations.md, "Workflows") for the REST API (/api/v1/workflows, /api/v1/workflow-runs), over a
// WorkflowStore (catalog/workflow_store.hpp). The API reads and checks a body (ReadWorkflowBody: the graph's
// own shape, model/workflow.hpp) and the caller's access before it calls these; here is what needs the
// stored state: the group and each node's job exist, an enabled workflow gets its first fire
// (schedule/next_fire.hpp), and its runs written ahead by the scan are withdrawn when it is disabled,
// rescheduled or deleted.
//
// A definition's edit and the scan: the scan writes a run and its first nodes' fires up to pre_read ahead.
// An update or a delete locks the workflow's schedule partition before its row (a scan holding it has
// committed the runs it wrote, which the withdrawal then sees); a disabled or rescheduled workflow's runs
// that have not started are withdrawn, a changed graph keeps them (a run keeps the graph it began with).
//
// A run's start, kill and re-run are the run tables' owner's steps (WorkflowStore, "Run operations"),
// whose refusals are returned as they are; a trigger of a workflow that does not exist is kNotFound here.
//
// Time: now is read from the injected Clock once per call. Thread-safety: safe from any thread (the store's
// transactions serialise what must be). Errors: expected outcomes are Results (kInvalid with fields naming
// each field, kNotFound, kConflict, kForbidden); database failures throw, and a refused call changes nothing.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "admin/catalog/workflow_store.hpp"
#include "admin/model/fire.hpp"
#include "admin/model/result.hpp"
#include "admin/model/workflow.hpp"
#include "admin/model/workflow_access.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class WorkflowService {
 public:
  // Edits a workflow in place (an update's fields over the stored ones); an error is returned as it is.
  using Edit = std::function<Result<void>(Workflow&)>;
  struct Settings {
    std::chrono::milliseconds pre_read{5000};  // the scan's: an enabled workflow's first fire is after it
  };
  // A started run: its id and the fires of its first nodes, to send now.
  struct Started {
    std::int64_t run_id = 0;
    std::vector<Fire> fires;
  };

  WorkflowService(ringwheel::Clock& clock, WorkflowStore& store, Settings settings)
      : clock_(clock), store_(store), settings_(settings) {}

  // The group of each of `job_ids` that exists (for the API's access check of a workflow's nodes).
  std::map<int, int> JobGroups(const std::vector<int>& job_ids);
  // kInvalid (group_id, nodes[i].job_id) when the group or a node's job does not exist, or (schedule_conf)
  // when an enabled one's schedule has no fire after now; an enabled one gets its first fire. Its scheduled
  // runs are fired for `w.run_as_user_id` (the saver: admin/model/workflow_access.hpp).
  Result<Workflow> Create(Workflow w);
  // Applies `edit` to the stored workflow (locked) and saves it, checked as Create. Enabling it or changing
  // its schedule computes its first fire afresh; disabled or rescheduled, its runs written ahead that have
  // not started are withdrawn. kNotFound, kInvalid, or the error `edit` returned.
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
  // Runs `body` in one transaction of the store, committed when it returns a value (not an error).
  template <class T, class F>
  Result<T> InTransaction(F&& body);

  ringwheel::Clock& clock_;
  WorkflowStore& store_;
  Settings settings_;
};

}  // namespace cronwheel::admin
