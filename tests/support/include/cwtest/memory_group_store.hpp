#pragma once
// An in-memory GroupStore (catalog/group_store.hpp) for unit tests of the rules of executor groups
// (GroupService): groups, the alert channels that exist and how many jobs each group has, as the test sets
// them. A transaction works on a copy of the state and commits by replacing it, so a refused call is seen to
// change nothing. It records the statements that lock or write, in order (State::steps: "lock group 1",
// "delete group 1", ...), for the tests to check what the rules asked.
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
#include <vector>

#include "admin/catalog/group_store.hpp"

namespace cwtest {

class MemoryGroupStore final : public cronwheel::admin::GroupStore {
 public:
  using JobGroup = cronwheel::admin::JobGroup;

  // Everything a transaction may change.
  struct State {
    std::map<int, JobGroup> groups;
    std::set<int> alert_channels;
    std::map<int, int> jobs;         // group id -> how many jobs it has
    std::vector<std::string> steps;  // the statements that locked or wrote, in order
    int next_id = 1;
  };

  // Set-up (outside any transaction): a group as stored (its id kept), an alert channel, a group's jobs.
  void PutGroup(const JobGroup& g) {
    std::lock_guard lock(mu_);
    state_.groups[g.id] = g;
    state_.next_id = std::max(state_.next_id, g.id + 1);
  }
  void PutAlertChannel(int id) {
    std::lock_guard lock(mu_);
    state_.alert_channels.insert(id);
  }
  void SetJobs(int group_id, int jobs) {
    std::lock_guard lock(mu_);
    state_.jobs[group_id] = jobs;
  }
  // A copy of the committed state.
  State Snapshot() {
    std::lock_guard lock(mu_);
    return state_;
  }

  void Transact(const std::function<bool(Tx&)>& body) override {
    std::lock_guard lock(mu_);
    State copy = state_;
    MemoryTx tx(copy);
    if (body(tx)) state_ = std::move(copy);
  }
  std::optional<JobGroup> GetGroup(int id) override {
    std::lock_guard lock(mu_);
    const auto it = state_.groups.find(id);
    if (it == state_.groups.end()) return std::nullopt;
    return it->second;
  }
  std::vector<JobGroup> ListGroups() override {
    std::lock_guard lock(mu_);
    std::vector<JobGroup> out;
    for (const auto& [id, g] : state_.groups)
      out.push_back(g);
    return out;
  }

 private:
  class MemoryTx final : public Tx {
   public:
    explicit MemoryTx(State& s) : s_(s) {}
    bool AppNameTaken(const std::string& app_name, int except_id) override {
      return std::any_of(s_.groups.begin(), s_.groups.end(), [&](const auto& g) {
        return g.first != except_id && g.second.app_name == app_name;
      });
    }
    std::vector<int> MissingAlertChannels(std::span<const int> ids) override {
      std::vector<int> out;
      for (const int id : ids)
        if (!s_.alert_channels.contains(id)) out.push_back(id);
      return out;
    }
    std::optional<JobGroup> LockGroup(int id) override {
      s_.steps.push_back("lock group " + std::to_string(id));
      const auto it = s_.groups.find(id);
      if (it == s_.groups.end()) return std::nullopt;
      return it->second;
    }
    JobGroup InsertGroup(const JobGroup& group, std::int64_t now_ms) override {
      JobGroup g = group;
      g.id = s_.next_id++;
      g.created_ms = now_ms;
      g.updated_ms = now_ms;
      s_.groups[g.id] = g;
      s_.steps.push_back("insert group " + std::to_string(g.id));
      return g;
    }
    JobGroup UpdateGroup(const JobGroup& group, std::int64_t now_ms) override {
      JobGroup g = group;
      g.created_ms = s_.groups.at(g.id).created_ms;
      g.updated_ms = now_ms;
      s_.groups[g.id] = g;
      s_.steps.push_back("update group " + std::to_string(g.id));
      return g;
    }
    int CountJobs(int id) override {
      const auto it = s_.jobs.find(id);
      return it == s_.jobs.end() ? 0 : it->second;
    }
    void DeleteGroup(int id) override {
      s_.groups.erase(id);
      s_.steps.push_back("delete group " + std::to_string(id));
    }

   private:
    State& s_;
  };

  std::mutex mu_;
  State state_;
};

}  // namespace cwtest
