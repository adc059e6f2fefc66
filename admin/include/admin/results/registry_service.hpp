#pragma once
// The executor registry (docs/xxl-job-protocol.md §3 "Heartbeat and registration"): executors call
// /api/registry every 30 s and /api/registryRemove when they stop. A heartbeat upserts (registry_group,
// registry_key, registry_value) with `updated_ms` = now (registryValue normalised, so "http://h:1" and
// "http://h:1/" are one executor); a removal deletes it; ExpireDead deletes registrations not renewed within
// `dead_after` (90 s, XXL-JOB's DEAD_TIMEOUT). Routing reads the live registry through JobCatalog.
//
// A heartbeat naming an address the registration guard refuses (dispatch/registry_guard.hpp: settings
// registry_allow and registry_deny, the admin's own address) stores nothing and says why (issue 21).
//
// The rows are the store's (results/registry_store.hpp; PgRegistryStore on PostgreSQL, fakes in the unit
// tests); the rules are here.
//
// Thread-safety: safe from any thread (the store is; the token cache is under its own mutex).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/dispatch/registry_guard.hpp"
#include "admin/model/result.hpp"
#include "admin/results/registry_store.hpp"
#include "cronwheel/mutex.hpp"
#include "ringwheel/clock.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::admin {

class RegistryService {
 public:
  RegistryService(ringwheel::Clock& clock, RegistryStore& store,
                  std::chrono::milliseconds dead_after = std::chrono::seconds(90),
                  RegistryGuard guard = RegistryGuard());
  // Stores the heartbeat; Error::Forbidden, naming the address and the setting, when the guard refuses it.
  Result<void> Register(const xxljob::RegistryParam& p);
  void Remove(const xxljob::RegistryParam& p);
  // The admin's clock (epoch ms), answered to a registration that announced runAt, from which the executor
  // measures its clock offset (xxljob::kRegistryClockField).
  [[nodiscard]] std::int64_t ClockMs() const;
  // Deletes registrations not renewed within dead_after; returns how many.
  std::size_t ExpireDead();
  // The access token executors of `app_name` must present: the group's own, else nullopt (use the global).
  std::optional<std::string> GroupToken(const std::string& app_name);
  // Whether `token` is one an executor may present at all: `global_token`, or any group's own token. The
  // executor API asks this before it reads a request's body (the exact rule, which needs the body, follows).
  // Group tokens are cached for a second, and read again at most every 100 ms while a token misses, so a
  // flood of wrong tokens costs the database ten small queries a second. Constant-time comparisons.
  bool KnownToken(std::string_view token, const std::string& global_token);

 private:
  ringwheel::Clock& clock_;
  RegistryStore& store_;
  std::chrono::milliseconds dead_after_;
  cronwheel::Mutex tokens_mu_;
  std::vector<std::string> group_tokens_ ABSL_GUARDED_BY(tokens_mu_);
  std::int64_t tokens_read_ms_ ABSL_GUARDED_BY(tokens_mu_) = INT64_MIN / 2;
  RegistryGuard guard_;
};

}  // namespace cronwheel::admin
