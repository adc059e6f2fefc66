#include "executor/executor.hpp"

#include <fmt/format.h>
#include <sodium.h>
#include <spdlog/spdlog.h>

#include <stdexcept>
#include <thread>

#include "admin_client.hpp"
#include "callback_sender.hpp"
#include "cronwheel/metrics_endpoint.hpp"
#include "cronwheel/net/address_allow_list.hpp"
#include "cronwheel/net/http_address.hpp"
#include "cronwheel/text.hpp"
#include "executor_service.hpp"
#include "handler_registry.hpp"
#include "http_server.hpp"
#include "job_dispatcher.hpp"
#include "job_log.hpp"
#include "metrics.hpp"
#include "posix_util.hpp"
#include "registry_heartbeat.hpp"
#include "script_runner.hpp"
#include "timer.hpp"
#include "xxljob/protocol.hpp"
#include "xxljob/token.hpp"

namespace cronwheel::executor {
namespace {

std::string DefaultAdvertise(const std::string& host, int port) {
  std::string h = host;
  if (h.empty() || h == "0.0.0.0" || h == "::" || h == "[::]") h = "127.0.0.1";
  if (h.find(':') != std::string::npos && !h.starts_with('[')) h = "[" + h + "]";
  return fmt::format("http://{}:{}/", h, port);
}

void Validate(const Executor::Settings& s) {
  auto bad = [](std::string_view key, const std::string& why) {
    throw std::invalid_argument(fmt::format("setting {}: {}", key, why));
  };
  if (!s.admin_addresses.empty() && IsBlank(s.app_name)) {
    bad("app_name", "must be set (the executor group's AppName) when admin_addresses is set");
  }
  if (s.app_name.size() > 64) bad("app_name", fmt::format("'{}' is longer than 64 characters", s.app_name));
  if (s.listen_port < 0 || s.listen_port > 65535) {
    bad("listen", fmt::format("port {} is not valid: use 0..65535 (0 = any free port)", s.listen_port));
  }
  if (s.server_threads < 1 || s.server_threads > 64) {
    bad("server_threads", fmt::format("{} is not valid: use 1..64", s.server_threads));
  }
  if (!s.advertise_address.empty()) {
    const auto advertise = cronwheel::net::ParseHttpAddress(s.advertise_address);
    if (!advertise.ok()) bad("advertise_address", std::string(advertise.status().message()));
  }
  if (s.log_dir.empty()) bad("log_dir", "must not be empty");
  if (const auto allow = cronwheel::net::AddressAllowList::Parse(s.metrics_allow); !allow.ok()) {
    bad("metrics_allow", std::string(allow.status().message()));
  }
  if (const absl::Status hosts = MetricsEndpoint::CheckHostNames(s.metrics_hosts); !hosts.ok()) {
    throw std::invalid_argument("setting " + std::string(hosts.message()));
  }
  for (const auto& name : s.script_env_pass) {
    if (const absl::Status pass = ScriptRunner::CheckPassName(name); !pass.ok()) {
      bad("script_env_pass", std::string(pass.message()));
    }
  }
  if (s.heartbeat_interval.count() < 1) bad("heartbeat_interval_s", "must be at least 1 second");
  if (s.callback_retry_interval.count() < 1) bad("callback_retry_interval_s", "must be at least 1 second");
  if (s.idle_thread_timeout.count() < 1) bad("idle_thread_timeout_s", "must be at least 1 second");
  if (s.job_workers < 1) bad("job_workers", "must be at least 1");
  if (s.callback_log_max_bytes != 0 &&
      (s.callback_log_max_bytes < kMinCallbackLogBytes || s.callback_log_max_bytes > kMaxCallbackLogBytes)) {
    bad("callback_log_max_bytes",
        fmt::format("{} is not valid: use 0 (send no job log) or {} to {} bytes", s.callback_log_max_bytes,
                    kMinCallbackLogBytes, kMaxCallbackLogBytes));
  }
  if (s.max_job_workers < s.job_workers) bad("max_job_workers", "must be at least job_workers");
}

}  // namespace

struct Executor::Impl {
  Settings settings;
  ringwheel::Clock& clock;
  HandlerRegistry handlers{false, nullptr};
  metrics::Registry metrics_registry;
  ExecutorMetrics metrics{metrics_registry};

  bool started = false;
  bool stopped = false;
  int port = 0;
  std::string advertise;

  // Declared in dependency order; Stop() tears them down explicitly in the reverse order.
  std::unique_ptr<JobLogFiles> logs;
  std::unique_ptr<ScriptRunner> scripts;
  std::unique_ptr<HttpAdminClient> admin;
  std::unique_ptr<MeteredAdminClient> metered_admin;
  std::unique_ptr<MetricsEndpoint> metrics_endpoint;
  std::unique_ptr<CallbackSender> callbacks;
  std::unique_ptr<Timer> timer;
  std::unique_ptr<Timer> start_timer;  // starts fires sent ahead of their instant, to the millisecond
  std::unique_ptr<RunTrace> trace;     // before the dispatcher, which writes it
  std::unique_ptr<JobDispatcher> dispatcher;
  std::unique_ptr<ExecutorService> service;
  std::unique_ptr<HttpServer> server;
  std::unique_ptr<RegistryHeartbeat> registry;
  std::unique_ptr<LogRetention> retention;

  Impl(Settings s, ringwheel::Clock& c) : settings(std::move(s)), clock(c) {}

  void TearDown() {
    // 1. Tell the admins first, so they stop routing fires here; 2. stop taking requests;
    // 3. stop the job threads (their last results go to the callback queue) while the timer still runs;
    // 4. stop the timer; 5. flush the callbacks (send, or spool for the next start).
    if (registry) registry->Stop();
    if (server) server->Stop();
    if (dispatcher) dispatcher->Stop();
    if (timer) timer->Stop();
    if (start_timer) start_timer->Stop();
    if (callbacks) callbacks->Stop();
    if (retention) retention->Stop();
    retention.reset();
    registry.reset();
    server.reset();
    service.reset();
    dispatcher.reset();
    trace.reset();  // after the dispatcher, which writes it
    timer.reset();
    start_timer.reset();
    callbacks.reset();
    metered_admin.reset();
    admin.reset();
    metrics_endpoint.reset();
    handlers.SetScripts(false, nullptr);
    scripts.reset();
    logs.reset();
  }
};

Executor::Executor(Settings settings, ringwheel::Clock& clock)
    : impl_(std::make_unique<Impl>(std::move(settings), clock)) {}

Executor::~Executor() {
  Stop();
}

void Executor::Register(const std::string& name, JobHandler handler) {
  impl_->handlers.Register(name, std::move(handler));
}

void Executor::Start() {
  auto& m = *impl_;
  if (m.started) throw std::logic_error("Executor::Start: already started");
  Validate(m.settings);
  if (sodium_init() < 0) throw std::runtime_error("libsodium could not be initialised");
  m.started = true;
  const auto& s = m.settings;
  try {
    std::error_code ec;
    MakePrivateDirs(s.log_dir, ec);  // a log_dir that exists keeps its mode; what is made in it is 0700
    if (ec) {
      throw std::runtime_error(
          fmt::format("setting log_dir: cannot create {}: {}", s.log_dir.string(), ec.message()));
    }
    m.logs =
        std::make_unique<JobLogFiles>(JobLogFiles::Settings{.dir = s.log_dir,
                                                            .max_read_bytes = s.log_read_max_bytes,
                                                            .callback_log_bytes = s.callback_log_max_bytes},
                                      m.clock);
    m.scripts = std::make_unique<ScriptRunner>(ScriptRunner::Settings{.source_dir = s.log_dir / "gluesource",
                                                                      .kill_grace = s.script_kill_grace,
                                                                      .home = s.log_dir / "scripthome",
                                                                      .env_pass = s.script_env_pass},
                                               m.clock);
    m.handlers.SetScripts(s.enable_scripts, m.scripts.get());
    m.admin = std::make_unique<HttpAdminClient>(
        HttpAdminClient::Settings{s.admin_addresses, s.access_token, s.app_name, s.admin_timeout});
    m.metered_admin = std::make_unique<MeteredAdminClient>(*m.admin, m.metrics);
    m.callbacks = std::make_unique<CallbackSender>(
        CallbackSender::Settings{s.log_dir / "callbacklogs", s.callback_batch_size,
                                 s.callback_retry_interval},
        *m.metered_admin, m.logs.get(), m.clock);
    m.callbacks->Start();
    m.timer = std::make_unique<WheelTimer>(m.clock);
    m.start_timer = std::make_unique<WheelTimer>(m.clock, std::chrono::milliseconds(1), 8192);
    if (!s.run_trace_file.empty()) m.trace = std::make_unique<RunTrace>(s.run_trace_file);
    m.dispatcher = std::make_unique<JobDispatcher>(
        JobDispatcher::Settings{.idle_timeout = s.idle_thread_timeout,
                                .redelivery_window = s.redelivery_window,
                                .redelivery_capacity = s.redelivery_capacity,
                                .workers = static_cast<std::size_t>(s.job_workers),
                                .max_workers = static_cast<std::size_t>(s.max_job_workers)},
        [&m](const xxljob::TriggerParam& p) {
          auto r = m.handlers.Resolve(p);
          if (r.handler) r.handler = m.metrics.Meter(std::move(r.handler), m.clock);
          return r;
        },
        *m.logs, *m.callbacks, *m.timer, m.clock, m.trace.get(), m.start_timer.get());
    m.service = std::make_unique<ExecutorService>(*m.dispatcher, *m.logs, &m.metrics, s.on_drain_request);
    m.metrics.WatchCallbacks(*m.callbacks);  // once: an Executor starts once
    m.metrics.WatchDispatcher(*m.dispatcher);
    m.metrics_endpoint = std::make_unique<MetricsEndpoint>(
        m.metrics_registry,
        MetricsEndpoint::Settings{
            .allow = s.metrics_allow, .token = s.metrics_token, .hosts = s.metrics_hosts},
        xxljob::TokenMatches);

    std::string prefix;
    if (!s.advertise_address.empty())
      prefix = cronwheel::net::ParseHttpAddress(s.advertise_address)->base_path;
    m.server = std::make_unique<HttpServer>(
        HttpServer::Settings{s.listen_host, s.listen_port, s.server_threads, s.keep_alive_timeout,
                             s.access_token, prefix, m.metrics_endpoint.get()},
        *m.service);
    m.port = m.server->Start();
    m.advertise = s.advertise_address.empty() ? DefaultAdvertise(s.listen_host, m.port) : s.advertise_address;
    spdlog::info("executor {} listening on {}:{}, advertised as {}; scripts {}", s.app_name, s.listen_host,
                 m.port, m.advertise, s.enable_scripts ? "enabled" : "disabled");
    // A connection holds no thread here: I/O threads beyond the cores only hand completions from thread to
    // thread (64 on 2 cores cost 5.7 times the CPU per /run of 2: docs/performance.md).
    if (const auto cores = std::thread::hardware_concurrency();
        cores > 0 && static_cast<unsigned>(s.server_threads) > cores) {
      spdlog::warn(
          "server_threads {} is more than this machine's {} cores: each costs CPU in hand-offs and "
          "none serves more connections; use {} or fewer",
          s.server_threads, cores, cores);
    }

    m.registry = std::make_unique<RegistryHeartbeat>(
        RegistryHeartbeat::Settings{s.app_name, m.advertise, s.heartbeat_interval}, *m.metered_admin,
        m.clock);
    m.registry->Start();
    m.retention =
        std::make_unique<LogRetention>(LogRetention::Settings{s.log_retention_days}, *m.logs, m.clock);
    m.retention->Start();
  } catch (...) {
    m.TearDown();
    m.stopped = true;
    throw;
  }
}

void Executor::Stop() {
  auto& m = *impl_;
  if (!m.started || m.stopped) return;
  m.stopped = true;
  spdlog::info("executor {} stopping", m.settings.app_name);
  m.TearDown();
  spdlog::info("executor {} stopped", m.settings.app_name);
}

bool Executor::Drain(std::chrono::milliseconds timeout) {
  auto& m = *impl_;
  if (!m.started || m.stopped) return true;
  spdlog::info("executor {} draining: no new fires; waiting up to {} ms for the running ones",
               m.settings.app_name, timeout.count());
  // Refuse first, then deregister: a fire sent between the two is refused (and sent elsewhere), never run
  // after the admins were told this executor is gone.
  m.dispatcher->BeginDrain(timeout);
  m.registry->Stop();
  const bool drained = m.dispatcher->AwaitDrained();
  spdlog::info("executor {} {}", m.settings.app_name,
               drained ? "drained: every fire finished" : "drain ended with fires still running");
  return drained;
}

void Executor::AbandonDrain() {
  auto& m = *impl_;
  if (m.dispatcher) m.dispatcher->AbandonDrain();
}

int Executor::port() const {
  return impl_->port;
}
std::string Executor::advertise_address() const {
  return impl_->advertise;
}
const Executor::Settings& Executor::settings() const {
  return impl_->settings;
}

}  // namespace cronwheel::executor
