#pragma once
// Registration with the admins (docs/xxl-job-protocol.md §3 "Heartbeat and registration"): every `interval`
// (default 30 s, give or take a tenth drawn at random so that executors started together do not beat in step;
// on a PeriodicTask on the injected Clock) POST /api/registry
// {"registryGroup":"EXECUTOR","registryKey":<app name>, "registryValue":<advertised address>} to the admins
// in order, stopping at the first that answers 200; on Stop(), /api/registryRemove the same way (once), so
// the admin stops routing here before the job threads stop. A failure is logged when the state changes (not
// every beat), then at most once per `interval` as a warning.
//
// Ahead-of-time dispatch (cronwheel's extension, docs/architecture.md): each heartbeat announces runAt (this
// executor starts a /run carrying runAtMs at that instant) and its clock offset against the admin's, measured
// as NTP's client does with one exchange: a cronwheel admin answers with its clock
// (xxljob::kRegistryClockField); the offset is that against the midpoint of the request's round trip, and the
// error bound half the round trip (rounded up) plus 1 ms for the two clocks' millisecond truncation. Each
// heartbeat sends the best of the recent measurements (ClockFilter: the least error, aged, dropping those a
// clock step made wrong); the first measurement is sent at once by a second heartbeat, so an admin can send
// fires ahead within a second of the executor's start. An XXL-JOB admin answers no clock: nothing is
// measured, nothing sent.
//
// Thread-safety: Start/Stop from one thread. Lifetime: the admin client must outlive it.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "admin_client.hpp"
#include "clock_filter.hpp"
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
  // Reads the admin's clock from an accepted heartbeat's answer into clocks_; false when it has none (an
  // XXL-JOB admin).
  bool Measure(const AdminReply& reply, std::int64_t sent_ms, std::int64_t answered_ms);

  Settings settings_;
  AdminClient& admin_;
  ringwheel::Clock& clock_;
  bool registered_once_ = false;
  bool failing_ = false;
  // The measurements of this executor's clock against the admin's (PeriodicTask thread only).
  ClockFilter clocks_;
  bool measured_ = false;
  std::unique_ptr<PeriodicTask> task_;
};

}  // namespace cronwheel::executor
