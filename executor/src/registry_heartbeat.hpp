#pragma once
// Registration with the admins (docs/xxl-job-protocol.md §3 "Heartbeat and registration"): every `interval`
// (default 30 s, on a PeriodicTask on the injected Clock) POST /api/registry
// {"registryGroup":"EXECUTOR","registryKey":<app name>, "registryValue":<advertised address>} to the admins
// in order, stopping at the first that answers 200; on Stop(), /api/registryRemove the same way (once), so
// the admin stops routing here before the job threads stop. A failure is logged when the state changes (not
// every beat), then at most once per `interval` as a warning.
//
// Thread-safety: Start/Stop from one thread. Lifetime: the admin client must outlive it.

#include <chrono>
#include <memory>
#include <string>

#include "admin_client.hpp"
#include "cronwheel/periodic_task.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::executor {

class RegistryHeartbeat final {
 public:
  struct Settings {
    std::string app_name;  // registryKey
    std::string address;   // registryValue, e.g. "http://10.0.0.5:9999/"
    std::chrono::seconds interval{30};
  };
  RegistryHeartbeat(Settings settings, AdminClient& admin, ringwheel::Clock& clock);
  ~RegistryHeartbeat();
  RegistryHeartbeat(const RegistryHeartbeat&) = delete;
  RegistryHeartbeat& operator=(const RegistryHeartbeat&) = delete;

  void Start();
  // Stops beating and sends registryRemove (only if Start() ran).
  void Stop();

 private:
  void Beat();

  Settings settings_;
  AdminClient& admin_;
  ringwheel::Clock& clock_;
  bool registered_once_ = false;
  bool failing_ = false;
  std::unique_ptr<PeriodicTask> task_;
};

}  // namespace cronwheel::executor
