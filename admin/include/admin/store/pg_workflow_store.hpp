#pragma once
// WorkflowStore (catalog/workflow_store.hpp) on PostgreSQL: the REST API's statements on table workflow
// (sql/016_workflows.sql), which the rules of workflows (catalog/workflow_service.hpp) use, and the steps of
// a run's owner they call (store/workflow_table.hpp: start, kill, re-run, a killed node; the withdrawal of
// runs written ahead). No rule of a workflow's definition lives here.
//
// Thread-safety: safe from any thread (pooled connections). Errors: database failures throw
// (DatabaseUnavailable, CommitOutcomeUnknown: store/pg_util.hpp).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "admin/catalog/workflow_store.hpp"
#include "admin/store/pg_pool.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class PgWorkflowStore final : public WorkflowStore {
 public:
  // `clock` is read where a statement needs now under its locks (the withdrawal of runs written ahead).
  PgWorkflowStore(ringwheel::Clock& clock, PgPool& pool) : clock_(clock), pool_(pool) {}

  void Transact(const std::function<bool(Tx&)>& body) override;
  std::optional<Workflow> Get(int id) override;
  std::vector<Workflow> List(const std::optional<std::vector<int>>& group_ids) override;
  std::map<int, int> JobGroups(const std::vector<int>& job_ids) override;
  std::optional<WorkflowRun> GetRun(std::int64_t run_id) override;
  std::vector<WorkflowRun> ListRuns(int id, int limit) override;
  std::vector<std::int64_t> OtherOpenFires(int job_id, const std::string& executor_address,
                                           std::int64_t run_id) override;

 private:
  ringwheel::Clock& clock_;
  PgPool& pool_;
};

}  // namespace cronwheel::admin
