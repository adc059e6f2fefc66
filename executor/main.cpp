// cronwheel-executor: an XXL-JOB-compatible executor with cronwheel's built-in handlers. This file only
// reads the settings, wires the library together and waits for SIGTERM/SIGINT. The behaviour is described
// in executor/include/executor/executor.hpp.
#include <pthread.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <exception>
#include <iostream>

#include "cronwheel/config.hpp"
#include "cronwheel/net/http_address.hpp"
#include "executor/builtin_handlers.hpp"
#include "executor/executor.hpp"
#include "ringwheel/clock.hpp"

using cronwheel::executor::Executor;

int main(int argc, char** argv) {
  // SIGTERM/SIGINT are taken by sigwait() below: block them before any thread starts (threads inherit the
  // mask; script children get a clean mask and default dispositions from the script runner).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // NOLINT(cert-err33-c): a closed connection is an error result, not death

  Executor::Settings s;
  s.app_name = "cronwheel-executor";
  std::string listen = "127.0.0.1:9999";
  std::string log_dir = s.log_dir.string();
  std::string mode = "production";
  std::string log_level = "info";
  std::string run_trace_file;
  int callback_batch_size = static_cast<int>(s.callback_batch_size);
  cronwheel::executor::BuiltinHandlerOptions builtin;

  cronwheel::ConfigLoader cfg(
      "cronwheel-executor",
      "Runs jobs for a cronwheel or XXL-JOB admin (XXL-JOB executor protocol, dialects A/B).");
  cfg.Add("app_name", &s.app_name, "AppName of the executor group this executor registers in (registryKey)")
      .Add("admin_addresses", &s.admin_addresses,
           "admin base URLs tried in order, e.g. http://127.0.0.1:8080 or http://host:8080/xxl-job-admin; "
           "empty = no registration and no callbacks")
      .Add("listen", &listen,
           "host:port of the executor's HTTP API; port 0 = any free port. Loopback by default: for an admin "
           "on "
           "another host use 0.0.0.0:9999 and set advertise_address")
      .Add("advertise_address", &s.advertise_address,
           "address registered with the admins, e.g. http://10.0.0.5:9999/; empty = http://<listen host, or "
           "127.0.0.1 for 0.0.0.0>:<port>/")
      .AddSecret("access_token", &s.access_token,
                 "token shared with the admins (header XXL-JOB-ACCESS-TOKEN); required unless mode = dev")
      .Add("mode", &mode,
           "production (refuses to start without access_token) or dev (allows it, with a warning)")
      .Add("log_dir", &log_dir,
           "job logs (<log_dir>/<yyyy-mm-dd UTC>/: segments fires-*.seg, and <logId>.log for script jobs), "
           "glue "
           "sources and spooled callbacks")
      .Add("log_retention_days", &s.log_retention_days,
           "job-log day folders older than this many days are deleted daily; below 3 = keep all", 0, 36500)
      .Add("enable_scripts", &s.enable_scripts,
           "run script jobs (GLUE_SHELL, GLUE_PYTHON, GLUE_PYTHON2, GLUE_NODEJS, GLUE_PHP, GLUE_POWERSHELL): "
           "they "
           "execute admin-supplied code on this host")
      .Add("script_env_pass", &s.script_env_pass,
           "variables of this process's environment that scripts get too, by name, e.g. HTTP_PROXY,NO_PROXY; "
           "scripts otherwise get only PATH=/usr/local/bin:/usr/bin:/bin, LANG and LC_ALL=C.UTF-8, HOME, TZ "
           "and the fire's CRONWHEEL_* variables (docs/operations.md); CRONWHEEL_* names are refused")
      .Add("heartbeat_interval_s", &s.heartbeat_interval, "registry heartbeat period",
           std::chrono::seconds(1), std::chrono::seconds(3600))
      .Add("callback_retry_interval_s", &s.callback_retry_interval, "retry period of spooled callbacks",
           std::chrono::seconds(1), std::chrono::seconds(3600))
      .Add("callback_batch_size", &callback_batch_size, "callbacks per POST to the admin", 1, 10000)
      .Add("admin_timeout_ms", &s.admin_timeout, "connect and read timeout of calls to the admins",
           std::chrono::milliseconds(100), std::chrono::milliseconds(60000))
      .Add("server_threads", &s.server_threads, "threads that read, answer and write HTTP connections", 1, 64)
      .Add("keep_alive_timeout_s", &s.keep_alive_timeout, "idle keep-alive connections are closed after this",
           std::chrono::seconds(1), std::chrono::seconds(300))
      .Add("idle_thread_timeout_s", &s.idle_thread_timeout, "a job thread without work is ended after this",
           std::chrono::seconds(1), std::chrono::seconds(86400))
      .Add("job_workers", &s.job_workers,
           "worker threads that run the fires (each job's fires one at a time)", 1, 4096)
      .Add("max_job_workers", &s.max_job_workers,
           "worker threads at most, counting those added while handlers run longer than 100 ms", 1, 65536)
      .Add("script_kill_grace_ms", &s.script_kill_grace,
           "a stopped script's process group gets SIGTERM, then SIGKILL after this",
           std::chrono::milliseconds(0), std::chrono::milliseconds(600000))
      .Add("redelivery_window_s", &s.redelivery_window,
           "a finished log id delivered again within this time is answered without running again",
           std::chrono::seconds(0), std::chrono::seconds(86400))
      .Add("http_handler_allow", &builtin.http_allow,
           "URL prefixes httpJobHandler may call, e.g. https://api.example.com/hooks/; empty = none")
      .Add("http_handler_timeout_ms", &builtin.http_timeout, "httpJobHandler connect/read/write timeout",
           std::chrono::milliseconds(100), std::chrono::milliseconds(600000))
      .Add("log_level", &log_level, "trace, debug, info, warn or error")
      .Add("metrics_allow", &s.metrics_allow,
           "IP addresses and CIDR ranges that may read GET /metrics without credentials, e.g. "
           "127.0.0.1/8,::1,10.0.0.0/8; empty = none")
      .AddSecret("metrics_token", &s.metrics_token,
                 "bearer token that may read GET /metrics from any address (Authorization: Bearer <token>); "
                 "empty = none")
      .Add("metrics_hosts", &s.metrics_hosts,
           "host names a request allowed by metrics_allow may name in its Host header besides IP addresses "
           "and localhost, e.g. executor-1 when Prometheus scrapes by that name (a guard against DNS "
           "rebinding); empty = none")
      .Add("run_trace_file", &run_trace_file,
           "append '<logId> <jobId> <received epoch ms>' for every /run received (diagnostics, benchmarks); "
           "empty = off");
  if (const auto exit_code = cfg.Parse(argc, argv)) return *exit_code;
  s.run_trace_file = run_trace_file;

  spdlog::set_default_logger(spdlog::stderr_color_mt("cronwheel-executor"));
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  const auto level = spdlog::level::from_str(log_level);
  if (level == spdlog::level::off && log_level != "off") {
    std::cerr << "cronwheel-executor: log_level = '" << log_level
              << "': use trace, debug, info, warn or error\n";
    return 2;
  }
  spdlog::set_level(level);

  std::string listen_error;
  const auto host_port = cronwheel::net::ParseHostPort(listen, &listen_error);
  if (!host_port) {
    std::cerr << "cronwheel-executor: listen " << listen_error << "\n";
    return 2;
  }
  s.listen_host = host_port->host;
  s.listen_port = host_port->port;
  if (mode != "production" && mode != "dev") {
    std::cerr << "cronwheel-executor: mode = '" << mode << "' is not valid: use production or dev\n";
    return 2;
  }
  if (s.access_token.empty()) {
    if (mode == "production") {
      std::cerr
          << "cronwheel-executor: access_token is empty; a production executor refuses to run without one.\n"
             "  Set the admin's token with CRONWHEEL_ACCESS_TOKEN=<token> (or --access-token, or "
             "access_token "
             "in the TOML file),\n  or use mode = dev (CRONWHEEL_MODE=dev) for a local test.\n";
      return 2;
    }
    spdlog::warn("dev mode without an access token: anyone who can reach {} can run jobs here", listen);
  }
  s.log_dir = log_dir;
  s.callback_batch_size = static_cast<std::size_t>(callback_batch_size);
  if (s.advertise_address.empty() && (s.listen_host == "0.0.0.0" || s.listen_host == "::")) {
    spdlog::warn(
        "listening on {} but advertise_address is not set: registering 127.0.0.1, which an admin on "
        "another host cannot reach",
        listen);
  }

  try {
    Executor executor(s, ringwheel::RealClock::Instance());
    cronwheel::executor::RegisterBuiltinHandlers(executor, builtin);
    executor.Start();
    int sig = 0;
    sigwait(&signals, &sig);
    spdlog::info("signal {} received: stopping", sig);
    executor.Stop();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 0;
}
