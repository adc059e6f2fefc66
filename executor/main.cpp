// cronwheel-executor: an XXL-JOB-compatible executor with cronwheel's built-in handlers. This file only
// reads the settings (executor/executor_config.hpp), wires the library together and waits for SIGTERM/SIGINT.
// The behaviour is described in executor/include/executor/executor.hpp.
#include <pthread.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <exception>
#include <iostream>
#include <stdexcept>

#include "cronwheel/config.hpp"
#include "executor/builtin_handlers.hpp"
#include "executor/executor.hpp"
#include "executor/executor_config.hpp"
#include "ringwheel/clock.hpp"

int main(int argc, char** argv) {
  // SIGTERM/SIGINT are taken by sigwait() below: block them before any thread starts (threads inherit the
  // mask; script children get a clean mask and default dispositions from the script runner).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // NOLINT(cert-err33-c): a closed connection is an error result, not death

  cronwheel::executor::ExecutorConfig config;
  cronwheel::ConfigLoader loader(
      "cronwheel-executor",
      "Runs jobs for a cronwheel or XXL-JOB admin (XXL-JOB executor protocol, dialects A/B).");
  config.Declare(loader);
  if (const auto exit_code = loader.Parse(argc, argv)) return *exit_code;
  if (const absl::Status valid = config.Validate(); !valid.ok()) {
    std::cerr << "cronwheel-executor: " << valid.message() << "\n";
    return 2;
  }
  spdlog::set_default_logger(spdlog::stderr_color_mt("cronwheel-executor"));
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  spdlog::set_level(config.LogLevel());
  for (const auto& warning : config.Warnings())
    spdlog::warn("{}", warning);

  try {
    cronwheel::executor::Executor executor(config.settings, ringwheel::RealClock::Instance());
    cronwheel::executor::RegisterBuiltinHandlers(executor, config.builtin);
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
