#pragma once
// One admin process: its settings, and the wiring of every part (database pool, migrations, node lease,
// scheduler, trigger pools, log writer, catalog, executor client, monitors, HTTP API). main.cpp parses
// settings into AdminConfig (app/admin_config.hpp) and runs AdminApp; tests can run one in-process.
//
// Start order: pool -> migrations (advisory-locked) -> catalog -> writer -> pools -> scheduler (not yet
// running) -> node lease (takes back this node's own pending fires) -> scheduler threads -> monitors ->
// HTTP. The first start also creates the console user `admin` (admin_password, or a generated password
// printed once). Shutdown (SIGTERM), within a few seconds: stop the HTTP server's new work, stop scanning,
// then either hand over what is in the ring to the live admins (if any), or send it as it comes due for at
// most `shutdown_drain`; finish in-flight triggers, flush results, release the lease.
//
// Thread-safety: Start/Shutdown from one thread.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "admin/app/admin_config.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class AdminApp final {
 public:
  AdminApp(AdminConfig config, ringwheel::Clock& clock);
  ~AdminApp();
  AdminApp(const AdminApp&) = delete;
  AdminApp& operator=(const AdminApp&) = delete;

  // Starts everything; throws with a message saying what failed (database unreachable, port in use,
  // node id in use).
  void Start();
  // Orderly stop (idempotent).
  void Shutdown();
  // The HTTP port (after Start; useful with listen port 0).
  [[nodiscard]] int port() const;

 private:
  struct Parts;
  AdminConfig config_;
  ringwheel::Clock& clock_;
  std::unique_ptr<Parts> parts_;
};

}  // namespace cronwheel::admin
