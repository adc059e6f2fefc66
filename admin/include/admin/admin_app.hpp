#pragma once
// One admin process: its settings, and the wiring of every part (database pool, migrations, node lease,
// scheduler, trigger pools, log writer, catalog, executor client, monitors, HTTP API). main.cpp parses
// settings into AdminConfig and runs AdminApp; tests can run one in-process.
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

#include "cronwheel/config.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

struct AdminConfig {
  std::string dsn;
  std::string listen = "127.0.0.1:8080";
  std::string access_token;
  std::string node_id;              // default: "<hostname>-<port>", stable across restarts on one host
  std::string mode = "production";  // production | dev
  int fast_pool_threads = 200;
  int slow_pool_threads = 100;
  int pre_read_count = 0;  // 0 = (fast + slow) * 10, as XXL-JOB 3.3+
  std::chrono::milliseconds pre_read{5000};
  std::chrono::milliseconds misfire_threshold{5000};
  std::chrono::milliseconds executor_timeout{3000};
  int executor_connections = 32;  // requests in flight to one executor (HttpExecutorClient)
  int db_pool_size = 24;
  int http_threads = 32;
  std::chrono::milliseconds shutdown_drain{5000};
  std::chrono::milliseconds startup_timeout{120'000};
  int log_retention_days = 30;
  std::string smtp_url;
  std::string smtp_from = "cronwheel@localhost";
  std::string smtp_user;
  std::string smtp_password;
  bool smtp_starttls = false;
  std::vector<std::string> alarm_webhook_allow;
  // Console (auth_service.hpp).
  std::string admin_password;  // password of the user `admin` created at the first start; "" = generate
  std::string web_dir;         // serve web/ from this folder instead of the copy in the binary
  bool cookie_secure = false;  // session cookie only over HTTPS (behind a TLS proxy)
  std::chrono::seconds session_idle{12 * 3600};
  std::chrono::seconds session_max{7 * 24 * 3600};
  int login_max_failures = 5;
  std::chrono::seconds login_window{300};

  // Declares every key on `settings` (see --help).
  void Declare(ConfigLoader& config);
  // Checks values that depend on each other. Returns an error message, or "" when valid.
  std::string Validate();
};

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
