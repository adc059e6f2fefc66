#include "executor/executor_config.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cronwheel/net/http_address.hpp"

namespace cronwheel::executor {

ExecutorConfig::ExecutorConfig()
    : log_dir(settings.log_dir.string()),
      callback_batch_size(static_cast<int>(settings.callback_batch_size)),
      callback_log_max_bytes(static_cast<int>(settings.callback_log_max_bytes)) {
  settings.app_name = "cronwheel-executor";
}

void ExecutorConfig::Declare(ConfigLoader& config) {
  config
      .Add("app_name", &settings.app_name,
           "AppName of the executor group this executor registers in (registryKey)")
      .Add("admin_addresses", &settings.admin_addresses,
           "admin base URLs tried in order, e.g. http://127.0.0.1:8080 or http://host:8080/xxl-job-admin; "
           "empty = no registration and no callbacks")
      .Add("listen", &listen,
           "host:port of the executor's HTTP API; port 0 = any free port. Loopback by default: for an admin "
           "on "
           "another host use 0.0.0.0:9999 and set advertise_address")
      .Add("advertise_address", &settings.advertise_address,
           "address registered with the admins, e.g. http://10.0.0.5:9999/; empty = http://<listen host, or "
           "127.0.0.1 for 0.0.0.0>:<port>/")
      .AddSecret("access_token", &settings.access_token,
                 "token shared with the admins (header XXL-JOB-ACCESS-TOKEN); required unless mode = dev")
      .Add("mode", &mode,
           "production (refuses to start without access_token) or dev (allows it, with a warning)")
      .Add("log_dir", &log_dir,
           "job logs (<log_dir>/<yyyy-mm-dd UTC>/: segments fires-*.seg, and <logId>.log for script jobs), "
           "glue "
           "sources and spooled callbacks")
      .Add("log_retention_days", &settings.log_retention_days,
           "job-log day folders older than this many days are deleted daily; below 3 = keep all", 0, 36500)
      .Add("enable_scripts", &settings.enable_scripts,
           "run script jobs (GLUE_SHELL, GLUE_PYTHON, GLUE_PYTHON2, GLUE_NODEJS, GLUE_PHP, GLUE_POWERSHELL): "
           "they "
           "execute admin-supplied code on this host")
      .Add("script_env_pass", &settings.script_env_pass,
           "variables of this process's environment that scripts get too, by name, e.g. HTTP_PROXY,NO_PROXY; "
           "scripts otherwise get only PATH=/usr/local/bin:/usr/bin:/bin, LANG and LC_ALL=C.UTF-8, HOME, TZ "
           "and the fire's CRONWHEEL_* variables (docs/operations.md); CRONWHEEL_* names are refused")
      .Add("heartbeat_interval_s", &settings.heartbeat_interval, "registry heartbeat period",
           std::chrono::seconds(1), std::chrono::seconds(3600))
      .Add("callback_retry_interval_s", &settings.callback_retry_interval,
           "retry period of spooled callbacks", std::chrono::seconds(1), std::chrono::seconds(3600))
      .Add("callback_batch_size", &callback_batch_size, "callbacks per POST to the admin", 1, 10000)
      .Add(
          "callback_log_max_bytes", &callback_log_max_bytes,
          "bytes of each fire's job log sent with its result, for the admin's archive of fire output (a "
          "longer log keeps its head and tail, the middle marked as left out); 0 = none (the admin reads the "
          "log from /log after the result instead); else 1024 to 4194304",
          0, static_cast<int>(kMaxCallbackLogBytes))
      .Add("admin_timeout_ms", &settings.admin_timeout, "connect and read timeout of calls to the admins",
           std::chrono::milliseconds(100), std::chrono::milliseconds(60000))
      .Add("server_threads", &settings.server_threads,
           "threads that read, answer and write HTTP connections (no more than the cores: a connection holds "
           "no thread)",
           1, 64)
      .Add("keep_alive_timeout_s", &settings.keep_alive_timeout,
           "idle keep-alive connections are closed after this", std::chrono::seconds(1),
           std::chrono::seconds(300))
      .Add("idle_thread_timeout_s", &settings.idle_thread_timeout,
           "a job thread without work is ended after this", std::chrono::seconds(1),
           std::chrono::seconds(86400))
      .Add("job_workers", &settings.job_workers,
           "worker threads that run the fires (each job's fires one at a time)", 1, 4096)
      .Add("max_job_workers", &settings.max_job_workers,
           "worker threads at most, counting those added while handlers run longer than 100 ms", 1, 65536)
      .Add("script_kill_grace_ms", &settings.script_kill_grace,
           "a stopped script's process group gets SIGTERM, then SIGKILL after this",
           std::chrono::milliseconds(0), std::chrono::milliseconds(600000))
      .Add("drain_timeout_s", &drain_timeout,
           "on SIGTERM or SIGINT: refuse new fires and let the running ones finish for at most this long, "
           "then stop (a second signal stops at once); 0 = stop at once, killing running fires",
           std::chrono::seconds(0), std::chrono::seconds(86400))
      .Add("redelivery_window_s", &settings.redelivery_window,
           "a finished log id delivered again within this time is answered without running again",
           std::chrono::seconds(0), std::chrono::seconds(86400))
      .Add("http_handler_allow", &builtin.http_allow,
           "URL prefixes httpJobHandler may call, e.g. https://api.example.com/hooks/; empty = none")
      .Add("http_handler_timeout_ms", &builtin.http_timeout, "httpJobHandler connect/read/write timeout",
           std::chrono::milliseconds(100), std::chrono::milliseconds(600000))
      .Add("log_level", &log_level, "trace, debug, info, warn or error")
      .Add("metrics_allow", &settings.metrics_allow,
           "IP addresses and CIDR ranges that may read GET /metrics without credentials, e.g. "
           "127.0.0.1/8,::1,10.0.0.0/8; empty = none")
      .AddSecret("metrics_token", &settings.metrics_token,
                 "bearer token that may read GET /metrics from any address (Authorization: Bearer <token>); "
                 "empty = none")
      .Add("metrics_hosts", &settings.metrics_hosts,
           "host names a request allowed by metrics_allow may name in its Host header besides IP addresses "
           "and localhost, e.g. executor-1 when Prometheus scrapes by that name (a guard against DNS "
           "rebinding); empty = none")
      .Add(
          "run_trace_file", &run_trace_file,
          "append '<logId> <jobId> <received epoch ms> <started epoch ms>' for every /run received, when the "
          "fire starts (or 0 as its start when it never does: refused, killed or replaced in the queue); "
          "diagnostics, benchmarks; empty = off");
}

absl::Status ExecutorConfig::Validate() {
  const auto host_port = net::ParseHostPort(listen);
  if (!host_port.ok())
    return absl::InvalidArgumentError("listen " + std::string(host_port.status().message()));
  if (mode != "production" && mode != "dev") {
    return absl::InvalidArgumentError(fmt::format("mode = '{}' is not valid: use production or dev", mode));
  }
  if (spdlog::level::from_str(log_level) == spdlog::level::off && log_level != "off") {
    return absl::InvalidArgumentError(
        fmt::format("log_level = '{}' is not valid: use trace, debug, info, warn or error", log_level));
  }
  if (settings.access_token.empty() && mode == "production") {
    return absl::InvalidArgumentError(
        "access_token is empty; a production executor refuses to run without one.\n"
        "  Set the admin's token with CRONWHEEL_ACCESS_TOKEN=<token> (or --access-token, or access_token in "
        "the "
        "TOML file),\n  or use mode = dev (CRONWHEEL_MODE=dev) for a local test.");
  }
  if (callback_log_max_bytes != 0 && callback_log_max_bytes < static_cast<int>(kMinCallbackLogBytes)) {
    return absl::InvalidArgumentError(
        fmt::format("callback_log_max_bytes = {} is not valid: use 0 (send no job log) or {} to {} bytes",
                    callback_log_max_bytes, kMinCallbackLogBytes, kMaxCallbackLogBytes));
  }
  settings.listen_host = host_port->host;
  settings.listen_port = host_port->port;
  settings.log_dir = log_dir;
  settings.callback_batch_size = static_cast<std::size_t>(callback_batch_size);
  settings.callback_log_max_bytes = static_cast<std::size_t>(callback_log_max_bytes);
  settings.run_trace_file = run_trace_file;
  return absl::OkStatus();
}

std::vector<std::string> ExecutorConfig::Warnings() const {
  std::vector<std::string> out;
  if (settings.access_token.empty()) {
    out.push_back(
        fmt::format("dev mode without an access token: anyone who can reach {} can run jobs here", listen));
  }
  if (settings.advertise_address.empty() &&
      (settings.listen_host == "0.0.0.0" || settings.listen_host == "::")) {
    out.push_back(
        fmt::format("listening on {} but advertise_address is not set: registering 127.0.0.1, which an admin "
                    "on another host "
                    "cannot reach",
                    listen));
  }
  return out;
}

spdlog::level::level_enum ExecutorConfig::LogLevel() const {
  return spdlog::level::from_str(log_level);
}

}  // namespace cronwheel::executor
