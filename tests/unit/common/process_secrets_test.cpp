// Keeping a process's secrets from other processes of its user (cronwheel/process_secrets.hpp; security
// review 2, F3). What the kernel shows is checked in forked children, which share the test's memory layout:
// /proc/self/environ and /proc/self/cmdline read the bytes execve put on the stack, which the scrubbing must
// overwrite (unsetenv alone changes neither). The end-to-end check, a script of a real executor, is
// ExecutorF3E2E.* (tests/e2e/executor/executor_e2e_test.cpp).
#include "cronwheel/process_secrets.hpp"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "cronwheel/config.hpp"

namespace {

// Runs `child` in a forked process; its exit code (0: every check in it held).
int InChild(const std::function<int()>& child) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(child());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

std::string ReadProc(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(ProcessSecrets, F3_AScrubbedVariableIsGoneFromProcSelfEnvironNotOnlyFromGetenv) {
  const char* path = std::getenv("PATH");  // NOLINT(concurrency-mt-unsafe): no other thread yet
  if (path == nullptr || std::strlen(path) < 4) GTEST_SKIP() << "needs PATH in the environment the test got";
  const std::string value = path;
  EXPECT_EQ(InChild([&] {
              if (ReadProc("/proc/self/environ").find("PATH=" + value) == std::string::npos) return 1;
              if (!cronwheel::ScrubEnvironment("PATH")) return 2;
              if (std::getenv("PATH") != nullptr) return 3;  // NOLINT(concurrency-mt-unsafe)
              if (ReadProc("/proc/self/environ").find(value) != std::string::npos) return 4;
              return 0;
            }),
            0);
  EXPECT_FALSE(cronwheel::ScrubEnvironment("CRONWHEEL_NO_SUCH_VARIABLE_F3"));
}

TEST(ProcessSecrets, F3_AFlagsValueIsOverwrittenInPlaceInBothSpellings) {
  std::string a0 = "prog", a1 = "--access-token", a2 = "s3cret", a3 = "--access-token=other", a4 = "--listen",
              a5 = "x";
  std::vector<char*> argv{a0.data(), a1.data(), a2.data(), a3.data(), a4.data(), a5.data()};
  EXPECT_EQ(cronwheel::ScrubArguments(static_cast<int>(argv.size()), argv.data(), "--access-token"), 2);
  EXPECT_EQ(a2, std::string(6, '\0'));
  EXPECT_EQ(a3, "--access-token=" + std::string(5, '\0'));
  EXPECT_EQ(a5, "x") << "other flags are left alone";
  // A flag last, without its value, is left alone (the parser refused it already).
  std::string b1 = "--access-token";
  std::vector<char*> short_argv{a0.data(), b1.data()};
  EXPECT_EQ(cronwheel::ScrubArguments(2, short_argv.data(), "--access-token"), 0);
}

TEST(ProcessSecrets, F3_AnUndumpableProcessSaysSoAndItsChildrenAfterExecAreNot) {
  EXPECT_EQ(InChild([] {
              if (!cronwheel::MakeUndumpable()) return 1;
              return ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : 2;
            }),
            0);
}

TEST(ConfigLoader, F3_ScrubSecretsOverwritesTheSecretsGivenInTheEnvironmentAndAsFlagsAndKeepsTheirValues) {
  EXPECT_EQ(InChild([] {
              std::string token, metrics, listen;
              cronwheel::ConfigLoader loader("prog", "test");
              loader.AddSecret("access_token", &token, "t")
                  .AddSecret("metrics_token", &metrics, "m")
                  .Add("listen", &listen, "l");
              ::setenv("CRONWHEEL_METRICS_TOKEN", "from-the-env", 1);  // NOLINT(concurrency-mt-unsafe)
              std::string a0 = "prog", a1 = "--access-token", a2 = "from-a-flag", a3 = "--listen", a4 = "h:1";
              std::vector<char*> argv{a0.data(), a1.data(), a2.data(), a3.data(), a4.data()};
              if (loader.Parse(static_cast<int>(argv.size()), argv.data())) return 1;
              const auto scrubbed = loader.ScrubSecrets(static_cast<int>(argv.size()), argv.data());
              if (scrubbed != std::vector<std::string>{"access_token", "metrics_token"}) return 2;
              if (token != "from-a-flag" || metrics != "from-the-env" || listen != "h:1") return 3;
              if (a2 != std::string(11, '\0') || a4 != "h:1") return 4;
              // NOLINTNEXTLINE(concurrency-mt-unsafe): the child has one thread
              if (std::getenv("CRONWHEEL_METRICS_TOKEN") != nullptr) return 5;
              return 0;
            }),
            0);
}

}  // namespace
