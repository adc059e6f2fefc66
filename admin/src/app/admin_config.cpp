#include "admin/app/admin_config.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>

#include "admin/model/validation.hpp"
#include "cronwheel/net/address_allow_list.hpp"
#include "cronwheel/net/http_address.hpp"

namespace cronwheel::admin {

void AdminConfig::Declare(ConfigLoader& s) {
  s.AddSecret("dsn", &dsn, "PostgreSQL URI, e.g. postgresql://user:password@127.0.0.1:5432/cronwheel")
      .Add("listen", &listen, "host:port of the console, REST API and executor API")
      .AddSecret("access_token", &access_token,
                 "token executors and the admin present to each other (XXL-JOB-ACCESS-TOKEN); required in "
                 "production")
      .Add("node_id", &node_id,
           "this admin's name in the cluster (default <hostname>-<port>); unique per admin")
      .Add("mode", &mode, "production (refuses to run without an access token) or dev")
      .Add("after_restore", &after_restore,
           "start on a database restored from a backup to an earlier point: fires it shows open for admins "
           "that are not alive are closed unsent (they may have run after that point); give it to the first "
           "admin started on the restored database (docs/operations.md, Backups that restore)")
      .Add("fast_pool_threads", &fast_pool_threads, "threads of the fast trigger pool", 1, 2000)
      .Add("slow_pool_threads", &slow_pool_threads, "threads of the slow trigger pool", 1, 2000)
      .Add("pre_read_count", &pre_read_count, "jobs read per scan; 0 = (fast + slow threads) * 10", 0,
           1'000'000)
      .Add("pre_read_ms", &pre_read, "how far ahead each scan reads due jobs",
           std::chrono::milliseconds(1000), std::chrono::milliseconds(60'000))
      .Add("scan_offset_ms", &scan_offset,
           "where in each second the schedule scan runs, after the second's start: away from the burst of "
           "fires sent at the second (XXL-JOB scans at the second itself: 0)",
           std::chrono::milliseconds(0), std::chrono::milliseconds(999))
      .Add("schedule_partitions", &schedule_partitions,
           "schedule partitions of the cluster (a job belongs to partition job id mod this); admins scan "
           "their "
           "share in parallel. Give every admin the same value: the last one started resizes the table",
           1, 1024)
      .Add("misfire_threshold_ms", &misfire_threshold, "a fire later than this is a misfire",
           std::chrono::milliseconds(1000), std::chrono::milliseconds(3'600'000))
      .Add("run_ahead_ms", &run_ahead,
           "send each fire this long before its instant to executors that announce they hold fires until "
           "their instant (cronwheel-executor), which start them then on their own timer; other executors "
           "(XXL-JOB's) still get each fire at its instant. 0 = every fire at its instant; 800 is the usual "
           "value (1000 sends a second's fires as the second before starts its own). Below pre_read_ms less "
           "1000",
           std::chrono::milliseconds(0), std::chrono::milliseconds(59'000))
      .Add("run_ahead_max_clock_offset_ms", &run_ahead_max_clock_offset,
           "fires go ahead of time only to executors whose clock, measured with each heartbeat, is within "
           "this of the admin's; others get them at their instant",
           std::chrono::milliseconds(1), std::chrono::milliseconds(10'000))
      .Add("executor_timeout_ms", &executor_timeout, "connect and read timeout of requests to executors",
           std::chrono::milliseconds(100), std::chrono::milliseconds(60'000))
      .Add("executor_connections", &executor_connections,
           "connections, and so requests in flight, to one executor at a time; more wait for a free "
           "connection (until the fire's misfire threshold). Connections stay open across bursts while the "
           "executor keeps them (its Keep-Alive timeout, learned); new ones open as fast as the executor "
           "answers them, slowing down only on evidence that it does not keep up (docs/architecture.md, "
           "Delivery to executors). An executor "
           "that serves a thread per connection (XXL-JOB's, cpp-httplib's) needs admins x this threads",
           1, 1000)
      .Add("executor_client_threads", &executor_client_threads,
           "threads that send /run to executors and read their answers, event-driven (no thread waits for "
           "an executor); each runs its share of executor_connections",
           1, 64)
      .Add("db_pool_size", &db_pool_size, "PostgreSQL connections", 4, 500)
      .Add("http_threads", &http_threads, "threads running HTTP handlers (connections are read without one)",
           2, 1000)
      .Add("http_max_connections", &http_max_connections,
           "open HTTP connections in all; a new one beyond closes a connection without credentials, or is "
           "answered 503 and closed when all have them (docs/security.md)",
           16, 1'000'000)
      .Add("http_max_connections_per_address", &http_max_connections_per_address,
           "open authenticated HTTP connections (a request on them carried an executor token, a session or "
           "an API token) from one peer address; a proxy in front counts as one address",
           1, 1'000'000)
      .Add("http_max_unauthenticated_connections", &http_max_unauthenticated_connections,
           "open HTTP connections without credentials (yet) in all; a new one beyond closes the idle-longest "
           "of the address holding the most",
           16, 1'000'000)
      .Add("http_max_unauthenticated_connections_per_address",
           &http_max_unauthenticated_connections_per_address,
           "open HTTP connections without credentials (yet) from one peer address; a new one beyond closes "
           "that address's idle-longest",
           1, 1'000'000)
      .Add("shutdown_drain_ms", &shutdown_drain,
           "at shutdown with no other admin alive, keep sending for this long", std::chrono::milliseconds(0),
           std::chrono::milliseconds(60'000))
      .Add("startup_timeout_ms", &startup_timeout,
           "how long to wait for PostgreSQL at start before giving up", std::chrono::milliseconds(0),
           std::chrono::milliseconds(3'600'000))
      .Add("log_retention_days", &log_retention_days, "fires older than this are deleted; below 3 = keep all",
           0, 36500)
      .Add(
          "output_archive_max_bytes", &output_archive_max_bytes,
          "bytes of each ended fire's job log the admin keeps in PostgreSQL (compressed), so that it "
          "outlives "
          "the executor: a longer log keeps its head and tail around a line saying how much was left out. "
          "cronwheel-executor sends the log with the result; other executors' logs are read from their /log. "
          "0 = no archive (the output is read from the executor only); else 1024 to 67108864",
          0, 64 * 1024 * 1024)
      .Add("output_pull", &output_pull,
           "whose job logs the archive reads from executors that do not send them with the result "
           "(XXL-JOB's): "
           "all, failed (fires that did not succeed; each pull is an HTTP exchange and a database row, which "
           "at thousands of fires a second costs the admin and PostgreSQL about a third more per fire) or "
           "none")
      .Add("output_pull_concurrency", &output_pull_concurrency,
           "/log requests at once that read the job logs of executors that do not send them with the result "
           "(XXL-JOB's), for the archive",
           1, 64)
      .Add("smtp_url", &smtp_url,
           "SMTP server for alarm e-mail, e.g. smtp://mail:25 or smtps://mail:465; empty = off")
      .Add("smtp_from", &smtp_from, "sender address of alarm e-mail")
      .Add("smtp_user", &smtp_user, "SMTP user name (empty = no login)")
      .AddSecret("smtp_password", &smtp_password, "SMTP password")
      .Add("smtp_starttls", &smtp_starttls, "require STARTTLS on smtp:// servers")
      .Add("alarm_webhook_allow", &alarm_webhook_allow,
           "URL prefixes a job's alarm webhook must be under (none = webhooks off), e.g. "
           "https://hooks.example.com/alerts: the same scheme, host and port (the scheme's default when "
           "not given) and a path at or below the prefix's, at a '/'")
      .Add("registry_allow", &registry_allow,
           "networks (CIDR) executor addresses may be in, checked at registration and when the admin "
           "connects, e.g. 10.0.0.0/8,fd00::/8; empty = any network registry_deny does not name")
      .Add("registry_deny", &registry_deny,
           "networks (CIDR) the admin never sends requests to, whatever registry_allow says (the cloud "
           "metadata service's link-local networks, and 0.0.0.0/8 and ::/128, which reach this host); the "
           "admin's own listen address is always refused")
      .AddSecret(
          "admin_password", &admin_password,
          "password of the console user 'admin', created at the first start only (when no user exists); "
          "empty = generate one and print it once")
      .Add("web_dir", &web_dir,
           "serve the console from this folder (development); empty = the copy in the binary")
      .Add("sso_config", &sso_config,
           "TOML file of single sign-on: OpenID Connect providers and an LDAP directory, with the rules "
           "mapping "
           "their groups to roles (docs/operations.md, \"Single sign-on\"); empty = local passwords only")
      .Add("cookie_secure", &cookie_secure,
           "mark the session cookie Secure, so that browsers send it over HTTPS only; turn it off only for a "
           "console served over plain HTTP on a trusted network",
           "true in production mode, false in dev")
      .Add("session_idle_s", &session_idle, "a console session ends after this long without a request",
           std::chrono::seconds(60), std::chrono::seconds(30 * 24 * 3600))
      .Add("session_max_s", &session_max, "a console session ends this long after login",
           std::chrono::seconds(60), std::chrono::seconds(365 * 24 * 3600))
      .Add("login_max_failures", &login_max_failures,
           "failed logins of a client address, or of a user name from addresses the user has not signed in "
           "from, before each further attempt waits (429): 1 s, doubling with each further failure, up to "
           "login_max_wait_s",
           1, 1000)
      .Add("login_max_wait_s", &login_max_wait, "the longest wait after failed logins",
           std::chrono::seconds(1), std::chrono::seconds(24 * 3600))
      .Add("login_window_s", &login_window,
           "failed logins of an address or user name are forgotten this long after the last one and its wait",
           std::chrono::seconds(1), std::chrono::seconds(24 * 3600))
      .Add("metrics_allow", &metrics_allow,
           "IP addresses and CIDR ranges that may read GET /metrics without credentials, e.g. "
           "127.0.0.1/8,::1,10.0.0.0/8; empty = none")
      .AddSecret("metrics_token", &metrics_token,
                 "bearer token that may read GET /metrics from any address (Authorization: Bearer <token>); "
                 "empty = none")
      .Add("metrics_hosts", &metrics_hosts,
           "host names a request allowed by metrics_allow may name in its Host header besides IP addresses "
           "and localhost, e.g. admin-1 when Prometheus scrapes by that name (a guard against DNS "
           "rebinding); empty = none");
}

Result<void> AdminConfig::Validate() {
  if (dsn.empty()) return Error::Invalid("dsn is empty: set CRONWHEEL_DSN or --dsn (a postgresql:// URI)");
  if (mode != "production" && mode != "dev")
    return Error::Invalid(fmt::format("mode '{}' is not valid: use production or dev", mode));
  if (mode == "production" && access_token.empty()) {
    return Error::Invalid(
        "access_token is empty: production mode refuses to run without one (XXL-JOB's default token is a "
        "known "
        "hole). Set CRONWHEEL_ACCESS_TOKEN to a long random secret (e.g. `openssl rand -hex 32`) and give "
        "the "
        "executors the same one, or use --mode dev on a private machine");
  }
  const auto address = net::ParseHostPort(listen);
  if (!address.ok()) return Error::Invalid(fmt::format("listen {}", std::string(address.status().message())));
  if (node_id.empty()) {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) std::snprintf(name, sizeof name, "admin");
    node_id = fmt::format("{}-{}", name, address->port);
  }
  if (node_id.size() > 100) return Error::Invalid("node_id must be at most 100 characters");
  if (!sso_config.empty()) {
    auto loaded = LoadSsoConfig(sso_config, mode == "dev");
    if (!loaded) return Error::Invalid(fmt::format("sso_config: {}", loaded.error().message));
    sso = *std::move(loaded);
  }
  if (!admin_password.empty()) {
    if (auto ok = CheckPasswordPolicy(admin_password); !ok)
      return Error::Invalid(fmt::format("admin_password {}", ok.error().message));
  }
  if (const auto allow = net::AddressAllowList::Parse(metrics_allow); !allow.ok()) {
    return Error::Invalid(fmt::format("metrics_allow {}", std::string(allow.status().message())));
  }
  if (const absl::Status hosts = MetricsEndpoint::CheckHostNames(metrics_hosts); !hosts.ok()) {
    return Error::Invalid(std::string(hosts.message()));
  }
  if (auto ok = CheckWebhookAllow(alarm_webhook_allow); !ok) return ok;
  if (auto guard = RegistryGuard::Make({.allow = registry_allow, .deny = registry_deny}); !guard) {
    return guard.error();
  }
  // The scan runs once a second (at scan_offset) and writes what is due within pre_read: a fire must be in
  // the ring a whole second before it is handed on.
  if (run_ahead.count() > 0 && run_ahead + std::chrono::seconds(1) > pre_read) {
    return Error::Invalid(fmt::format(
        "run_ahead_ms {} is not valid with pre_read_ms {}: it must be at most pre_read_ms - 1000 ({}), or 0",
        run_ahead.count(), pre_read.count(), pre_read.count() - 1000));
  }
  if (output_archive_max_bytes != 0 && output_archive_max_bytes < 1024) {
    return Error::Invalid(
        fmt::format("output_archive_max_bytes {} is not valid: use 0 (no archive) or 1024 to 67108864 bytes",
                    output_archive_max_bytes));
  }
  if (output_pull != "all" && output_pull != "failed" && output_pull != "none") {
    return Error::Invalid(fmt::format("output_pull '{}' is not valid: use all, failed or none", output_pull));
  }
  if (pre_read_count == 0) pre_read_count = (fast_pool_threads + slow_pool_threads) * 10;
  return {};
}

CallbackOutputSettings AdminConfig::CallbackOutput() const {
  using Pull = CallbackOutputSettings::Pull;
  return {.max_bytes = static_cast<std::size_t>(output_archive_max_bytes),
          .pull = output_pull == "all"    ? Pull::kAll
                  : output_pull == "none" ? Pull::kNone
                                          : Pull::kFailed};
}

RegistryGuard AdminConfig::MakeRegistryGuard() const {
  const auto address = net::ParseHostPort(listen);
  if (!address.ok()) throw std::invalid_argument("listen " + std::string(address.status().message()));
  auto guard = RegistryGuard::Make({.allow = registry_allow,
                                    .deny = registry_deny,
                                    .self = RegistryGuard::SelfAddresses(*address),
                                    .self_port = address->port});
  if (!guard) throw std::invalid_argument(guard.error().message);
  return std::move(guard).value();
}

}  // namespace cronwheel::admin
