#pragma once
// Running a command line through /bin/sh from a test and reading what it printed: for tests that check
// our binaries or outside tools (promtool, the Python Prometheus parser, scripts/pg) as a user runs them.
//
// Thread-safety: each call is independent (popen). Blocks until the command exits.

#include <string>

namespace cwtest {

struct ShellRun {
  int exit_code = -1;  // the command's exit status; -1 if it could not be started or was killed by a signal
  std::string out;     // its standard output (add "2>&1" to the command for standard error too)
};

// Runs `command` with /bin/sh -c and collects its standard output until it exits.
ShellRun RunShell(const std::string& command);

}  // namespace cwtest
