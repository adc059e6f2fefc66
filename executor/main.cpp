// cronwheel-executor: an XXL-JOB-compatible executor with cronwheel's built-in handlers. This file only
// reads the settings (executor/executor_config.hpp), wires the library together and waits for SIGTERM/SIGINT.
// The behaviour is described in executor/include/executor/executor.hpp.
#include <pthread.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <csignal>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "cronwheel/config.hpp"
#include "cronwheel/process_secrets.hpp"
#include "executor/builtin_handlers.hpp"
#include "executor/executor.hpp"
#include "executor/executor_config.hpp"
#include "ringwheel/clock.hpp"

int main(int argc, char** argv) {
  // Script jobs run as this process's user: they must not read its token from /proc/<pid>/environ or mem
  // (security review 2, F3; docs/security.md, "Script jobs on the executor").
  const bool undumpable = cronwheel::MakeUndumpable();
  // SIGTERM/SIGINT are taken by sigwait() below: block them before any thread starts (threads inherit the
  // mask; script children get a clean mask and default dispositions from the script runner).
  // SIGUSR1 is this process's own: the drain thread's "done".
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // NOLINT(cert-err33-c): a closed connection is an error result, not death

  cronwheel::executor::ExecutorConfig config;
  cronwheel::ConfigLoader loader(
      "cronwheel-executor",
      "Runs jobs for a cronwheel or XXL-JOB admin (XXL-JOB executor protocol, dialects A/B).");
  config.Declare(loader);
  if (const auto exit_code = loader.Parse(argc, argv)) return *exit_code;
  const auto scrubbed = loader.ScrubSecrets(argc, argv);
  if (const absl::Status valid = config.Validate(); !valid.ok()) {
    std::cerr << "cronwheel-executor: " << valid.message() << "\n";
    return 2;
  }
  spdlog::set_default_logger(spdlog::stderr_color_mt("cronwheel-executor"));
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  spdlog::set_level(config.LogLevel());
  for (const auto& warning : config.Warnings())
    spdlog::warn("{}", warning);
  if (!undumpable)
    spdlog::warn("this process could not be made non-dumpable: its scripts may read its memory");
  for (const auto& key : scrubbed)
    spdlog::debug("{}: its value was removed from this process's environment and command line", key);

  // An admin's drain request (POST /drain) is a SIGTERM to this process: the drain below, as for a signal.
  // Without a drain timeout there is no drain to ask for.
  if (config.drain_timeout.count() > 0) {
    config.settings.on_drain_request = [] {
      if (::kill(::getpid(), SIGTERM) != 0) spdlog::error("a drain request could not signal this process");
    };
  }
  try {
    cronwheel::executor::Executor executor(config.settings, ringwheel::RealClock::Instance());
    cronwheel::executor::RegisterBuiltinHandlers(executor, config.builtin);
    executor.Start();
    int sig = 0;
    do {
      sigwait(&signals, &sig);
    } while (sig == SIGUSR1);
    if (config.drain_timeout.count() > 0) {
      // Drain on a thread of its own, so that a second signal can end it (docs/operations.md).
      spdlog::info("signal {} received: draining for at most {} s (a second signal stops at once)", sig,
                   config.drain_timeout.count());
      const pthread_t main_thread = pthread_self();
      std::thread drain([&] {
        executor.Drain(config.drain_timeout);
        pthread_kill(main_thread, SIGUSR1);
      });
      sigwait(&signals, &sig);
      if (sig != SIGUSR1) {
        spdlog::info("signal {} received while draining: stopping now", sig);
        executor.AbandonDrain();
      }
      drain.join();
    } else {
      spdlog::info("signal {} received: stopping", sig);
    }
    executor.Stop();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 0;
}
