#include "script_runner.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "cronwheel/mutex.hpp"
#include "cronwheel/status.hpp"
#include "posix_util.hpp"

namespace cronwheel::executor {
namespace {

constexpr std::array<ScriptGlue, 6> kScriptGlues{{
    {"GLUE_SHELL", "bash", ".sh"},
    {"GLUE_PYTHON", "python3", ".py"},
    {"GLUE_PYTHON2", "python2", ".py"},
    {"GLUE_NODEJS", "node", ".js"},
    {"GLUE_PHP", "php", ".php"},
    {"GLUE_POWERSHELL", "pwsh", ".ps1"},
}};

// posix_spawn attributes and file actions, destroyed on scope exit.
struct SpawnSetup {
  posix_spawnattr_t attr{};
  posix_spawn_file_actions_t actions{};
  SpawnSetup() {
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&actions);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

// Shared between the waiting thread, the stop callback and the SIGKILL escalation thread.
struct Child {
  explicit Child(pid_t p) : pid(p) {}
  cronwheel::Mutex mu;
  const pid_t pid;                          // set before the child is shared, never changed
  bool reaped ABSL_GUARDED_BY(mu) = false;  // once set, pid may be reused: never signal it again
  std::jthread killer;  // made by the stop callback under mu, joined once the callback is gone (unguarded:
                        // joining under mu would deadlock with the killer taking it)
};

}  // namespace

const ScriptGlue* FindScriptGlue(std::string_view glue_type) {
  for (const auto& g : kScriptGlues) {
    if (g.glue_type == glue_type) return &g;
  }
  return nullptr;
}

ScriptRunner::ScriptRunner(Settings settings, ringwheel::Clock& clock)
    : settings_(std::move(settings)), clock_(clock) {
  if (settings_.home.empty()) settings_.home = settings_.source_dir;
  // The fixed part first; a variable the operator passes through replaces it.
  std::vector<std::pair<std::string, std::string>> vars{{"PATH", std::string(kScriptPath)},
                                                        {"LANG", "C.UTF-8"},
                                                        {"LC_ALL", "C.UTF-8"},
                                                        {"HOME", settings_.home.string()}};
  const auto set = [&vars](const std::string& name, std::string value) {
    const auto it = std::find_if(vars.begin(), vars.end(), [&](const auto& v) { return v.first == name; });
    if (it != vars.end()) {
      it->second = std::move(value);
    } else {
      vars.emplace_back(name, std::move(value));
    }
  };
  // Nothing sets the environment after start: reading it here, once, is safe.
  if (const char* tz = std::getenv("TZ")) set("TZ", tz);  // NOLINT(concurrency-mt-unsafe)
  for (const auto& name : settings_.env_pass) {
    if (!CheckPassName(name).ok()) continue;  // Executor::Start refused it already
    if (const char* value = std::getenv(name.c_str())) set(name, value);  // NOLINT(concurrency-mt-unsafe)
  }
  for (auto& [name, value] : vars)
    base_env_.push_back(fmt::format("{}={}", name, value));
}

absl::Status ScriptRunner::CheckPassName(std::string_view name) {
  const auto valid_char = [](char c, bool first) {
    return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (!first && c >= '0' && c <= '9');
  };
  if (name.empty() || !valid_char(name.front(), true) ||
      !std::all_of(name.begin() + 1, name.end(), [&](char c) { return valid_char(c, false); })) {
    return absl::InvalidArgumentError(
        fmt::format("'{}' is not a variable name (letters, digits and '_', not starting with a digit)",
                    name.substr(0, 100)));
  }
  if (name.starts_with("CRONWHEEL_")) {
    return absl::PermissionDeniedError(
        fmt::format("'{}' cannot be passed to scripts: CRONWHEEL_* variables hold the executor's own "
                    "settings and secrets (CRONWHEEL_ACCESS_TOKEN) and the fire's variables",
                    name));
  }
  return absl::OkStatus();
}

std::vector<std::string> ScriptRunner::FireEnvironment(const FireInfo& fire) {
  return {
      fmt::format("CRONWHEEL_JOB_ID={}", fire.job_id),
      fmt::format("CRONWHEEL_LOG_ID={}", fire.log_id),
      fmt::format("CRONWHEEL_LOG_DATE_TIME={}", fire.log_date_time_ms),
      "CRONWHEEL_JOB_PARAM=" + fire.param,
      fmt::format("CRONWHEEL_SHARD_INDEX={}", fire.shard_index),
      fmt::format("CRONWHEEL_SHARD_TOTAL={}", fire.shard_total),
  };
}

std::optional<std::filesystem::path> ScriptRunner::FindInterpreter(std::string_view name) const {
  std::string search = settings_.search_path;
  if (search.empty()) {
    const char* p = std::getenv("PATH");  // NOLINT(concurrency-mt-unsafe): nothing sets env after start
    search = p != nullptr ? p : "/usr/local/bin:/usr/bin:/bin";
  }
  std::size_t start = 0;
  while (start <= search.size()) {
    auto colon = search.find(':', start);
    if (colon == std::string::npos) colon = search.size();
    const std::string dir = search.substr(start, colon - start);
    start = colon + 1;
    if (dir.empty()) continue;
    std::filesystem::path candidate = std::filesystem::path(dir) / std::string(name);
    if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) return candidate;
  }
  return std::nullopt;
}

absl::StatusOr<std::filesystem::path> ScriptRunner::WriteSource(int job_id, std::int64_t glue_updatetime,
                                                                const ScriptGlue& glue,
                                                                std::string_view source) const {
  const std::string prefix = std::to_string(job_id) + "_";
  const std::string name = prefix + std::to_string(glue_updatetime) + std::string(glue.suffix);
  std::filesystem::path path = settings_.source_dir / name;
  try {
    MakePrivateDir(settings_.source_dir);
    if (std::filesystem::exists(path)) return path;
    if (const absl::Status written = WriteFileAtomically(path, source, 0700); !written.ok()) {
      return absl::Status(written.code(), "cannot write the glue source: " + std::string(written.message()));
    }
    // Delete this job's older versions ("<jobId>_<smaller glueUpdatetime>.<suffix>"). Never a newer one:
    // a replaced thread still starting its old version must not delete the file of the version after it.
    for (const auto& e : std::filesystem::directory_iterator(settings_.source_dir)) {
      const auto f = e.path().filename().string();
      if (f == name || !f.starts_with(prefix)) continue;
      std::int64_t version = 0;
      const char* begin = f.data() + prefix.size();
      const auto [end, ec] = std::from_chars(begin, f.data() + f.size(), version);
      if (ec != std::errc{} || end == begin || *end != '.' || version >= glue_updatetime) continue;
      std::error_code rm;
      std::filesystem::remove(e.path(), rm);
    }
  } catch (const std::filesystem::filesystem_error& e) {
    return cronwheel::ErrnoError(e.code().value(), std::string("cannot write the glue source: ") + e.what());
  }
  return path;
}

JobResult ScriptRunner::Run(const ScriptGlue& glue, const std::filesystem::path& script,
                            const std::vector<std::string>& args, const std::vector<std::string>& fire_env,
                            const std::filesystem::path& log_file, const std::stop_token& stop,
                            const std::function<void(pid_t)>& on_spawn) const {
  const auto interpreter = FindInterpreter(glue.interpreter);
  if (!interpreter) {
    return {500,
            fmt::format("script interpreter '{}' for glueType[{}] was not found on PATH; install it on the "
                        "executor host or use another glue type",
                        glue.interpreter, glue.glue_type)};
  }
  if (stop.stop_requested()) return {500, "script not started: the fire was stopped"};

  const Fd log(::open(log_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, kPrivateFileMode));
  if (!log.ok())
    return {500, fmt::format("script not started: cannot open the job log: {}", ErrnoText(errno))};

  SpawnSetup s;
  posix_spawn_file_actions_addopen(&s.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&s.actions, log.get(), 1);
  posix_spawn_file_actions_adddup2(&s.actions, log.get(), 2);
  posix_spawn_file_actions_addclosefrom_np(&s.actions, 3);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&s.attr, &none);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM}) {
    sigaddset(&defaults, sig);
  }
  posix_spawnattr_setsigdefault(&s.attr, &defaults);
  posix_spawnattr_setflags(&s.attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> argv_store{interpreter->string(), script.string()};
  argv_store.insert(argv_store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(argv_store.size() + 1);
  for (auto& a : argv_store)
    argv.push_back(a.data());
  argv.push_back(nullptr);

  // The script's environment: the base one and the fire's, never the executor's own (see the header).
  try {
    MakePrivateDir(settings_.home);
  } catch (const std::filesystem::filesystem_error& e) {
    return {500, fmt::format("script not started: cannot create its HOME: {}", e.what())};
  }
  std::vector<std::string> env_store = base_env_;
  env_store.insert(env_store.end(), fire_env.begin(), fire_env.end());
  std::vector<char*> envp;
  envp.reserve(env_store.size() + 1);
  for (auto& e : env_store)
    envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = 0;
  if (const int rc = ::posix_spawn(&pid, interpreter->c_str(), &s.actions, &s.attr, argv.data(), envp.data());
      rc != 0) {
    return {500, fmt::format("script launch failed: {}", ErrnoText(rc))};
  }
  Child child(pid);
  if (on_spawn) on_spawn(pid);

  JobResult result;
  {
    // On stop: SIGTERM to the whole group now, SIGKILL after the grace period unless it is gone.
    const std::stop_callback on_stop(stop, [this, &child] {
      cronwheel::MutexLock lock(child.mu);
      if (child.reaped) return;
      ::kill(-child.pid, SIGTERM);
      child.killer = std::jthread([this, &child](const std::stop_token& st) {
        if (!clock_.WaitFor(settings_.kill_grace, st)) return;
        cronwheel::MutexLock inner(child.mu);
        if (!child.reaped) ::kill(-child.pid, SIGKILL);
      });
    });
    // Wait for the script without reaping it, so its pid (= the group id) cannot be reused meanwhile.
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
    }
    {
      cronwheel::MutexLock lock(child.mu);
      if (stop.stop_requested()) ::kill(-pid, SIGKILL);  // what is left of a stopped group
      child.reaped = true;
    }
    int status = 0;
    pid_t waited = -1;
    do {
      waited = ::waitpid(pid, &status, 0);
    } while (waited < 0 && errno == EINTR);
    int exit_value = -1;  // as XXL-JOB reports a launch/wait failure
    if (waited == pid && WIFEXITED(status)) {
      exit_value = WEXITSTATUS(status);
    } else if (waited == pid && WIFSIGNALED(status)) {
      exit_value = 128 + WTERMSIG(status);
    }
    result = exit_value == 0 ? JobResult{200, ""}
                             : JobResult{500, fmt::format("script exit value({}) is failed", exit_value)};
  }  // the stop callback is gone (or has finished) here
  if (child.killer.joinable()) {
    child.killer.request_stop();
    child.killer.join();
  }
  return result;
}

JobHandler ScriptRunner::MakeHandler(const ScriptGlue& glue, int job_id, std::int64_t glue_updatetime,
                                     std::string source) const {
  return [this, &glue, job_id, glue_updatetime, source = std::move(source)](JobContext& ctx) {
    if (ctx.stop_requested()) {
      ctx.Fail("script not started: the fire was stopped");
      return;
    }
    const auto script = WriteSource(job_id, glue_updatetime, glue, source);
    if (!script.ok()) {
      ctx.Fail(std::string(script.status().message()));
      return;
    }
    ctx.Log("----------- script file: {} -----------", script->string());
    const auto r = Run(glue, *script,
                       {ctx.param(), std::to_string(ctx.shard_index()), std::to_string(ctx.shard_total())},
                       FireEnvironment(ctx.fire()), ctx.log_path(), ctx.stop_token());
    ctx.SetResult(r.code, r.msg);
  };
}

}  // namespace cronwheel::executor
