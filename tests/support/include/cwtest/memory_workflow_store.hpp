#pragma once
// An in-memory WorkflowStore (catalog/workflow_store.hpp) for unit tests of the rules of workflows
// (WorkflowService): workflows, the groups and jobs that exist, and how many runs each workflow has written
// ahead and not started, as the test sets them. A transaction works on a copy of the state and commits by
// replacing it, so a refused call is seen to change nothing. It records the statements that lock or write,
// in order (State::steps: "lock partition 3", "lock workflow 3", "withdraw 3", "update workflow 3", ...), for
// the tests to check what the rules asked and in which order.
//
// Runs are kept in memory with the state rules of the run tables' owner (store/workflow_table.cpp): StartRun
// starts a RUNNING run of a workflow that exists, its nodes WAITING (no fires: fires and executors are not
// modelled, so KillRun kills no accepted fire and OtherOpenFires finds none); KillRun refuses a missing run
// (kNotFound) or an ended one (kConflict), else skips its waiting nodes, kills its running ones and ends it
// KILLED; RerunNode refuses a missing run or node, a running run and a node that is not FAILED or KILLED,
// else puts the node and its descendants back to WAITING and the run to RUNNING; EndKilledNode ends the node
// of a fire the test named (SetNodeFire) KILLED. A refusal the test set (RefuseRuns: MayFireNodes's) answers
// every run operation that would write. The SQL of these steps is tested on PostgreSQL
// (tests/pg/workflow_test).
//
// Thread-safety: one mutex, held for a whole transaction (transactions are serial).

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "admin/catalog/workflow_store.hpp"

namespace cwtest {

class MemoryWorkflowStore final : public cronwheel::admin::WorkflowStore {
 public:
  using Workflow = cronwheel::admin::Workflow;
  using WorkflowRun = cronwheel::admin::WorkflowRun;
  using Error = cronwheel::admin::Error;
  using Fire = cronwheel::admin::Fire;
  using KilledFire = cronwheel::admin::KilledFire;
  using NodeFirer = cronwheel::admin::NodeFirer;
  template <class T>
  using Result = cronwheel::admin::Result<T>;

  // Everything a transaction may change.
  struct State {
    std::map<int, Workflow> workflows;
    std::set<int> groups;
    std::set<int> jobs;
    std::map<int, int> unstarted;  // workflow id -> its runs written ahead that have not started
    std::map<std::int64_t, WorkflowRun> runs;
    std::map<std::int64_t, std::pair<std::int64_t, std::string>> node_fires;  // log id -> run id, node key
    std::vector<std::string> steps;  // the statements that locked or wrote, in order
    int next_id = 1;
    std::int64_t next_run_id = 1;
  };

  // Set-up (outside any transaction).
  void PutGroup(int id) {
    std::lock_guard lock(mu_);
    state_.groups.insert(id);
  }
  void PutJob(int id) {
    std::lock_guard lock(mu_);
    state_.jobs.insert(id);
  }
  void PutUnstartedRuns(int workflow_id, int runs) {
    std::lock_guard lock(mu_);
    state_.unstarted[workflow_id] = runs;
  }
  // Sets the state of node `key` of run `run_id` (as its fires' callbacks would), and the run's when given.
  void SetNode(std::int64_t run_id, const std::string& key, cronwheel::admin::NodeState state,
               std::optional<cronwheel::admin::RunState> run_state = std::nullopt) {
    std::lock_guard lock(mu_);
    auto& run = state_.runs.at(run_id);
    for (auto& n : run.nodes)
      if (n.key == key) n.state = state;
    if (run_state) run.state = *run_state;
  }
  // Fire `log_id` is node `key`'s of run `run_id` (for EndKilledNode).
  void SetNodeFire(std::int64_t log_id, std::int64_t run_id, const std::string& key) {
    std::lock_guard lock(mu_);
    state_.node_fires[log_id] = {run_id, key};
  }
  // What the run operations answer from now on: a refusal (MayFireNodes's), or none.
  void RefuseRuns(std::optional<Error> refusal) {
    std::lock_guard lock(mu_);
    refusal_ = std::move(refusal);
  }
  // A copy of the committed state.
  State Snapshot() {
    std::lock_guard lock(mu_);
    return state_;
  }

  void Transact(const std::function<bool(Tx&)>& body) override {
    std::lock_guard lock(mu_);
    State copy = state_;
    MemoryTx tx(copy, refusal_);
    if (body(tx)) state_ = std::move(copy);
  }
  std::optional<Workflow> Get(int id) override {
    std::lock_guard lock(mu_);
    const auto it = state_.workflows.find(id);
    if (it == state_.workflows.end()) return std::nullopt;
    return it->second;
  }
  std::vector<Workflow> List(const std::optional<std::vector<int>>& group_ids) override {
    std::lock_guard lock(mu_);
    std::vector<Workflow> out;
    for (const auto& [id, w] : state_.workflows) {
      if (!group_ids || std::find(group_ids->begin(), group_ids->end(), w.group_id) != group_ids->end())
        out.push_back(w);
    }
    return out;
  }
  // Every job of the store is in group 1 (the groups of jobs are not modelled).
  std::map<int, int> JobGroups(const std::vector<int>& job_ids) override {
    std::lock_guard lock(mu_);
    std::map<int, int> out;
    for (const int id : job_ids)
      if (state_.jobs.contains(id)) out[id] = 1;
    return out;
  }
  std::optional<WorkflowRun> GetRun(std::int64_t run_id) override {
    std::lock_guard lock(mu_);
    const auto it = state_.runs.find(run_id);
    if (it == state_.runs.end()) return std::nullopt;
    return it->second;
  }
  std::vector<WorkflowRun> ListRuns(int id, int limit) override {
    std::lock_guard lock(mu_);
    std::vector<WorkflowRun> out;
    for (auto it = state_.runs.rbegin(); it != state_.runs.rend() && std::cmp_less(out.size(), limit); ++it)
      if (it->second.workflow_id == id) out.push_back(it->second);
    return out;
  }
  // No fires are modelled: none is open.
  std::vector<std::int64_t> OtherOpenFires(int, const std::string&, std::int64_t) override { return {}; }

 private:
  class MemoryTx final : public Tx {
   public:
    MemoryTx(State& s, const std::optional<Error>& refusal) : s_(s), refusal_(refusal) {}
    void LockSchedulePartition(int id) override {
      s_.steps.push_back("lock partition " + std::to_string(id));
    }
    std::optional<Workflow> LockWorkflow(int id) override {
      s_.steps.push_back("lock workflow " + std::to_string(id));
      const auto it = s_.workflows.find(id);
      if (it == s_.workflows.end()) return std::nullopt;
      return it->second;
    }
    bool GroupExists(int group_id) override { return s_.groups.contains(group_id); }
    std::set<int> ExistingJobs(std::span<const int> job_ids) override {
      std::set<int> out;
      for (const int id : job_ids)
        if (s_.jobs.contains(id)) out.insert(id);
      return out;
    }
    Workflow InsertWorkflow(const Workflow& workflow, std::int64_t now_ms) override {
      Workflow w = workflow;
      w.id = s_.next_id++;
      w.created_ms = now_ms;
      w.updated_ms = now_ms;
      s_.workflows[w.id] = w;
      s_.steps.push_back("insert workflow " + std::to_string(w.id));
      return w;
    }
    Workflow UpdateWorkflow(const Workflow& workflow, std::int64_t now_ms) override {
      Workflow w = workflow;
      const auto& before = s_.workflows.at(w.id);
      w.created_ms = before.created_ms;
      w.updated_ms = std::max(now_ms, before.updated_ms + 1);
      s_.workflows[w.id] = w;
      s_.steps.push_back("update workflow " + std::to_string(w.id));
      return w;
    }
    int WithdrawUnstarted(int id) override {
      s_.steps.push_back("withdraw " + std::to_string(id));
      return std::exchange(s_.unstarted[id], 0);
    }
    bool DeleteWorkflow(int id) override {
      s_.steps.push_back("delete workflow " + std::to_string(id));
      return s_.workflows.erase(id) > 0;
    }
    RunStarted StartRun(int id, const std::string& trigger_type, const std::optional<std::string>& param,
                        const NodeFirer& firer, const std::string&, std::int64_t now_ms) override {
      if (refusal_) return {.refused = refusal_};
      const auto w = s_.workflows.find(id);
      if (w == s_.workflows.end()) return {};
      WorkflowRun run{.id = s_.next_run_id++,
                      .workflow_id = id,
                      .group_id = w->second.group_id,
                      .trigger_type = trigger_type,
                      .scheduled_ms = now_ms,
                      .param = param.value_or(w->second.param),
                      .graph = w->second.graph,
                      .start_ms = now_ms,
                      .created_by = firer.username};
      for (const auto& n : run.graph.nodes)
        run.nodes.push_back({.key = n.key, .job_id = n.job_id});
      s_.steps.push_back(trigger_type + " run of " + std::to_string(id));
      s_.runs[run.id] = run;
      return {.run_id = run.id};
    }
    Result<std::vector<KilledFire>> KillRun(std::int64_t run_id, const NodeFirer& who,
                                            std::int64_t now_ms) override {
      using cronwheel::admin::NodeState;
      using cronwheel::admin::RunState;
      s_.steps.push_back("kill run " + std::to_string(run_id));
      const auto it = s_.runs.find(run_id);
      if (it == s_.runs.end())
        return Error::NotFound("workflow run " + std::to_string(run_id) + " not found");
      auto& run = it->second;
      if (run.state != RunState::kRunning) {
        return Error::Conflict("workflow run " + std::to_string(run_id) + " has ended (" +
                               std::string(ToString(run.state)) + "): nothing to kill");
      }
      if (refusal_) return *refusal_;
      for (auto& n : run.nodes) {
        if (n.state == NodeState::kWaiting) {
          n.state = NodeState::kSkipped;
        } else if (n.state == NodeState::kRunning) {
          n.state = NodeState::kKilled;
        } else {
          continue;
        }
        n.end_ms = now_ms;
      }
      run.state = RunState::kKilled;
      run.end_ms = now_ms;
      run.note += (run.note.empty() ? "" : "\n") + ("killed by " + who.username);
      return std::vector<KilledFire>{};
    }
    Result<std::vector<Fire>> RerunNode(std::int64_t run_id, const std::string& key, const NodeFirer& who,
                                        const std::string&, std::int64_t) override {
      using cronwheel::admin::NodeState;
      using cronwheel::admin::RunState;
      s_.steps.push_back("rerun " + key + " of run " + std::to_string(run_id));
      const auto it = s_.runs.find(run_id);
      if (it == s_.runs.end())
        return Error::NotFound("workflow run " + std::to_string(run_id) + " not found");
      auto& run = it->second;
      const auto node =
          std::find_if(run.nodes.begin(), run.nodes.end(), [&](const auto& n) { return n.key == key; });
      if (node == run.nodes.end()) {
        return Error::NotFound("workflow run " + std::to_string(run_id) + " has no node '" + key + "'");
      }
      if (run.state == RunState::kRunning) {
        return Error::Conflict("workflow run " + std::to_string(run_id) + " is still running");
      }
      if (node->state != NodeState::kFailed && node->state != NodeState::kKilled) {
        return Error::Conflict("node '" + key + "' is " + std::string(ToString(node->state)) +
                               ": only a FAILED or KILLED node is re-run");
      }
      if (refusal_) return *refusal_;
      for (const auto& k : cronwheel::admin::WithDescendants(run.graph, key)) {
        for (auto& n : run.nodes) {
          if (n.key != k) continue;
          n.state = NodeState::kWaiting;
          n.start_ms = n.end_ms = 0;
        }
      }
      run.state = RunState::kRunning;
      run.end_ms = 0;
      run.note += (run.note.empty() ? "" : "\n") + ("node " + key + " re-run by " + who.username);
      return std::vector<Fire>{};
    }
    std::vector<Fire> EndKilledNode(std::int64_t log_id, const std::string&, std::int64_t now_ms) override {
      s_.steps.push_back("end killed node of fire " + std::to_string(log_id));
      const auto f = s_.node_fires.find(log_id);
      if (f == s_.node_fires.end()) return {};
      for (auto& n : s_.runs.at(f->second.first).nodes) {
        if (n.key != f->second.second) continue;
        n.state = cronwheel::admin::NodeState::kKilled;
        n.end_ms = now_ms;
      }
      return {};
    }

   private:
    State& s_;
    const std::optional<Error>& refusal_;
  };

  std::mutex mu_;
  State state_;
  std::optional<Error> refusal_;
};

}  // namespace cwtest
