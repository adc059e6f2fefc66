#include "admin/dispatch/job_catalog.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>

#include "cronwheel/mutex.hpp"
#include "cronwheel/net/http_address.hpp"
#include "cronwheel/throttled_log.hpp"

namespace cronwheel::admin {
JobCatalog::JobCatalog(Settings settings, ringwheel::Clock& clock, CatalogSource& source)
    : settings_(settings), clock_(clock), source_(source) {
  if (settings_.listen) listener_ = std::jthread([this](const std::stop_token& st) { ListenLoop(st); });
  registry_task_ = std::make_unique<PeriodicTask>(
      PeriodicTask::Settings{.name = "reading the executor registry", .interval = settings_.registry_refresh},
      clock_, [this] { RefreshRegistry(); });
}

JobCatalog::~JobCatalog() {
  listener_.request_stop();
  registry_task_.reset();
}

std::shared_ptr<const Job> JobCatalog::GetJob(int id) {
  {
    cronwheel::MutexLock lock(mu_);
    if (auto it = jobs_.find(id); it != jobs_.end()) return it->second;
  }
  const int ids[] = {id};
  Prefetch(ids);
  cronwheel::MutexLock lock(mu_);
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second;
}

std::shared_ptr<const JobGroup> JobCatalog::GetGroup(int id) {
  {
    cronwheel::MutexLock lock(mu_);
    if (auto it = groups_.find(id); it != groups_.end()) return it->second;
  }
  auto loaded = source_.LoadGroup(id);
  if (!loaded) return nullptr;
  auto group = std::make_shared<const JobGroup>(*std::move(loaded));
  {
    cronwheel::MutexLock lock(mu_);
    groups_[id] = group;
  }
  return group;
}

void JobCatalog::Prefetch(std::span<const int> job_ids) {
  std::vector<int> missing;
  {
    cronwheel::MutexLock lock(mu_);
    for (int id : job_ids) {
      if (!jobs_.contains(id)) missing.push_back(id);
    }
  }
  if (missing.empty()) return;
  std::sort(missing.begin(), missing.end());
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  auto loaded = source_.LoadJobs(missing);
  cronwheel::MutexLock lock(mu_);
  for (auto& j : loaded) {
    const int id = j.id;
    jobs_[id] = std::make_shared<const Job>(std::move(j));
  }
}

std::vector<std::string> JobCatalog::Addresses(const JobGroup& group) {
  std::vector<std::string> out;
  if (group.address_type == AddressType::kManual) {
    for (const auto& a : group.addresses)
      out.push_back(net::NormalizeAddress(a));
  } else {
    cronwheel::MutexLock lock(mu_);
    if (auto it = registry_.find(group.app_name); it != registry_.end()) out = it->second;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::map<std::string, std::vector<std::string>> JobCatalog::Registry() {
  cronwheel::MutexLock lock(mu_);
  return registry_;
}

void JobCatalog::RefreshRegistry() {
  const auto since = clock_.NowMs() - settings_.dead_after.count();
  auto fresh = source_.LoadRegistry(since);
  for (auto& [key, list] : fresh.apps) {
    for (auto& address : list)
      address = net::NormalizeAddress(address);
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  std::map<std::string, ExecutorClock> run_at;
  for (const auto& [address, clock] : fresh.run_at)
    run_at[net::NormalizeAddress(address)] = clock;
  cronwheel::MutexLock lock(mu_);
  registry_.swap(fresh.apps);
  run_at_.swap(run_at);
}

std::optional<ExecutorClock> JobCatalog::RunAtClock(const std::string& address) {
  cronwheel::MutexLock lock(mu_);
  if (const auto it = run_at_.find(address); it != run_at_.end()) return it->second;
  return std::nullopt;
}

void JobCatalog::InvalidateJob(int id) {
  cronwheel::MutexLock lock(mu_);
  jobs_.erase(id);
}

void JobCatalog::InvalidateGroup(int id) {
  cronwheel::MutexLock lock(mu_);
  groups_.erase(id);
}

void JobCatalog::Clear() {
  cronwheel::MutexLock lock(mu_);
  jobs_.clear();
  groups_.clear();
}

void JobCatalog::ListenLoop(const std::stop_token& stop) {
  ThrottledLog failures;
  while (!stop.stop_requested()) {
    try {
      source_.ListenForChanges(
          [&] {
            Clear();  // anything cached before the changes were listened to may be stale
            failures.Success();
          },
          [this](std::string_view table, int id) {
            if (table == "job") {
              InvalidateJob(id);
            } else if (table == "job_group") {
              InvalidateGroup(id);
            }
          },
          stop);
    } catch (const std::exception& e) {
      Clear();
      if (const auto n = failures.Failure(clock_.SteadyNow())) {
        spdlog::warn("change listener lost its connection ({} time(s) in a row), retrying: {}", *n, e.what());
      }
      clock_.WaitFor(std::chrono::seconds(1), stop);
    }
  }
}

}  // namespace cronwheel::admin
