#include "cwtest/process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace cwtest {

ChildProcess::ChildProcess(Options options) : options_(std::move(options)) {
  Spawn();
}

ChildProcess::~ChildProcess() {
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

void ChildProcess::Spawn() {
  std::map<std::string, std::string> env;
  if (options_.clean_env) {
    const char* path = std::getenv("PATH");  // NOLINT(concurrency-mt-unsafe): before any thread of the child
    env["PATH"] = path != nullptr ? path : "/usr/bin:/bin";
  }
  for (char** e = environ; !options_.clean_env && *e != nullptr; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : options_.env)
    env[k] = v;
  std::vector<std::string> env_store;
  env_store.reserve(env.size());
  for (const auto& [k, v] : env)
    env_store.push_back(fmt::format("{}={}", k, v));
  std::vector<char*> envp;
  envp.reserve(env_store.size());
  for (auto& s : env_store)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_store{options_.program};
  argv_store.insert(argv_store.end(), options_.args.begin(), options_.args.end());
  std::vector<char*> argv;
  argv.reserve(argv_store.size());
  for (auto& s : argv_store)
    argv.push_back(s.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  const std::string log = options_.log_path.empty() ? "/dev/null" : options_.log_path;
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (options_.stderr_path.empty()) {
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
  } else {
    posix_spawn_file_actions_addopen(&fa, 2, options_.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
  }
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // The child must not inherit a blocked SIGTERM/SIGINT mask or ignored signals from the test.
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigset_t defaults;
  sigfillset(&defaults);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const int rc = ::posix_spawn(&pid_, argv[0], &fa, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    throw std::runtime_error("cannot start " + options_.program + ": " + std::system_category().message(rc));
  reaped_ = false;
}

namespace {
int ExitCode(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
}  // namespace

bool ChildProcess::running() {
  if (reaped_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    reaped_ = true;
    exit_code_ = ExitCode(status);
    return false;
  }
  return true;
}

void ChildProcess::Signal(int sig) const {
  if (!reaped_) ::kill(pid_, sig);
}

std::optional<int> ChildProcess::Wait(std::chrono::milliseconds timeout) {
  if (reaped_) return exit_code_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      exit_code_ = ExitCode(status);
      return exit_code_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int ChildProcess::Stop(std::chrono::milliseconds grace) {
  Signal(SIGTERM);
  if (auto s = Wait(grace)) return *s;
  Kill();
  return Wait(std::chrono::seconds(10)).value_or(-1);
}

void ChildProcess::Kill() {
  Signal(SIGKILL);
  Wait(std::chrono::seconds(10));
}

void ChildProcess::Restart() {
  if (!reaped_) Kill();
  Spawn();
}

std::string ChildProcess::LogTail(std::size_t bytes) const {
  std::ifstream in(options_.log_path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const auto all = ss.str();
  return bytes != std::string::npos && all.size() > bytes ? all.substr(all.size() - bytes) : all;
}

std::string FindInPath(const std::string& name) {
  const char* path = std::getenv("PATH");  // NOLINT(concurrency-mt-unsafe): the tests read it, never set it
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const auto candidate = std::filesystem::path(dir.empty() ? "." : dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

std::string ReadWholeFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int FreeTcpPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    throw std::runtime_error("FreeTcpPort: cannot bind a loopback port");
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

bool WaitForTcp(int port, std::chrono::milliseconds timeout) {
  return Eventually(
      [&] {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = htons(static_cast<std::uint16_t>(port));
        const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
        ::close(fd);
        return ok;
      },
      timeout, std::chrono::milliseconds(50));
}

bool WaitForHttp(int port, const std::string& path, std::chrono::milliseconds timeout, int status,
                 const std::string& contains) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(1, 0);
  client.set_read_timeout(2, 0);
  return Eventually(
      [&] {
        auto res = client.Get(path);
        return res && res->status == status &&
               (contains.empty() || res->body.find(contains) != std::string::npos);
      },
      timeout, std::chrono::milliseconds(100));
}

}  // namespace cwtest
