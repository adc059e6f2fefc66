#pragma once
// The settings of one admin process: every key of cronwheel-admin's TOML file, environment and flags
// (cronwheel/config.hpp), with its default, unit and range. `cronwheel-admin --help` lists them.
//
// Plain values; Declare and Validate run on one thread before the admin starts.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "admin/auth/sso_config.hpp"
#include "admin/dispatch/registry_guard.hpp"
#include "admin/model/result.hpp"
#include "admin/results/callback_service.hpp"
#include "cronwheel/config.hpp"
#include "cronwheel/metrics_endpoint.hpp"

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
  std::chrono::milliseconds scan_offset{500};  // the schedule scan runs this long after each second
  std::chrono::milliseconds misfire_threshold{5000};
  // Ahead-of-time dispatch (docs/architecture.md): hand each second's fires on this long before it, so that
  // executors announcing runAt get them early and start them at the instant (0 = off); only to executors
  // whose clock is within run_ahead_max_clock_offset of the admin's.
  std::chrono::milliseconds run_ahead{0};
  std::chrono::milliseconds run_ahead_max_clock_offset{50};
  int schedule_partitions = 60;  // P of schedule/partitions.hpp; the cluster uses the last value an admin set
  std::chrono::milliseconds executor_timeout{3000};
  int executor_connections = 32;    // requests in flight to one executor (HttpExecutorClient)
  int executor_client_threads = 2;  // threads sending /run and reading the answers (HttpExecutorClient)
  int db_pool_size = 24;
  int http_threads = 32;
  int http_max_connections = 4096;                  // open HTTP connections in all (net::HttpServer)
  int http_max_connections_per_address = 256;       // authenticated ones from one peer address
  int http_max_unauthenticated_connections = 1024;  // unauthenticated ones in all
  int http_max_unauthenticated_connections_per_address = 64;  // ... and from one peer address
  std::chrono::milliseconds shutdown_drain{5000};
  std::chrono::milliseconds startup_timeout{120'000};
  int log_retention_days = 30;
  // Start on a database restored to an earlier point (docs/operations.md, "Backups that restore"): before
  // anything is sent, every fire the restored database shows open for an admin that is not alive is
  // closed without being sent, since it may have run after the restore point (fire_log::CloseAfterRestore).
  bool after_restore = false;
  // The fire output archive (docs/operations.md, "The fire output archive"): bytes of each fire's job log the
  // admin keeps (its head and tail; 0 = no archive), and the /log requests at once that read the logs of
  // executors that do not send them with the callback.
  int output_archive_max_bytes = 1024 * 1024;
  int output_pull_concurrency = 4;
  // Whose logs are read from executors that send none with the result: all, failed (the default: fires that
  // did not succeed) or none (CallbackOutputSettings::Pull).
  std::string output_pull = "failed";
  std::string smtp_url;
  std::string smtp_from = "cronwheel@localhost";
  std::string smtp_user;
  std::string smtp_password;
  bool smtp_starttls = false;
  std::vector<std::string> alarm_webhook_allow;
  // The registration guard (dispatch/registry_guard.hpp): networks executors may be in (empty = any not
  // denied) and networks the admin never sends to.
  std::vector<std::string> registry_allow;
  std::vector<std::string> registry_deny = RegistryGuard::DefaultDeny();
  // Console (auth_service.hpp).
  std::string admin_password;  // password of the user `admin` created at the first start; "" = generate
  std::string web_dir;         // serve web/ from this folder instead of the copy in the binary
  // Single sign-on (auth/sso_config.hpp): the TOML file of OpenID providers and the LDAP directory ("" =
  // none); Validate reads it into `sso`.
  std::string sso_config;
  SsoConfig sso;
  // Session cookie only over HTTPS; unset = on in production mode, off in dev (CookieSecure()).
  std::optional<bool> cookie_secure;
  std::chrono::seconds session_idle{12 * 3600};
  std::chrono::seconds session_max{7 * 24 * 3600};
  // The login throttle (auth/login_throttle.hpp): failures before a wait, the wait's cap, and how long after
  // its last failure (and wait) a key's count is forgotten.
  int login_max_failures = 5;
  std::chrono::seconds login_max_wait{900};
  std::chrono::seconds login_window{300};
  // GET /metrics (cronwheel/metrics_endpoint.hpp): addresses that may read it without credentials, and a
  // bearer token that may ("" = none).
  std::vector<std::string> metrics_allow = DefaultMetricsAllow();
  std::string metrics_token;
  std::vector<std::string> metrics_hosts;  // Host names accepted with access by address (DNS rebinding)

  // Declares every key on `config` (see --help).
  void Declare(ConfigLoader& config);
  // Checks values that depend on each other and fills the derived defaults (node_id, pre_read_count).
  // kInvalid with a message naming the key, the value and what is valid.
  Result<void> Validate();
  // Whether the session cookie is marked Secure: cookie_secure when set, else on in production mode (a
  // console there is expected behind TLS) and off in dev (plain HTTP on loopback).
  [[nodiscard]] bool CookieSecure() const { return cookie_secure.value_or(mode == "production"); }
  // The registration guard of registry_allow, registry_deny and this admin's own listen address (after
  // Validate; reads the host's interfaces when listen is a wildcard). Throws std::invalid_argument for a
  // setting Validate would refuse.
  [[nodiscard]] RegistryGuard MakeRegistryGuard() const;
  // The fire output archive's settings of the callbacks (output_archive_max_bytes, output_pull), validated.
  [[nodiscard]] CallbackOutputSettings CallbackOutput() const;
};

}  // namespace cronwheel::admin
