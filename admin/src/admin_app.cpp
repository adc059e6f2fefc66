#include "admin/admin_app.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <pqxx/pqxx>
#include <stdexcept>

#include "admin/alarm.hpp"
#include "admin/api_server.hpp"
#include "admin/audit_log.hpp"
#include "admin/auth_service.hpp"
#include "admin/console.hpp"
#include "admin/console_repository.hpp"
#include "admin/executor_api.hpp"
#include "admin/executor_client.hpp"
#include "admin/job_catalog.hpp"
#include "admin/job_repository.hpp"
#include "admin/log_writer.hpp"
#include "admin/migrations.hpp"
#include "admin/monitors.hpp"
#include "admin/node_lease.hpp"
#include "admin/pg_pool.hpp"
#include "admin/pg_scheduler_store.hpp"
#include "admin/routers.hpp"
#include "admin/scheduler.hpp"
#include "admin/trigger_pools.hpp"
#include "admin/trigger_service.hpp"
#include "cronwheel/periodic_task.hpp"
#include "ringwheel/hashed_wheel_timer.hpp"

namespace cronwheel::admin {
namespace {

std::pair<std::string, int> SplitListen(const std::string& listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) throw std::invalid_argument("listen must be host:port");
  int port = -1;
  try {
    port = std::stoi(listen.substr(colon + 1));
  } catch (const std::exception&) {
    port = -1;
  }
  if (port < 0 || port > 65535) throw std::invalid_argument("listen must be host:port with a port 0..65535");
  return {listen.substr(0, colon), port};
}

}  // namespace

void AdminConfig::Declare(ConfigLoader& s) {
  s.AddSecret("dsn", &dsn, "PostgreSQL URI, e.g. postgresql://user:password@127.0.0.1:5432/cronwheel")
      .Add("listen", &listen, "host:port of the console, REST API and executor API")
      .AddSecret("access_token", &access_token,
                 "token executors and the admin present to each other (XXL-JOB-ACCESS-TOKEN); required in "
                 "production")
      .Add("node_id", &node_id,
           "this admin's name in the cluster (default <hostname>-<port>); unique per admin")
      .Add("mode", &mode, "production (refuses to run without an access token) or dev")
      .Add("fast_pool_threads", &fast_pool_threads, "threads of the fast trigger pool", 1, 2000)
      .Add("slow_pool_threads", &slow_pool_threads, "threads of the slow trigger pool", 1, 2000)
      .Add("pre_read_count", &pre_read_count, "jobs read per scan; 0 = (fast + slow threads) * 10", 0,
           1'000'000)
      .Add("pre_read_ms", &pre_read, "how far ahead each scan reads due jobs",
           std::chrono::milliseconds(1000), std::chrono::milliseconds(60'000))
      .Add("misfire_threshold_ms", &misfire_threshold, "a fire later than this is a misfire",
           std::chrono::milliseconds(1000), std::chrono::milliseconds(3'600'000))
      .Add("executor_timeout_ms", &executor_timeout, "connect and read timeout of requests to executors",
           std::chrono::milliseconds(100), std::chrono::milliseconds(60'000))
      .Add("executor_connections", &executor_connections,
           "requests in flight to one executor at a time; more wait for a free connection (at most "
           "executor_timeout_ms). Keep admins x this <= the executor's server_threads (default 64)",
           1, 1000)
      .Add("db_pool_size", &db_pool_size, "PostgreSQL connections", 4, 500)
      .Add("http_threads", &http_threads, "threads serving HTTP", 2, 1000)
      .Add("shutdown_drain_ms", &shutdown_drain,
           "at shutdown with no other admin alive, keep sending for this long", std::chrono::milliseconds(0),
           std::chrono::milliseconds(60'000))
      .Add("startup_timeout_ms", &startup_timeout,
           "how long to wait for PostgreSQL at start before giving up", std::chrono::milliseconds(0),
           std::chrono::milliseconds(3'600'000))
      .Add("log_retention_days", &log_retention_days, "fires older than this are deleted; below 3 = keep all",
           0, 36500)
      .Add("smtp_url", &smtp_url,
           "SMTP server for alarm e-mail, e.g. smtp://mail:25 or smtps://mail:465; empty = off")
      .Add("smtp_from", &smtp_from, "sender address of alarm e-mail")
      .Add("smtp_user", &smtp_user, "SMTP user name (empty = no login)")
      .AddSecret("smtp_password", &smtp_password, "SMTP password")
      .Add("smtp_starttls", &smtp_starttls, "require STARTTLS on smtp:// servers")
      .Add("alarm_webhook_allow", &alarm_webhook_allow,
           "URL prefixes a job's alarm webhook may start with (none = webhooks off), e.g. "
           "https://hooks.example.com/")
      .AddSecret(
          "admin_password", &admin_password,
          "password of the console user 'admin', created at the first start only (when no user exists); "
          "empty = generate one and print it once")
      .Add("web_dir", &web_dir,
           "serve the console from this folder (development); empty = the copy in the binary")
      .Add("cookie_secure", &cookie_secure,
           "mark the session cookie Secure (set when the console is behind HTTPS)")
      .Add("session_idle_s", &session_idle, "a console session ends after this long without a request",
           std::chrono::seconds(60), std::chrono::seconds(30 * 24 * 3600))
      .Add("session_max_s", &session_max, "a console session ends this long after login",
           std::chrono::seconds(60), std::chrono::seconds(365 * 24 * 3600))
      .Add("login_max_failures", &login_max_failures,
           "failed logins per username or client address within login_window_s before logins are refused "
           "(429)",
           1, 1000)
      .Add("login_window_s", &login_window, "window of login_max_failures", std::chrono::seconds(1),
           std::chrono::seconds(24 * 3600));
}

std::string AdminConfig::Validate() {
  if (dsn.empty()) return "dsn is empty: set CRONWHEEL_DSN or --dsn (a postgresql:// URI)";
  if (mode != "production" && mode != "dev")
    return fmt::format("mode '{}' is not valid: use production or dev", mode);
  if (mode == "production" && access_token.empty()) {
    return "access_token is empty: production mode refuses to run without one (XXL-JOB's default token is a "
           "known "
           "hole). Set CRONWHEEL_ACCESS_TOKEN to a long random secret (e.g. `openssl rand -hex 32`) and give "
           "the "
           "executors the same one, or use --mode dev on a private machine";
  }
  try {
    const auto [host, port] = SplitListen(listen);
    if (node_id.empty()) {
      char name[256] = {};
      if (gethostname(name, sizeof name - 1) != 0) std::snprintf(name, sizeof name, "admin");
      node_id = fmt::format("{}-{}", name, port);
    }
  } catch (const std::exception& e) {
    return fmt::format("listen '{}' is not valid: {}", listen, e.what());
  }
  if (node_id.size() > 100) return "node_id must be at most 100 characters";
  if (!admin_password.empty()) {
    if (auto why = CheckPasswordPolicy(admin_password); !why.empty())
      return fmt::format("admin_password {}", why);
  }
  if (pre_read_count == 0) pre_read_count = (fast_pool_threads + slow_pool_threads) * 10;
  return "";
}

struct AdminApp::Parts {
  Parts(const AdminConfig& c, ringwheel::Clock& clock)
      : clock_(clock),
        pool({.dsn = c.dsn, .size = c.db_pool_size}),
        catalog({}, clock, pool),
        writer({}, clock, pool),
        client({.connect_timeout = c.executor_timeout,
                .read_timeout = c.executor_timeout,
                .max_connections_per_origin = static_cast<std::size_t>(c.executor_connections)},
               clock),
        routers(client),
        store(pool),
        trigger(
            {.node_id = c.node_id, .access_token = c.access_token}, clock, catalog, client, writer,
            [this](RouteStrategy s) -> Router& { return routers.For(s); }, store),
        pools({.fast_threads = c.fast_pool_threads, .slow_threads = c.slow_pool_threads}, clock, trigger,
              writer),
        scheduler({.node_id = c.node_id,
                   .pre_read_count = c.pre_read_count,
                   .scan = {.pre_read = c.pre_read, .misfire_threshold = c.misfire_threshold}},
                  clock, store, pools),
        lease({.node_id = c.node_id, .address = c.listen}, clock, pool,
              [this](std::vector<ClaimedFire> fires) { SubmitRecovered(std::move(fires)); }),
        repository(clock, pool, c.alarm_webhook_allow),
        registry(clock, pool),
        callbacks(clock, pool, c.node_id, [this](std::vector<Fire> f) { scheduler.Submit(std::move(f)); }),
        wheel(clock),
        alarms({.smtp_url = c.smtp_url,
                .smtp_from = c.smtp_from,
                .smtp_user = c.smtp_user,
                .smtp_password = c.smtp_password,
                .smtp_starttls = c.smtp_starttls,
                .webhook_allow = c.alarm_webhook_allow}),
        failures({.node_id = c.node_id}, clock, pool, alarms,
                 [this](Fire f, std::chrono::milliseconds delay) { ScheduleRetry(std::move(f), delay); }),
        lost(clock, pool, catalog, client, c.access_token),
        report(clock, pool, c.log_retention_days),
        auth({.session_idle = c.session_idle,
              .session_max = c.session_max,
              .cookie_secure = c.cookie_secure,
              .throttle = {.max_failures = c.login_max_failures, .window = c.login_window}},
             clock, pool),
        audit(clock, pool),
        console_store(clock, pool),
        console{
            .auth = auth, .audit = audit, .store = console_store, .executors = client, .web_dir = c.web_dir} {
  }

  // A retry waits in the hashed wheel timer for its back-off, then goes to the scheduler like any due fire.
  // If the timer refuses it, the ring holds it instead (it keeps the fire's instant).
  void ScheduleRetry(Fire fire, std::chrono::milliseconds delay) {
    if (delay.count() > 0) {
      std::string error;
      auto f = std::make_shared<Fire>(fire);
      if (wheel.NewTimeout([this, f] { scheduler.Submit({*f}); }, delay, &error)) return;
      spdlog::warn("retry timer refused fire {} ({}); the time ring keeps it", fire.log_id, error);
    }
    scheduler.Submit({std::move(fire)});
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
    tasks.push_back(
        std::make_unique<PeriodicTask>(PeriodicTask::Settings{.name = "report monitor",
                                                              .interval = std::chrono::minutes(1),
                                                              .first_delay = std::chrono::seconds(5)},
                                       clock_, [this] { report.RunOnce(); }));
  }

  void SubmitRecovered(std::vector<ClaimedFire> claimed) {
    std::vector<Fire> fires;
    fires.reserve(claimed.size());
    for (auto& c : claimed) {
      Fire f{.log_id = c.log_id, .job_id = c.job_id, .scheduled_ms = c.scheduled_ms, .type = c.type};
      if (c.type != TriggerType::kCron && c.type != TriggerType::kMisfire) {
        f.param = std::move(c.param);
        f.retry_count = c.retry_count;
      }
      f.shard_index = c.shard_index;
      f.shard_total = c.shard_total;
      f.late_recovered = true;
      fires.push_back(std::move(f));
    }
    scheduler.Submit(std::move(fires));
  }

  ringwheel::Clock& clock_;
  PgPool pool;
  JobCatalog catalog;
  PgLogWriter writer;
  HttpExecutorClient client;
  RouterSet routers;
  PgSchedulerStore store;
  TriggerService trigger;
  TriggerPools pools;
  Scheduler scheduler;
  NodeLease lease;
  JobRepository repository;
  RegistryService registry;
  CallbackService callbacks;
  ringwheel::HashedWheelTimer wheel;
  DefaultAlarmSender alarms;
  FailureMonitor failures;
  LostResultMonitor lost;
  ReportMonitor report;
  std::vector<std::unique_ptr<PeriodicTask>> tasks;
  AuthService auth;
  AuditLog audit;
  ConsoleRepository console_store;
  ConsoleServices console;
  std::unique_ptr<ApiServer> api;
  bool started = false;
  bool stopped = false;
};

AdminApp::AdminApp(AdminConfig config, ringwheel::Clock& clock) : config_(std::move(config)), clock_(clock) {}

AdminApp::~AdminApp() {
  Shutdown();
}

void AdminApp::Start() {
  if (auto err = config_.Validate(); !err.empty()) throw std::invalid_argument(err);
  // PostgreSQL may not be up yet (a cluster starting, a database restart): wait for it, within bounds.
  const auto give_up = clock_.SteadyNow() + config_.startup_timeout;
  std::stop_source never;
  for (int attempt = 0;; ++attempt) {
    try {
      PgPool bootstrap({.dsn = config_.dsn, .size = 1});
      auto conn = bootstrap.Acquire();
      const auto report = ApplyMigrations(*conn, BuiltInMigrations(), clock_.NowMs());
      spdlog::info("database schema at version {} ({} migration(s) applied now)", report.schema_version,
                   report.applied);
      break;
    } catch (const pqxx::broken_connection& e) {
      if (clock_.SteadyNow() >= give_up) throw;
      if (attempt % 10 == 0) spdlog::warn("waiting for PostgreSQL: {}", e.what());
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
  p.lease.Start();
  p.scheduler.Start();
  p.StartMonitors();
  const auto [host, port] = SplitListen(config_.listen);
  p.api = std::make_unique<ApiServer>(
      ApiServer::Settings{.host = host,
                          .port = port,
                          .threads = config_.http_threads,
                          .access_token = config_.access_token,
                          .node_id = config_.node_id},
      ApiServer::Services{.repository = p.repository,
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
                          .console = &p.console},
      clock_);
  if (!p.api->Start()) throw std::runtime_error(fmt::format("cannot listen on {}", config_.listen));
  p.started = true;
  spdlog::info("cronwheel-admin {} listening on http://{}:{} ({} mode)", config_.node_id, host, p.api->port(),
               config_.mode);
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
    (void)unrun;  // pending retries stay pending rows: handed over below
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
