#pragma once
// The settings of one cronwheel-executor process: every key of its TOML file, environment and flags
// (cronwheel/config.hpp), with its default, unit and range, and the checks that span keys.
// `cronwheel-executor
// --help` lists them; docs/operations.md explains the ones an operator sets. The executor library itself
// takes Executor::Settings (executor.hpp) and BuiltinHandlerOptions (builtin_handlers.hpp); this is the
// binary's layer over them, as admin/app/admin_config.hpp is the admin's.
//
// Plain values; Declare and Validate run on one thread before the executor starts.

#include <absl/status/status.h>
#include <spdlog/common.h>

#include <chrono>
#include <string>
#include <vector>

#include "cronwheel/config.hpp"
#include "executor/builtin_handlers.hpp"
#include "executor/executor.hpp"

namespace cronwheel::executor {

struct ExecutorConfig {
  ExecutorConfig();

  // The library's settings; Validate fills listen_host, listen_port, log_dir, callback_batch_size,
  // callback_log_max_bytes and run_trace_file from the keys below.
  Executor::Settings settings;
  BuiltinHandlerOptions builtin;
  std::string listen = "127.0.0.1:9999";  // host:port; port 0 = any free port
  std::string log_dir;                    // default: settings.log_dir's
  std::string mode = "production";        // production | dev
  std::string log_level = "info";         // trace, debug, info, warn, error (or off)
  std::string run_trace_file;             // "" = off
  int callback_batch_size = 0;            // default: settings.callback_batch_size's
  int callback_log_max_bytes = 0;         // default: settings.callback_log_max_bytes's
  // On SIGTERM/SIGINT the executor drains (Executor::Drain) for at most this long, then stops; a second
  // signal stops it at once. 0 = stop at once, killing running fires (before drains existed).
  std::chrono::seconds drain_timeout{30};

  // Declares every key on `config` (see --help).
  void Declare(ConfigLoader& config);
  // Checks the values that Declare's ranges cannot (listen, mode, log_level, the access token a production
  // executor needs) and fills `settings` from them. On the first problem returns an InvalidArgument status
  // whose message names the key, the value and what is valid, e.g. "mode = 'prod' is not valid: use
  // production or dev"; nothing else changes then.
  absl::Status Validate();
  // After Validate: what an operator should know before the executor starts (dev mode without a token; a
  // wildcard listen address without advertise_address, which registers 127.0.0.1). One sentence each.
  [[nodiscard]] std::vector<std::string> Warnings() const;
  // After Validate: log_level as spdlog's level.
  [[nodiscard]] spdlog::level::level_enum LogLevel() const;
};

}  // namespace cronwheel::executor
