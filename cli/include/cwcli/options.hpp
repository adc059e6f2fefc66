#pragma once
// The command line of `cronwheel` (docs/cli.md): one command and its options, read with CLI11 into an
// Invocation, without touching the network or any file (the token file is read when the command runs).
// Where the admin is comes from --admin, else CRONWHEEL_ADMIN_URL, else http://127.0.0.1:8080; the API
// token from --token-file, else CRONWHEEL_API_TOKEN (never from a flag's default value, so it does not
// show in `ps` or in --help).
//
// Pure function of its arguments; thread-safe.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cwcli/job_file.hpp"
#include "cwcli/transfer.hpp"

namespace cronwheel::cli {

inline constexpr const char* kDefaultAdminUrl = "http://127.0.0.1:8080";
inline constexpr const char* kAdminUrlVariable = "CRONWHEEL_ADMIN_URL";
inline constexpr const char* kTokenVariable = "CRONWHEEL_API_TOKEN";
inline constexpr const char* kCaFileVariable = "CRONWHEEL_CA_FILE";

// The environment variables the client reads (name -> value); main() passes the process's, tests their own.
using Environment = std::map<std::string, std::string>;

enum class Command {
  kJobsList,
  kJobsShow,
  kJobsCreate,
  kJobsUpdate,
  kJobsStart,
  kJobsStop,
  kJobsTrigger,
  kJobsRunOnce,
  kJobsRunOnceList,
  kJobsRunOnceCancel,
  kJobsBulk,
  kJobsDelete,
  kJobsNext,
  kGroupsList,
  kCalendarsList,
  kCalendarsImport,
  kExecutorsList,
  kExecutorsDrain,
  kLogsTail,
  kLogsList,
  kWorkflowsList,
  kWorkflowsShow,
  kWorkflowsCreate,
  kWorkflowsUpdate,
  kWorkflowsDelete,
  kWorkflowsTrigger,
  kWorkflowsRuns,
  kWorkflowsRun,
  kWorkflowsKill,
  kWorkflowsRerun,
  kExport,
  kImport,
  kLogin,
  kLogout,
};

struct Invocation {
  Command command = Command::kJobsList;
  // Global options.
  std::string admin_url = kDefaultAdminUrl;
  std::string token;       // from CRONWHEEL_API_TOKEN ("" when unset)
  std::string token_file;  // --token-file: read when the command runs; wins over the variable
  std::string ca_file;  // from CRONWHEEL_CA_FILE: PEM certificates trusted for https ("" = the system's only)
  bool json = false;    // --json: the API's JSON instead of a table
  std::chrono::milliseconds timeout{30000};  // --timeout (seconds on the command line)
  // Command arguments (those the command has).
  std::optional<int> group_id;            // --group
  int job_id = 0;                         // jobs show|update|start|stop|trigger|delete ID
  std::int64_t log_id = 0;                // logs tail LOG_ID
  std::string file;                       // jobs|workflows create|update FILE, import FILE
  FileFormat format = FileFormat::kAuto;  // --format
  std::optional<std::string> param;       // jobs trigger|run-once --param
  std::optional<std::int64_t> at_ms;      // jobs run-once --at (epoch ms)
  std::optional<std::int64_t> delay_ms;   // jobs run-once --in
  std::int64_t run_id = 0;                // jobs run-once-cancel ID RUN_ID; workflows run|kill|rerun RUN_ID
  std::string bulk_action;                // jobs bulk ACTION: start, stop, trigger, delete, tag, untag
  std::vector<std::string> tags;          // jobs list --tag; jobs bulk tag|untag --tag
  std::optional<std::string> search;      // jobs list --search
  std::vector<int> job_ids;               // jobs bulk ACTION ID...
  std::optional<std::string> address;     // jobs trigger --address; executors drain ADDRESS
  bool yes = false;                       // jobs delete --yes, workflows delete --yes
  bool follow = false;                    // logs tail --follow
  int from_line = 1;                      // logs tail --from-line
  std::chrono::milliseconds poll_interval{1000};  // logs tail --interval (ms)
  std::optional<std::string> status;              // logs list --status
  int limit = 20;                                 // logs list --limit, workflows runs --limit
  std::string output;                             // export -o ("" = stdout)
  bool dry_run = false;                           // import --dry-run
  OnConflict on_conflict = OnConflict::kFail;     // import --on-conflict
  bool stopped = false;                           // import --stopped
  std::string time_zone = "UTC";                  // import --time-zone (XXL-JOB lists)
  int count = 5;                                  // jobs next --count
  std::string name;                               // calendars import --name
  std::optional<std::string> calendar_kind;       // calendars import --kind
  std::optional<std::string> calendar_zone;       // calendars import --zone
  std::optional<int> calendar_id;                 // calendars import --calendar (add to this one)
  // workflows
  int workflow_id = 0;                     // workflows show|update|delete|trigger|runs ID
  std::string node_key;                    // workflows rerun RUN_ID NODE_KEY
  bool wait = false;                       // workflows trigger --wait
  std::chrono::seconds wait_timeout{600};  // workflows trigger --wait-timeout
  // login (login.hpp)
  std::string login_name;                // --name: the token's name (default cronwheel-cli@<host>)
  std::string login_scope = "read";      // --scope: read, operate, write or admin
  int login_days = 90;                   // --days: the token's lifetime
  bool no_browser = false;               // --no-browser: only print the console's address
  std::chrono::seconds login_wait{300};  // --wait: how long to wait for the approval
  std::string saved_login;               // where logins are saved (SavedLoginPath; "" = nowhere)
  bool can_open_browser = false;         // a display to open a browser on ($DISPLAY, $WAYLAND_DISPLAY)
};

struct ParseOutcome {
  std::optional<Invocation> invocation;  // set when a command should run
  int exit_code = 0;                     // otherwise: 0 after --help, 2 (kExitUsage) for a usage error
  std::string out;                       // the help text to print on stdout
  std::string err;                       // the usage error to print on stderr
};

// Reads `args` (without the program name). --help on any command prints that command's help (exit 0); an
// unknown command or option, a missing or malformed argument is a usage error naming it (exit 2).
ParseOutcome ParseCommandLine(const std::vector<std::string>& args, const Environment& env);

}  // namespace cronwheel::cli
