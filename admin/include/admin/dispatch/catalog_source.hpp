#pragma once
// Where JobCatalog (dispatch/job_catalog.hpp) loads jobs, groups and the live registry from, and how it
// learns that they changed: the interface dispatch owns, implemented on PostgreSQL by PgCatalogSource
// (admin/store/pg_catalog_source.hpp: tables job, job_group, executor_registry, and LISTEN on the
// 'cronwheel_changes' channel that the tables' triggers notify) and by fakes in tests.
//
// Thread-safety: implementations are called from JobCatalog's threads and the trigger threads at once.
// Errors: infrastructure failures throw.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/model.hpp"

namespace cronwheel::admin {

// An executor's clock against the admin's, as the executor measured it (xxljob::RegistryParam): its clock
// minus the admin's is within offset_ms +- error_ms.
struct ExecutorClock {
  std::int64_t offset_ms = 0;
  std::int64_t error_ms = 0;
  friend bool operator==(const ExecutorClock&, const ExecutorClock&) = default;
};

// The live registry: app name -> the addresses (as registered) of executors heard from since a cut-off; and
// of those that take fires ahead of their instant (their heartbeats announce runAt, docs/architecture.md
// "Ahead-of-time dispatch") and have measured their clock, address -> that clock.
struct RegistrySnapshot {
  std::map<std::string, std::vector<std::string>> apps;
  std::map<std::string, ExecutorClock> run_at;
};

class CatalogSource {
 public:
  virtual ~CatalogSource() = default;

  // The jobs of `ids` that exist (any order).
  virtual std::vector<Job> LoadJobs(std::span<const int> ids) = 0;
  virtual std::optional<JobGroup> LoadGroup(int id) = 0;
  // The executors whose last heartbeat is at or after `since_ms`.
  virtual RegistrySnapshot LoadRegistry(std::int64_t since_ms) = 0;
  // Listens for changes until `stop`: calls `on_listening` once changes are being delivered (what was loaded
  // before may be stale), then `on_change(table, id)` for each changed row of "job" or "job_group". Returns
  // when `stop` is requested; throws when the connection breaks (a change may have been missed).
  virtual void ListenForChanges(const std::function<void()>& on_listening,
                                const std::function<void(std::string_view table, int id)>& on_change,
                                const std::stop_token& stop) = 0;

 protected:
  CatalogSource() = default;
  CatalogSource(const CatalogSource&) = default;
  CatalogSource& operator=(const CatalogSource&) = default;
};

}  // namespace cronwheel::admin
