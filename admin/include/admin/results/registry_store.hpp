#pragma once
// What the executor registry (results/registry_service.hpp) needs from the database: the interface the
// results area owns, implemented on PostgreSQL by PgRegistryStore (admin/store/pg_registry_store.hpp, the
// one writer of executor_registry) and by fakes in tests. The rules (address normalisation, the registration
// guard, the dead-after cut-off, the token cache) are RegistryService's; each method is one statement.
//
// Instants are epoch milliseconds. Thread-safety: implementations are called from any thread at once.
// Errors: infrastructure failures throw (DatabaseUnavailable when the database cannot be reached).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cronwheel::admin {

// One executor_registry row: XXL-JOB's registryGroup ("EXECUTOR"), registryKey (the app name) and
// registryValue (the executor's address, already normalised by the caller); and what a cronwheel-executor's
// heartbeat adds: whether it takes fires ahead of their instant, and its clock offset as it measured it
// (ms, its clock minus the admin's, within +- clock_error_ms; nullopt until measured).
struct RegistryEntry {
  std::string group;
  std::string key;
  std::string value;
  bool run_at = false;
  std::optional<std::int64_t> clock_offset_ms;
  std::int64_t clock_error_ms = 0;
};

class RegistryStore {
 public:
  virtual ~RegistryStore() = default;
  // Inserts the entry or, when it exists, sets its updated_ms to `now_ms` (and its run_at and offset).
  virtual void Upsert(const RegistryEntry& entry, std::int64_t now_ms) = 0;
  // Deletes the entry; nothing when there is none.
  virtual void Remove(const RegistryEntry& entry) = 0;
  // Deletes the entries last renewed before `updated_before_ms`; returns how many.
  virtual std::size_t RemoveNotRenewedSince(std::int64_t updated_before_ms) = 0;
  // The access token of the executor group whose app name is `app_name`; nullopt when it has none or there
  // is no such group.
  virtual std::optional<std::string> GroupToken(const std::string& app_name) = 0;
  // Every executor group's own access token (groups without one are left out). O(groups).
  virtual std::vector<std::string> GroupTokens() = 0;
};

}  // namespace cronwheel::admin
