#pragma once
// Real processes for end-to-end tests: spawn a program with arguments and environment, its stdout and
// stderr appended to a log file; signal it (SIGTERM, SIGKILL for "kill -9"), wait for it with a bound;
// the destructor kills what is still running, so a failing test leaves nothing behind. Plus loopback
// helpers: a free TCP port, and polling an HTTP endpoint until it answers, with a deadline (never a fixed
// sleep).
//
// Thread-safety: a ChildProcess belongs to one thread.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cwtest {

class ChildProcess {
 public:
  struct Options {
    std::string program;                     // path of the executable
    std::vector<std::string> args;           // without argv[0]
    std::map<std::string, std::string> env;  // added to (or replacing in) the test's environment
    std::string log_path;                    // stdout + stderr are appended here ("" = /dev/null)
    std::string stderr_path;                 // when set, stderr is appended here instead of to log_path
    bool clean_env = false;  // start from PATH only (plus `env`): no CRONWHEEL_* of the caller leaks in
  };

  explicit ChildProcess(Options options);  // starts it; throws std::runtime_error if it cannot
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] bool running();
  void Signal(int sig) const;
  // Waits until it exits; returns its exit code (128 + signal when killed by one), or nullopt at the
  // timeout. After it has exited, returns the same code again.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  // SIGTERM, then SIGKILL after `grace`; returns the exit code as Wait().
  int Stop(std::chrono::milliseconds grace = std::chrono::seconds(10));
  // SIGKILL, as `kill -9`.
  void Kill();
  // Starts the same program again (after it exited or was killed).
  void Restart();
  [[nodiscard]] const Options& options() const { return options_; }
  // The tail of the log file, for failure messages; Output() is all of it.
  [[nodiscard]] std::string LogTail(std::size_t bytes = 4000) const;
  [[nodiscard]] std::string Output() const { return LogTail(std::string::npos); }

 private:
  void Spawn();
  Options options_;
  pid_t pid_ = -1;
  bool reaped_ = true;
  int exit_code_ = -1;
};

// A TCP port on 127.0.0.1 that was free a moment ago.
int FreeTcpPort();

// The first executable `name` in PATH, or "" (ChildProcess needs a path): for programs the tests start but
// did not build (node, python3).
std::string FindInPath(const std::string& name);
// The whole file ("" when it cannot be read).
std::string ReadWholeFile(const std::filesystem::path& path);

// Polls GET http://127.0.0.1:<port><path> until it answers `status` (and, when given, a body containing
// `contains`), or the timeout passes. Returns whether it did.
bool WaitForHttp(int port, const std::string& path, std::chrono::milliseconds timeout, int status = 200,
                 const std::string& contains = "");

// Waits until something accepts TCP connections on 127.0.0.1:<port>.
bool WaitForTcp(int port, std::chrono::milliseconds timeout);

// Waits until `condition()` holds, checking every `poll`, at most `timeout`. Returns whether it held.
template <class Condition>
bool Eventually(Condition condition, std::chrono::milliseconds timeout,
                std::chrono::milliseconds poll = std::chrono::milliseconds(100));

}  // namespace cwtest

#include <thread>

template <class Condition>
bool cwtest::Eventually(Condition condition, std::chrono::milliseconds timeout,
                        std::chrono::milliseconds poll) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(poll);  // e2e tests run on real time by design
  }
  return true;
}
