#include "admin/app/admin_app.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <pqxx/pqxx>
#include <stdexcept>

#include "app/admin_app_parts.hpp"

namespace cronwheel::admin {

AdminApp::AdminApp(AdminConfig config, ringwheel::Clock& clock) : config_(std::move(config)), clock_(clock) {}

AdminApp::~AdminApp() {
  Shutdown();
}

void AdminApp::Start() {
  if (auto valid = config_.Validate(); !valid) throw std::invalid_argument(valid.error().message);
  // PostgreSQL may not be up yet (a cluster starting, a database restart): wait for it, within bounds.
  const auto give_up = clock_.SteadyNow() + config_.startup_timeout;
  std::stop_source never;
  ThrottledLog waiting(std::chrono::seconds(5));
  for (;;) {
    try {
      PgPool bootstrap({.dsn = config_.dsn, .size = 1});
      auto conn = bootstrap.Acquire();
      const auto report = ApplyMigrations(*conn, BuiltInMigrations(), clock_.NowMs());
      spdlog::info("database schema at version {} ({} migration(s) applied now)", report.schema_version,
                   report.applied);
      // The days of fires the scheduler is about to write (the report monitor keeps them two days ahead).
      log_partitions::Ensure(*conn, clock_.NowMs());
      if (const int before = ResizeSchedulePartitions(*conn, config_.schedule_partitions);
          before != config_.schedule_partitions) {
        spdlog::info("schedule partitions: {} (were {})", config_.schedule_partitions, before);
      }
      if (config_.after_restore) {
        pqxx::work tx(*conn);
        const auto closed = fire_log::CloseAfterRestore(tx, clock_.NowMs());
        tx.commit();
        spdlog::warn(
            "after_restore: closed {} unsent fire(s) as SKIPPED and {} running fire(s) as failed with an "
            "unknown result: the restored database cannot tell whether they ran after its restore point, "
            "so none is sent again (docs/operations.md, Backups that restore)",
            closed.unsent, closed.running);
      }
      break;
    } catch (const pqxx::broken_connection& e) {
      if (clock_.SteadyNow() >= give_up) throw;
      if (const auto n = waiting.Failure(clock_.SteadyNow())) {
        spdlog::warn("waiting for PostgreSQL ({} attempt(s) so far): {}", *n, e.what());
      }
      clock_.WaitFor(std::chrono::milliseconds(500), never.get_token());
    }
  }
  parts_ = std::make_unique<Parts>(config_, clock_);
  auto& p = *parts_;
  if (const auto created = p.auth.EnsureAdminUser(config_.admin_password)) {
    if (config_.admin_password.empty()) {
      spdlog::warn("created user admin with password {} (shown this once: log in and change it)", *created);
    } else {
      spdlog::info("created user admin with the password from admin_password");
    }
  }
  p.WatchParts();
  // GET /metrics: the allowed addresses, the metrics token, or a signed-in console administrator.
  p.metrics_endpoint = std::make_unique<MetricsEndpoint>(
      p.metrics_registry,
      MetricsEndpoint::Settings{
          .allow = config_.metrics_allow, .token = config_.metrics_token, .hosts = config_.metrics_hosts},
      xxljob::TokenMatches, [&p](const net::Request& req) {
        const auto who = p.auth.Authenticate(req);
        return who && who->admin;
      });
  // The executor registry is read before the first fire can be sent: a restarted admin sends the fires it
  // takes back (lease.Start) at once, and with the registry's first periodic read still running they found
  // no executor online and failed (seen in the kill test on a loaded machine).
  try {
    p.catalog.RefreshRegistry();
  } catch (const std::exception& e) {
    spdlog::warn("reading the executor registry at start failed (it is read again each second): {}",
                 e.what());
  }
  p.lease.Start();
  p.scheduler.Start();
  p.StartMonitors();
  const auto address = net::ParseHostPort(config_.listen).value();
  p.api = std::make_unique<ApiServer>(
      ApiServer::Settings{
          .host = address.host,
          .port = address.port,
          .threads = config_.http_threads,
          .access_token = config_.access_token,
          .node_id = config_.node_id,
          .max_connections = static_cast<std::size_t>(config_.http_max_connections),
          .max_connections_per_address = static_cast<std::size_t>(config_.http_max_connections_per_address),
          .max_unauthenticated_connections =
              static_cast<std::size_t>(config_.http_max_unauthenticated_connections),
          .max_unauthenticated_connections_per_address =
              static_cast<std::size_t>(config_.http_max_unauthenticated_connections_per_address),
          .webhook_allow = config_.alarm_webhook_allow},
      ApiServer::Services{
          .groups = p.groups,
          .jobs = p.jobs,
          .logs = p.logs,
          .scheduler = p.scheduler,
          .catalog = p.catalog,
          .registry = p.registry,
          .callbacks = p.callbacks,
          .authenticator = p.auth,
          .health_details =
              [&p] {
                const auto s = p.scheduler.stats();
                const auto t = p.pools.stats();
                return nlohmann::json{{"scheduler",
                                       {{"scans", s.scans},
                                        {"scan_errors", s.scan_errors},
                                        {"fires_written", s.fires_written},
                                        {"fires_skipped", s.fires_skipped},
                                        {"fires_dispatched", s.fires_dispatched},
                                        {"ring_size", s.ring_size},
                                        {"unclaimed", s.unclaimed}}},
                                      {"trigger_pools",
                                       {{"sent_fast", t.sent_fast},
                                        {"sent_slow", t.sent_slow},
                                        {"rejected", t.rejected},
                                        {"queued", t.queued_fast + t.queued_slow}}}};
              },
          .console = &p.console,
          .metrics = p.metrics_endpoint.get(),
          .executor_api_metrics = &p.executor_api_metrics,
          .alert_channels = &p.alert_channels,
          .alarms = &p.metered_alarms,
          .calendars = &p.calendars,
          .workflows = &p.workflows,
          .send_again = [&p](std::vector<Fire> fires) { p.pools.Dispatch(std::move(fires)); },
          .write_trigger_results = [&p] { p.writer.Flush(); },
      },
      clock_);
  if (!p.api->Start()) throw std::runtime_error(fmt::format("cannot listen on {}", config_.listen));
  p.started = true;
  spdlog::info("cronwheel-admin {} listening on http://{}:{} ({} mode)", config_.node_id, address.host,
               p.api->port(), config_.mode);
  if (config_.mode == "production" && !config_.CookieSecure()) {
    spdlog::warn(
        "cookie_secure is off: browsers send the console's session cookie over plain HTTP too "
        "(keep it off only on a network you trust; docs/operations.md)");
  }
}

int AdminApp::port() const {
  return parts_ && parts_->api ? parts_->api->port() : 0;
}

void AdminApp::Shutdown() {
  if (!parts_ || parts_->stopped) return;
  auto& p = *parts_;
  p.stopped = true;
  spdlog::info("shutting down");
  p.scheduler.StopScanning();
  p.tasks.clear();  // monitors stop
  bool hand_over = true;
  try {
    hand_over = p.lease.AnotherNodeAlive();
  } catch (const std::exception& e) {
    spdlog::warn("cannot tell whether another admin is alive ({}); handing over", e.what());
  }
  if (!hand_over && p.scheduler.ring_size() > 0) {
    // Alone: send what comes due within the drain time.
    const auto deadline = clock_.SteadyNow() + config_.shutdown_drain;
    std::stop_source never;
    while (p.scheduler.ring_size() > 0 && clock_.SteadyNow() < deadline) {
      clock_.WaitFor(std::chrono::milliseconds(100), never.get_token());
    }
  }
  if (p.api) p.api->Stop();
  p.scheduler.Stop();
  std::vector<std::int64_t> left;
  for (const auto& f : p.scheduler.TakeRing())
    left.push_back(f.log_id);
  for (const auto& unrun : p.wheel.Stop())
    (void)unrun;                                   // pending retries stay pending rows: handed over below
  if (p.ahead_timer) (void)p.ahead_timer->Stop();  // checks of fires held: their executors run them
  if (p.ahead_watch) p.ahead_watch->Stop();
  p.pools.Drain();
  p.writer.Flush();
  try {
    const auto n = p.lease.HandOver(left);
    if (n > 0) spdlog::info("handed over {} pending fire(s) to the other admins", n);
  } catch (const std::exception& e) {
    spdlog::warn("hand-over failed ({}); the other admins will take this node's fires when its lease expires",
                 e.what());
  }
  p.writer.Stop();
  spdlog::info("stopped");
}

}  // namespace cronwheel::admin
