#pragma once
// An in-memory CatalogSource (dispatch/catalog_source.hpp) for unit tests of the trigger path: jobs,
// groups and the registry as the test sets them, and changes delivered when the test calls Change().
// Counts its loads, so a test can see what the catalog's cache saved.
//
// Thread-safety: one mutex guards everything.

#include <condition_variable>
#include <map>
#include <mutex>

#include "admin/dispatch/catalog_source.hpp"

namespace cwtest {

class MemoryCatalogSource final : public cronwheel::admin::CatalogSource {
 public:
  void PutJob(const cronwheel::admin::Job& job) {
    std::lock_guard lock(mu_);
    jobs_[job.id] = job;
  }
  void RemoveJob(int id) {
    std::lock_guard lock(mu_);
    jobs_.erase(id);
  }
  void PutGroup(const cronwheel::admin::JobGroup& group) {
    std::lock_guard lock(mu_);
    groups_[group.id] = group;
  }
  // An executor of `app_name` at `address`, last heard of at `heartbeat_ms`; with `run_at`, one that takes
  // fires ahead of their instant, with its clock as it measured it.
  void Register(const std::string& app_name, const std::string& address, std::int64_t heartbeat_ms,
                std::optional<cronwheel::admin::ExecutorClock> run_at = std::nullopt) {
    std::lock_guard lock(mu_);
    registry_[app_name][address] = heartbeat_ms;
    if (run_at) {
      run_at_[address] = *run_at;
    } else {
      run_at_.erase(address);
    }
  }
  int job_loads() const {
    std::lock_guard lock(mu_);
    return job_loads_;
  }

  std::vector<cronwheel::admin::Job> LoadJobs(std::span<const int> ids) override {
    std::lock_guard lock(mu_);
    ++job_loads_;
    std::vector<cronwheel::admin::Job> out;
    for (const int id : ids) {
      if (auto it = jobs_.find(id); it != jobs_.end()) out.push_back(it->second);
    }
    return out;
  }
  std::optional<cronwheel::admin::JobGroup> LoadGroup(int id) override {
    std::lock_guard lock(mu_);
    if (auto it = groups_.find(id); it != groups_.end()) return it->second;
    return std::nullopt;
  }
  cronwheel::admin::RegistrySnapshot LoadRegistry(std::int64_t since_ms) override {
    std::lock_guard lock(mu_);
    cronwheel::admin::RegistrySnapshot out;
    for (const auto& [app, addresses] : registry_) {
      for (const auto& [address, heartbeat] : addresses) {
        if (heartbeat < since_ms) continue;
        out.apps[app].push_back(address);
        if (const auto it = run_at_.find(address); it != run_at_.end()) out.run_at[address] = it->second;
      }
    }
    return out;
  }
  // Delivers nothing until the test calls Change(); returns when stopped.
  void ListenForChanges(const std::function<void()>& on_listening,
                        const std::function<void(std::string_view table, int id)>& on_change,
                        const std::stop_token& stop) override {
    on_listening();
    std::unique_lock lock(mu_);
    on_change_ = on_change;
    cv_.notify_all();
    cv_.wait(lock, stop, [] { return false; });
    on_change_ = nullptr;
  }
  // Blocks until a catalog listens (Settings.listen), so a Change() after it is delivered.
  void WaitUntilListening() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return on_change_ != nullptr; });
  }
  // What the database's triggers would notify (the catalog must be listening: Settings.listen).
  void Change(std::string_view table, int id) {
    std::function<void(std::string_view, int)> deliver;
    {
      std::lock_guard lock(mu_);
      deliver = on_change_;
    }
    if (deliver) deliver(table, id);
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::map<int, cronwheel::admin::Job> jobs_;
  std::map<int, cronwheel::admin::JobGroup> groups_;
  std::map<std::string, std::map<std::string, std::int64_t>> registry_;
  std::map<std::string, cronwheel::admin::ExecutorClock> run_at_;
  std::function<void(std::string_view, int)> on_change_;
  int job_loads_ = 0;
};

}  // namespace cwtest
