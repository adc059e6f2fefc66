#pragma once
// The parts of an admin (AdminApp, admin/app/admin_app.hpp) and how each is built from the settings: the
// pool, the catalog, the trigger path, the scheduler, membership, the services of the REST API, the result
// path's monitors, sign-in and the HTTP server. Members are declared in the order they depend on each other,
// so they are built in it and destroyed in the reverse (the comments say where that order matters).
// AdminApp::Start and Shutdown (admin_app.cpp) start and stop them. Private to admin/src/app.

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <pqxx/pqxx>
#include <stdexcept>

#include "admin/api/server.hpp"
#include "admin/app/admin_app.hpp"
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
#include "admin/store/pg_workflow_store.hpp"
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
        workflow_store(clock, pool),
        workflows(clock, workflow_store, {.pre_read = c.pre_read}),
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
  PgWorkflowStore workflow_store;
  WorkflowService workflows;
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

}  // namespace cronwheel::admin
