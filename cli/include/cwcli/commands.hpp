#pragma once
// The commands of `cronwheel` (docs/cli.md): each turns an Invocation into calls of the admin's REST API
// and prints the result, as an aligned table by default or as the API's JSON with --json. Results go to
// `out`; errors, warnings and notes to `err`, so `out` can be piped.
//
// Errors: every failure is a CommandError carrying its exit code, caught here and printed once as
// "cronwheel: <what was wrong>"; Run returns the exit code (api.hpp, ExitCode).
//
// Time: `logs tail --follow` waits between polls on the injected clock (never a sleep of its own).
//
// Thread-safety: one Run at a time per Api and Console.

#include <iosfwd>

#include "cwcli/api.hpp"
#include "cwcli/options.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::cli {

struct Console {
  std::ostream& out;         // results: tables, JSON, documents, a fire's output
  std::ostream& err;         // errors, warnings and notes
  std::istream& in;          // the answer to `jobs delete`'s question
  bool interactive = false;  // stdin is a terminal (so a question may be asked)
};

// Runs `inv` against `api`; returns the exit code.
int Run(const Invocation& inv, Api& api, ringwheel::Clock& clock, Console& console);

// What main() calls: reads the API token (--token-file, else CRONWHEEL_API_TOKEN; missing is a usage
// error), connects an HttpApi to the admin and runs `inv`.
int Execute(const Invocation& inv, ringwheel::Clock& clock, Console& console);

}  // namespace cronwheel::cli
