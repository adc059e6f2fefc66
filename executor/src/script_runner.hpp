#pragma once
// Script (GLUE) jobs: the source is written once per version to
// <log dir>/gluesource/<jobId>_<glueUpdatetime><suffix> and run as
//   [interpreter, script, param, shardIndex, shardTotal]
// with stdout and stderr appended to the fire's job log and stdin from /dev/null (docs/xxl-job-protocol.md
// §10). Exit value 0 is handle code 200; anything else is 500 "script exit value(N) is failed" (a process
// ended by signal S counts as 128+S, as Java's Process.waitFor reports it).
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
  };
  ScriptRunner(Settings settings, ringwheel::Clock& clock);

  // Writes the source of one version if it does not exist yet; returns its path or "" with *error.
  std::filesystem::path WriteSource(int job_id, std::int64_t glue_updatetime, const ScriptGlue& glue,
                                    std::string_view source, std::string* error) const;
  // The interpreter's absolute path, or nullopt.
  [[nodiscard]] std::optional<std::filesystem::path> FindInterpreter(std::string_view name) const;

  // Runs [interpreter, script, args...] as described above and waits for it. Called with `stop`
  // already requested it starts nothing. `on_spawn` (tests) is called with the child's pid.
  JobResult Run(const ScriptGlue& glue, const std::filesystem::path& script,
                const std::vector<std::string>& args, const std::filesystem::path& log_file,
                const std::stop_token& stop, const std::function<void(pid_t)>& on_spawn = {}) const;

  // The handler of a script job: writes the source, logs its path, runs it with the fire's param and shard.
  [[nodiscard]] JobHandler MakeHandler(const ScriptGlue& glue, int job_id, std::int64_t glue_updatetime,
                                       std::string source) const;

 private:
  Settings settings_;
  ringwheel::Clock& clock_;
};

}  // namespace cronwheel::executor
