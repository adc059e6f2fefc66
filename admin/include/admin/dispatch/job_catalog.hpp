#pragma once
// What the trigger path reads about jobs, groups and executors, cached in memory, from a CatalogSource
// (dispatch/catalog_source.hpp; PostgreSQL in production):
//  * jobs and groups by id, loaded on first use (Prefetch loads many in one query) and dropped the moment
//    any admin changes them: a listener thread listens for changes (on PostgreSQL the 'cronwheel_changes'
//    channel, notified by the triggers of sql/001_schema.sql). If that stops, the whole cache is cleared (a
//    change may have been missed) and the listener starts again a second later.
//  * the live executor registry: app name -> addresses registered within the last `dead_after` (90 s,
//    XXL-JOB's DEAD_TIMEOUT), refreshed every `registry_refresh` (1 s; XXL-JOB refreshes group address
//    lists every 30 s, docs/xxl-job-protocol.md §15 item 12).
//
// Thread-safety: all public members are safe from any thread. Lifetime: source and clock outlive it; the
// destructor stops both threads. Errors: the source's failures throw from GetJob, GetGroup and Prefetch.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "admin/dispatch/catalog_source.hpp"
#include "admin/model/model.hpp"
#include "cronwheel/mutex.hpp"
#include "cronwheel/periodic_task.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class JobCatalog final {
 public:
  struct Settings {
    std::chrono::milliseconds registry_refresh{1000};
    std::chrono::milliseconds dead_after{90'000};
    bool listen = true;  // run the change listener (off in tests that drive Invalidate* themselves)
  };

  JobCatalog(Settings settings, ringwheel::Clock& clock, CatalogSource& source);
  ~JobCatalog();
  JobCatalog(const JobCatalog&) = delete;
  JobCatalog& operator=(const JobCatalog&) = delete;

  // nullptr when the job/group does not exist. Throws on database failure.
  std::shared_ptr<const Job> GetJob(int id);
  std::shared_ptr<const JobGroup> GetGroup(int id);
  // Loads the jobs (and their groups) not cached yet, in one query each.
  void Prefetch(std::span<const int> job_ids);

  // Where a group's fires may go: MANUAL groups their configured addresses, AUTO groups the executors
  // registered under their app name and alive. Normalised (NormalizeAddress) and sorted.
  std::vector<std::string> Addresses(const JobGroup& group);
  // The live registry as of the last refresh: app name -> sorted addresses.
  std::map<std::string, std::vector<std::string>> Registry();
  // When the executor at `address` (normalised) takes fires ahead of their instant: its clock as it measured
  // it at its last heartbeat; nullopt for any other (XXL-JOB executors, or one that has not measured yet).
  std::optional<ExecutorClock> RunAtClock(const std::string& address);
  // Re-reads the registry now (tests; after a registration).
  void RefreshRegistry();

  void InvalidateJob(int id);
  void InvalidateGroup(int id);
  void Clear();

 private:
  void ListenLoop(const std::stop_token& stop);

  Settings settings_;
  ringwheel::Clock& clock_;
  CatalogSource& source_;
  cronwheel::Mutex mu_;
  std::unordered_map<int, std::shared_ptr<const Job>> jobs_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<int, std::shared_ptr<const JobGroup>> groups_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<std::string>> registry_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, ExecutorClock> run_at_ ABSL_GUARDED_BY(mu_);  // normalised address -> clock
  std::jthread listener_;
  std::unique_ptr<PeriodicTask> registry_task_;
};

}  // namespace cronwheel::admin
