#pragma once
// An in-memory AlertChannelStore (catalog/alert_channel_store.hpp) for unit tests of the rules of alert
// channels (AlertChannelService): channels, the channel lists of jobs and groups, and alerts, as the test
// sets them. A transaction works on a copy of the state and commits by replacing it, so a refused call is
// seen to change nothing. It records the statements that lock or write, in order (State::steps: "lock
// channel 1", "delete channel 1", "remove 1 from jobs", ...), for the tests to check what the rules asked.
//
// Thread-safety: one mutex, held for a whole transaction (transactions are serial).

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "admin/catalog/alert_channel_store.hpp"

namespace cwtest {

class MemoryAlertChannelStore final : public cronwheel::admin::AlertChannelStore {
 public:
  using AlertChannel = cronwheel::admin::AlertChannel;
  using AlertEntry = cronwheel::admin::AlertEntry;

  // Everything a transaction may change.
  struct State {
    std::map<int, AlertChannel> channels;
    std::map<int, std::vector<int>> job_channels;    // job id -> its alert_channel_ids
    std::map<int, std::vector<int>> group_channels;  // group id -> its alert_channel_ids
    std::vector<std::string> steps;                  // the statements that locked or wrote, in order
    int next_id = 1;
  };

  // Set-up (outside any transaction): a channel as stored (its id kept), a job's or group's channel list,
  // an alert (ListAlerts gives them newest first).
  void PutChannel(const AlertChannel& c) {
    std::lock_guard lock(mu_);
    state_.channels[c.id] = c;
    state_.next_id = std::max(state_.next_id, c.id + 1);
  }
  void PutJob(int id, std::vector<int> channel_ids) {
    std::lock_guard lock(mu_);
    state_.job_channels[id] = std::move(channel_ids);
  }
  void PutGroup(int id, std::vector<int> channel_ids) {
    std::lock_guard lock(mu_);
    state_.group_channels[id] = std::move(channel_ids);
  }
  void PutAlert(const AlertEntry& a) {
    std::lock_guard lock(mu_);
    alerts_.push_back(a);
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
  std::optional<AlertChannel> Get(int id) override {
    std::lock_guard lock(mu_);
    const auto it = state_.channels.find(id);
    if (it == state_.channels.end()) return std::nullopt;
    return it->second;
  }
  std::vector<AlertChannel> List() override {
    std::lock_guard lock(mu_);
    std::vector<AlertChannel> out;
    for (const auto& [id, c] : state_.channels)
      out.push_back(c);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return out;
  }
  // Filters by job only (the groups of jobs are not modelled): `group_ids` is ignored.
  std::vector<AlertEntry> ListAlerts(std::optional<int> job_id, const std::optional<std::vector<int>>&,
                                     int limit) override {
    std::lock_guard lock(mu_);
    std::vector<AlertEntry> out;
    for (auto it = alerts_.rbegin(); it != alerts_.rend() && static_cast<int>(out.size()) < limit; ++it)
      if (!job_id || it->job_id == *job_id) out.push_back(*it);
    return out;
  }

 private:
  class MemoryTx final : public Tx {
   public:
    explicit MemoryTx(State& s) : s_(s) {}
    bool NameTaken(const std::string& name, int except_id) override {
      return std::any_of(s_.channels.begin(), s_.channels.end(),
                         [&](const auto& c) { return c.first != except_id && c.second.name == name; });
    }
    std::optional<AlertChannel> LockChannel(int id) override {
      s_.steps.push_back("lock channel " + std::to_string(id));
      const auto it = s_.channels.find(id);
      if (it == s_.channels.end()) return std::nullopt;
      return it->second;
    }
    AlertChannel InsertChannel(const AlertChannel& channel, std::int64_t now_ms) override {
      AlertChannel c = channel;
      c.id = s_.next_id++;
      c.created_ms = now_ms;
      c.updated_ms = now_ms;
      s_.channels[c.id] = c;
      s_.steps.push_back("insert channel " + std::to_string(c.id));
      return c;
    }
    AlertChannel UpdateChannel(const AlertChannel& channel, std::int64_t now_ms) override {
      AlertChannel c = channel;
      const auto& before = s_.channels.at(c.id);
      c.created_ms = before.created_ms;
      c.updated_ms = std::max(now_ms, before.updated_ms + 1);
      s_.channels[c.id] = c;
      s_.steps.push_back("update channel " + std::to_string(c.id));
      return c;
    }
    bool DeleteChannel(int id) override {
      s_.steps.push_back("delete channel " + std::to_string(id));
      return s_.channels.erase(id) > 0;
    }
    void RemoveFromJobs(int id) override {
      s_.steps.push_back("remove " + std::to_string(id) + " from jobs");
      for (auto& [job, ids] : s_.job_channels)
        std::erase(ids, id);
    }
    void RemoveFromGroups(int id) override {
      s_.steps.push_back("remove " + std::to_string(id) + " from groups");
      for (auto& [group, ids] : s_.group_channels)
        std::erase(ids, id);
    }

   private:
    State& s_;
  };

  std::mutex mu_;
  State state_;
  std::vector<AlertEntry> alerts_;  // oldest first
};

}  // namespace cwtest
