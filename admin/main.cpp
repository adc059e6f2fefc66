// cronwheel-admin: the scheduling center. Parses settings, runs AdminApp until SIGTERM/SIGINT.
#include <spdlog/spdlog.h>

#include <csignal>

#include "admin/app/admin_app.hpp"
#include "cronwheel/config.hpp"
#include "cronwheel/process_secrets.hpp"
#include "ringwheel/clock.hpp"

int main(int argc, char** argv) {
  // The database URI and the access token are kept from other processes of this user: not in
  // /proc/<pid>/environ, cmdline or mem (security review 2, F3; docs/security.md).
  const bool undumpable = cronwheel::MakeUndumpable();
  cronwheel::admin::AdminConfig config;
  cronwheel::ConfigLoader settings("cronwheel-admin", "cronwheel scheduling center (admin)");
  config.Declare(settings);
  if (auto code = settings.Parse(argc, argv)) return *code;
  settings.ScrubSecrets(argc, argv);
  if (!undumpable)
    spdlog::warn("this process could not be made non-dumpable: its memory is readable by its user");

  // Signals are taken by sigwait below, never by a handler on a random thread.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  cronwheel::admin::AdminApp app(config, ringwheel::RealClock::Instance());
  try {
    app.Start();
  } catch (const std::exception& e) {
    spdlog::error("cannot start: {}", e.what());
    return 1;
  }
  int sig = 0;
  sigwait(&signals, &sig);
  spdlog::info("signal {} received", sig);
  app.Shutdown();
  return 0;
}
