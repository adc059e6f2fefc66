// cronwheel: the command-line client of a cronwheel admin (docs/cli.md). This file only hands the
// process's arguments, environment, streams and clock to the cwcli library.
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <iostream>

#include "cwcli/commands.hpp"
#include "cwcli/options.hpp"
#include "ringwheel/clock.hpp"

int main(int argc, char** argv) {
  // `cronwheel logs tail 12 | head` closes the pipe early: a failed write, not death by SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);  // NOLINT(cert-err33-c): the previous handler is of no interest
  namespace cli = cronwheel::cli;
  cli::Environment env;
  for (const char* name : {cli::kAdminUrlVariable, cli::kTokenVariable, "HOME", "XDG_CONFIG_HOME", "DISPLAY",
                           "WAYLAND_DISPLAY"}) {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): one thread, before anything else runs
    if (const char* value = std::getenv(name)) env[name] = value;
  }
  const auto parsed = cli::ParseCommandLine({argv + 1, argv + argc}, env);
  if (!parsed.invocation) {
    std::cout << parsed.out;
    std::cerr << parsed.err;
    return parsed.exit_code;
  }
  cli::Console console{.out = std::cout, .err = std::cerr, .in = std::cin, .interactive = ::isatty(0) == 1};
  return cli::Execute(*parsed.invocation, ringwheel::RealClock::Instance(), console);
}
