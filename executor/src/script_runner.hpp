#pragma once
// Script (GLUE) jobs: the source is written once per version to
// <log dir>/gluesource/<jobId>_<glueUpdatetime><suffix> and run as
//   [interpreter, script, param, shardIndex, shardTotal]
// with stdout and stderr appended to the fire's job log and stdin from /dev/null (docs/xxl-job-protocol.md
// §10).
//
// Environment (issue 21: a user's GLUE_SHELL job printed the executor's CRONWHEEL_ACCESS_TOKEN): a script
// gets a fixed, minimal environment, never the executor's own (docs/operations.md, "Script jobs"):
//   PATH=/usr/local/bin:/usr/bin:/bin, LANG=C.UTF-8, LC_ALL=C.UTF-8, HOME=<home> (the executor's
//   <log dir>/scripthome, created 0700), TZ as the executor has it (if set);
//   each variable named in `env_pass` (setting script_env_pass) that the executor has, with its value
//   (a name given there replaces the fixed value above: PATH, say);
//   the fire's (FireEnvironment): CRONWHEEL_JOB_ID, CRONWHEEL_LOG_ID, CRONWHEEL_LOG_DATE_TIME (epoch ms),
//   CRONWHEEL_JOB_PARAM, CRONWHEEL_SHARD_INDEX, CRONWHEEL_SHARD_TOTAL.
// The interpreter itself is still looked up on `search_path` (empty = the executor's PATH). Exit value 0 is
// handle code 200; anything else is 500 "script exit value(N) is failed" (a process ended by signal S counts
// as 128+S, as Java's Process.waitFor reports it).
//
// Improvements over XXL-JOB (§15 item 8):
//  * the script runs in a new session and process group (posix_spawn with POSIX_SPAWN_SETSID), so a
//    timeout, /kill or shutdown ends the whole group: SIGTERM first, SIGKILL after `kill_grace` (waited on
//    the injected Clock), and SIGKILL to whatever is left of the group once the script itself has exited;
//  * the child gets a clean signal mask and default dispositions, and no file descriptor of the executor
//    other than stdin/stdout/stderr (closefrom), so it cannot keep the executor's port open;
//  * a missing interpreter is a clear 500 naming it, before anything is started.
// The source file is written to a temporary name and renamed (never half-written); writing a version
// deletes the job's files of older versions (XXL-JOB deletes all others; a newer one is kept here so a
// replaced thread still starting cannot delete its successor's file).
//
// Thread-safety: all members may be called from any thread.

#include <absl/status/statusor.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "executor/job_context.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::executor {

struct ScriptGlue {
  std::string_view glue_type;    // GLUE_SHELL, ...
  std::string_view interpreter;  // looked up on PATH
  std::string_view suffix;       // .sh, ...
};
// The script glue type named `glue_type`, or nullptr (BEAN, GLUE_GROOVY, unknown).
const ScriptGlue* FindScriptGlue(std::string_view glue_type);

class ScriptRunner final {
 public:
  struct Settings {
    std::filesystem::path source_dir;            // <log dir>/gluesource (created 0700)
    std::chrono::milliseconds kill_grace{5000};  // SIGTERM -> SIGKILL
    std::string search_path;                     // PATH for interpreters; empty = the process's
    std::filesystem::path home;                  // HOME of scripts (created 0700); empty = source_dir
    std::vector<std::string> env_pass;           // script_env_pass: variables passed through by name
  };
  // The fixed PATH of scripts.
  static constexpr std::string_view kScriptPath = "/usr/local/bin:/usr/bin:/bin";

  // Reads TZ and the variables of `env_pass` from the process's environment once, here.
  ScriptRunner(Settings settings, ringwheel::Clock& clock);

  // OK when script_env_pass may pass `name` through; otherwise InvalidArgument for what is not a variable
  // name ("'1ABC' is not a variable name (letters, digits and '_', not starting with a digit)") and
  // PermissionDenied for one of cronwheel's own (CRONWHEEL_* holds the executor's settings and secrets, and
  // the fire's variables): "'CRONWHEEL_ACCESS_TOKEN' cannot be passed to scripts: ...".
  static absl::Status CheckPassName(std::string_view name);
  // The fire's variables, "NAME=value" (see the header comment).
  static std::vector<std::string> FireEnvironment(const FireInfo& fire);
  // The environment of every script without the fire's variables, "NAME=value" (tests, diagnostics).
  [[nodiscard]] const std::vector<std::string>& BaseEnvironment() const { return base_env_; }

  // Writes the source of one version if it does not exist yet; returns its path, or a status (its code
  // follows errno) whose message says the source could not be written and why, e.g.
  //   "cannot write the glue source: cannot create /src/.7_1.sh.0123456789abcdef.tmp: No space left on
  //   device".
  absl::StatusOr<std::filesystem::path> WriteSource(int job_id, std::int64_t glue_updatetime,
                                                    const ScriptGlue& glue, std::string_view source) const;
  // The interpreter's absolute path, or nullopt.
  [[nodiscard]] std::optional<std::filesystem::path> FindInterpreter(std::string_view name) const;

  // Runs [interpreter, script, args...] as described above and waits for it, with the base environment
  // plus `fire_env` ("NAME=value", FireEnvironment). Called with `stop` already requested it starts
  // nothing. `on_spawn` (tests) is called with the child's pid.
  JobResult Run(const ScriptGlue& glue, const std::filesystem::path& script,
                const std::vector<std::string>& args, const std::vector<std::string>& fire_env,
                const std::filesystem::path& log_file, const std::stop_token& stop,
                const std::function<void(pid_t)>& on_spawn = {}) const;

  // The handler of a script job: writes the source, logs its path, runs it with the fire's param and shard.
  [[nodiscard]] JobHandler MakeHandler(const ScriptGlue& glue, int job_id, std::int64_t glue_updatetime,
                                       std::string source) const;

 private:
  Settings settings_;
  ringwheel::Clock& clock_;
  std::vector<std::string> base_env_;
};

}  // namespace cronwheel::executor
