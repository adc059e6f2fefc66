#include "admin/app/admin_app.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <pqxx/pqxx>
#include <stdexcept>

#include "admin/api/server.hpp"
#include "admin/app/metrics.hpp"
#include "admin/auth/accounts.hpp"
#include "admin/auth/auth_service.hpp"
#include "admin/auth/sso_service.hpp"
#include "admin/dispatch/ahead_watch.hpp"
#include "admin/dispatch/executor_client.hpp"
#include "admin/dispatch/job_catalog.hpp"
#include "admin/dispatch/route_strategies.hpp"
#include "admin/dispatch/trigger_pools.hpp"
#include "admin/dispatch/trigger_service.hpp"
#include "admin/results/alarm.hpp"
#include "admin/results/callback_service.hpp"
#include "admin/results/failure_monitor.hpp"
#include "admin/results/lost_result_monitor.hpp"
#include "admin/results/output_puller.hpp"
#include "admin/results/registry_service.hpp"
#include "admin/results/report_monitor.hpp"
#include "admin/schedule/node_lease.hpp"
#include "admin/schedule/scheduler.hpp"
#include "admin/store/audit_log.hpp"
#include "admin/store/console_repository.hpp"
#include "admin/store/fire_log.hpp"
#include "admin/store/log_partitions.hpp"
#include "admin/store/log_repository.hpp"
#include "admin/store/migrations.hpp"
#include "admin/store/pg_account_store.hpp"
#include "admin/store/pg_alert_channel_store.hpp"
#include "admin/store/pg_calendar_store.hpp"
#include "admin/store/pg_catalog_source.hpp"
#include "admin/store/pg_familiar_addresses.hpp"
#include "admin/store/pg_group_store.hpp"
#include "admin/store/pg_job_store.hpp"
#include "admin/store/pg_lease_store.hpp"
#include "admin/store/pg_pool.hpp"
#include "admin/store/pg_registry_store.hpp"
#include "admin/store/pg_result_store.hpp"
#include "admin/store/pg_scheduler_store.hpp"
#include "admin/store/pg_sso_store.hpp"
#include "admin/store/trigger_result_writer.hpp"
#include "app/metered.hpp"
#include "cronwheel/metrics_endpoint.hpp"
#include "cronwheel/net/http_address.hpp"
#include "cronwheel/periodic_task.hpp"
#include "cronwheel/throttled_log.hpp"
#include "ringwheel/hashed_wheel_timer.hpp"
#include "xxljob/token.hpp"

namespace cronwheel::admin {
struct AdminApp::Parts {
  Parts(const AdminConfig& c, ringwheel::Clock& clock)
      : clock_(clock),
        metrics(metrics_registry),
        guard(std::make_shared<const RegistryGuard>(c.MakeRegistryGuard())),
        pool({.dsn = c.dsn, .size = c.db_pool_size}),
        catalog_source(pool),
        catalog({}, clock, catalog_source),
        writer({}, clock, pool),
        metered_writer(writer, metrics, clock),
        client({.connect_timeout = c.executor_timeout,
                .read_timeout = c.executor_timeout,
                .max_connections_per_origin = static_cast<std::size_t>(c.executor_connections),
                .threads = c.executor_client_threads,
                .guard = guard},
               clock),
        metered_client(client, metrics, clock),
        routers(metered_client),
        store(pool),
        metered_store(store, metrics, clock),
        trigger(
            {.node_id = c.node_id,
             .access_token = c.access_token,
             .misfire_threshold = c.misfire_threshold,
             .max_clock_offset = c.run_ahead_max_clock_offset},
            clock, catalog, metered_client, metered_writer,
            [this](RouteStrategy s) -> Router& { return routers.For(s); }, metered_store,
            [this](Fire f, std::chrono::milliseconds delay) { SendAgain(std::move(f), delay); },
            c.run_ahead.count() > 0
                ? TriggerService::DeferToInstant([this](Fire f) { scheduler.Defer(std::move(f)); })
                : TriggerService::DeferToInstant(),
            c.run_ahead.count() > 0
                ? TriggerService::HeldAhead(
                      [this](const Fire& f, const std::string& address, const std::string& token) {
                        ahead_watch->Held(f, address, token);
                      })
                : TriggerService::HeldAhead()),
        pools({.fast_threads = c.fast_pool_threads, .slow_threads = c.slow_pool_threads}, clock, trigger,
              metered_writer),
        scheduler({.node_id = c.node_id,
                   .pre_read_count = c.pre_read_count,
                   .scan = {.pre_read = c.pre_read, .misfire_threshold = c.misfire_threshold},
                   .scan_offset = c.scan_offset,
                   .run_ahead = c.run_ahead},
                  clock, metered_store, pools),
        lease_store(pool),
        lease({.node_id = c.node_id, .address = c.listen}, clock, lease_store,
              [this](std::vector<ClaimedFire> fires) { SubmitRecovered(std::move(fires)); }),
        group_store(pool),
        groups(clock, group_store),
        alert_channel_store(pool),
        alert_channels(clock, alert_channel_store),
        calendar_store(clock, pool),
        calendars(clock, calendar_store),
        job_store(clock, pool),
        jobs(clock, job_store, {.pre_read = c.pre_read}),
        workflows(clock, pool, {.pre_read = c.pre_read}),
        logs(clock, pool),
        registry_store(pool),
        registry(clock, registry_store, std::chrono::seconds(90), *guard),
        result_store(pool, &writer),
        callbacks(
            clock, result_store, c.node_id, [this](std::vector<Fire> f) { scheduler.Submit(std::move(f)); },
            c.CallbackOutput()),
        outputs({.max_bytes = static_cast<std::size_t>(c.output_archive_max_bytes),
                 .concurrency = c.output_pull_concurrency},
                clock, result_store, metered_client, c.access_token),
        wheel(clock),
        alarms(clock, {.smtp_url = c.smtp_url,
                       .smtp_from = c.smtp_from,
                       .smtp_user = c.smtp_user,
                       .smtp_password = c.smtp_password,
                       .smtp_starttls = c.smtp_starttls,
                       .webhook_allow = c.alarm_webhook_allow,
                       .guard = guard}),
        metered_alarms(alarms, metrics),
        failures({.node_id = c.node_id}, clock, result_store, metered_alarms,
                 [this](Fire f, std::chrono::milliseconds delay) { ScheduleRetry(std::move(f), delay); }),
        lost(clock, result_store, catalog, metered_client, c.access_token),
        report(clock, result_store, c.log_retention_days),
        account_store(pool),
        familiar(pool, PgFamiliarAddresses::KeyFrom(c.access_token), FamiliarSettings{}),
        auth({.session_idle = c.session_idle,
              .session_max = c.session_max,
              .cookie_secure = c.CookieSecure(),
              .throttle = {.max_failures = c.login_max_failures,
                           .max_wait = c.login_max_wait,
                           .forget_after = c.login_window}},
             clock, account_store, &familiar),
        accounts(auth, clock, account_store),
        sso_store(pool),
        sso(c.sso, clock, auth, account_store, sso_store,
            MakeCurlHttpsClient(c.mode == "dev" || c.sso.AnyPlainHttpIssuer(), guard)),
        audit(clock, pool),
        console_store(clock, pool),
        console{.auth = auth,
                .accounts = accounts,
                .audit = audit,
                .store = console_store,
                .executors = metered_client,
                .web_dir = c.web_dir,
                .sso = sso} {
    if (c.run_ahead.count() > 0) {
      // Fires sent ahead are checked before their instant (AheadWatch) on a timer of 10 ms ticks of its own.
      ahead_watch = std::make_unique<AheadWatch>(
          AheadWatch::Settings{}, clock, metered_client,
          [this](std::function<void()> task, std::chrono::milliseconds delay) {
            if (const auto timeout = ahead_timer->NewTimeout(std::move(task), delay); !timeout.ok()) {
              spdlog::warn("the check of fires sent ahead was not armed: {}",
                           std::string(timeout.status().message()));
            }
          },
          [this](Fire f, const std::string& address, bool refused, const std::string& why) {
            trigger.RouteAgain(std::move(f), address, refused, why);
          },
          [this](std::int64_t instant_ms) { return store.WithdrawnAt(std::span(&instant_ms, 1)); });
      ahead_timer = std::make_unique<ringwheel::HashedWheelTimer>(
          clock, ringwheel::HashedWheelTimer::Settings{.tick = std::chrono::milliseconds(10)});
    }
  }

  // A retry waits in the hashed wheel timer for its back-off, then goes to the scheduler like any due fire.
  // If the timer refuses it, the ring holds it instead (it keeps the fire's instant).
  void ScheduleRetry(Fire fire, std::chrono::milliseconds delay) {
    metrics.fires_retried.Inc();
    if (delay.count() > 0) {
      auto f = std::make_shared<Fire>(fire);
      const auto timeout = wheel.NewTimeout([this, f] { scheduler.Submit({*f}); }, delay);
      if (timeout.ok()) return;
      spdlog::warn("retry timer refused fire {} ({}); the time ring keeps it", fire.log_id,
                   std::string(timeout.status().message()));
    }
    scheduler.Submit({std::move(fire)});
  }

  // A fire that could not reach its executor waits in the hashed wheel timer, then goes back to the trigger
  // pools (it is claimed already). If the timer refuses it, it is sent again at once.
  void SendAgain(Fire fire, std::chrono::milliseconds delay) {
    auto f = std::make_shared<Fire>(std::move(fire));
    const auto timeout = wheel.NewTimeout([this, f] { pools.Dispatch({*f}); }, delay);
    if (timeout.ok()) return;
    spdlog::warn("resend timer refused fire {} ({}); sending it again now", f->log_id,
                 std::string(timeout.status().message()));
    pools.Dispatch({*f});
  }

  void StartMonitors() {
    tasks.push_back(std::make_unique<PeriodicTask>(
        PeriodicTask::Settings{.name = "failure monitor", .interval = std::chrono::seconds(1)}, clock_,
        [this] { failures.RunOnce(); }));
    tasks.push_back(std::make_unique<PeriodicTask>(
        PeriodicTask::Settings{.name = "lost-result monitor", .interval = std::chrono::minutes(1)}, clock_,
        [this] { lost.RunOnce(); }));
    tasks.push_back(std::make_unique<PeriodicTask>(
        PeriodicTask::Settings{.name = "registry monitor", .interval = std::chrono::seconds(10)}, clock_,
        [this] { registry.ExpireDead(); }));
    // The fire output archive: the logs of executors that do not send them, and the archive's size.
    tasks.push_back(std::make_unique<PeriodicTask>(
        PeriodicTask::Settings{.name = "output puller", .interval = std::chrono::seconds(1)}, clock_,
        [this] { outputs.RunOnce(); }));
    tasks.push_back(std::make_unique<PeriodicTask>(
        PeriodicTask::Settings{.name = "output archive size", .interval = std::chrono::minutes(1)}, clock_,
        [this] {
          const auto size = console_store.OutputArchiveSize();
          metrics.output_archive_bytes.Set(static_cast<double>(size.bytes));
          metrics.output_archive_rows.Set(static_cast<double>(size.rows));
          metrics.output_pulls_queued.Set(static_cast<double>(size.pulls_queued));
        }));
    tasks.push_back(
        std::make_unique<PeriodicTask>(PeriodicTask::Settings{.name = "report monitor",
                                                              .interval = std::chrono::minutes(1),
                                                              .first_delay = std::chrono::seconds(5)},
                                       clock_, [this] { report.RunOnce(); }));
    tasks.push_back(std::make_unique<PeriodicTask>(
        PeriodicTask::Settings{.name = "metrics refresher", .interval = std::chrono::seconds(15)}, clock_,
        [this] {
          metrics.jobs_enabled.Set(static_cast<double>(console_store.EnabledJobs()));
          const auto runs = console_store.WorkflowRunsByState(clock_.NowMs() - std::int64_t{86'400'000});
          for (const char* state : {"RUNNING", "SUCCESS", "FAILED", "KILLED", "SKIPPED"}) {
            const auto it = runs.find(state);
            metrics.workflow_runs.Labels({state}).Set(it == runs.end() ? 0.0
                                                                       : static_cast<double>(it->second));
          }
        }));
  }

  // The gauges read at scrape time, once every part they read exists.
  void WatchParts() {
    metrics.WatchScheduler(scheduler);
    metrics.WatchTriggerPools(pools);
    metrics.WatchPgPool(pool);
    metrics.WatchExecutorConnections(client);
    metrics.WatchExecutors(catalog);
    metrics.WatchOutputPuller(outputs);
  }

  void SubmitRecovered(std::vector<ClaimedFire> claimed) {
    std::vector<Fire> fires;
    fires.reserve(claimed.size());
    for (auto& c : claimed)
      fires.push_back(FireFromRecovered(std::move(c)));
    scheduler.Submit(std::move(fires));
  }

  ringwheel::Clock& clock_;
  metrics::Registry metrics_registry;
  AdminMetrics metrics;
  const ExecutorApiMetrics executor_api_metrics = metrics.ForExecutorApi();
  std::shared_ptr<const RegistryGuard> guard;  // where the admin sends: registry, executors, alarms, OpenID
  PgPool pool;
  PgCatalogSource catalog_source;
  JobCatalog catalog;
  TriggerResultWriter writer;
  MeteredTriggerRecorder metered_writer;
  std::unique_ptr<AheadWatch> ahead_watch;  // with run_ahead only (see ahead_timer)
  HttpExecutorClient client;
  MeteredExecutorClient metered_client;
  RouterSet routers;
  PgSchedulerStore store;
  MeteredSchedulerStore metered_store;
  TriggerService trigger;
  TriggerPools pools;
  Scheduler scheduler;
  PgLeaseStore lease_store;
  NodeLease lease;
  PgGroupStore group_store;
  GroupService groups;
  PgAlertChannelStore alert_channel_store;
  AlertChannelService alert_channels;
  PgCalendarStore calendar_store;
  CalendarService calendars;
  PgJobStore job_store;
  JobService jobs;
  WorkflowRepository workflows;
  LogRepository logs;
  PgRegistryStore registry_store;
  RegistryService registry;
  PgResultStore result_store;
  CallbackService callbacks;
  OutputPuller outputs;
  ringwheel::HashedWheelTimer wheel;
  // With run_ahead only. Destroyed before the executor client (its tasks use the client); the watch is
  // declared before the client, so it outlives it (the client's last answers, as it stops, reach the watch).
  std::unique_ptr<ringwheel::HashedWheelTimer> ahead_timer;
  DefaultAlarmSender alarms;
  MeteredAlarmSender metered_alarms;
  FailureMonitor failures;
  LostResultMonitor lost;
  ReportMonitor report;
  std::vector<std::unique_ptr<PeriodicTask>> tasks;
  PgAccountStore account_store;
  PgFamiliarAddresses familiar;  // the login throttle's, in the database (survive a restart)
  AuthService auth;
  Accounts accounts;
  PgSsoStore sso_store;
  SsoService sso;
  AuditLog audit;
  ConsoleRepository console_store;
  ConsoleServices console;
  std::unique_ptr<MetricsEndpoint> metrics_endpoint;
  std::unique_ptr<ApiServer> api;
  bool started = false;
  bool stopped = false;
};

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
