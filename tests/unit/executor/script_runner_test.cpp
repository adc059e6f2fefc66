#include "script_runner.hpp"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <future>
#include <map>
#include <optional>
#include <sstream>

#include "cwtest/fake_clock.hpp"
#include "cwtest/status_testing.hpp"
#include "posix_util.hpp"
#include "test_util.hpp"

namespace {

using namespace cronwheel::executor;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

const cronwheel::executor::ScriptGlue& kShell = *FindScriptGlue("GLUE_SHELL");  // NOLINT(cert-err58-cpp)

// Orphaned grandchildren (the script's background jobs) are re-parented to this test process, which can
// then reap them: so "dead" means gone, whatever PID 1 of the machine does with zombies.
class ScriptRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }

  // Writes `source` as a script and returns its path.
  std::filesystem::path Script(const std::string& source) {
    auto p = runner_.WriteSource(++version_, 1, kShell, source);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.value_or(std::filesystem::path());
  }

  cwtest::TempDir dir_;
  cwtest::FakeClock clock_;
  ScriptRunner runner_{{dir_.path() / "gluesource", std::chrono::milliseconds(3000), ""}, clock_};
  std::filesystem::path log_ = dir_.path() / "job.log";
  int version_ = 0;
};

// Waits (bounded, on the kernel's exit notification) until `pid` has exited, reaps it if it is our
// child, and reports whether it is gone.
bool WaitGone(pid_t pid, std::chrono::milliseconds timeout = 5s) {
  // glibc 2.36's <sys/pidfd.h> lacks extern "C": call the system call directly.
  const cronwheel::executor::Fd fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (fd.ok()) {
    pollfd p{fd.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return false;
  }
  ::waitpid(pid, nullptr, WNOHANG);
  return ::kill(pid, 0) == -1 && errno == ESRCH;
}

// Reads one integer written by the script into the FIFO (blocks until the script has written it).
pid_t ReadPid(const std::filesystem::path& fifo) {
  const cronwheel::executor::Fd fd(::open(fifo.c_str(), O_RDONLY | O_CLOEXEC));
  char buf[32] = {};
  const auto n = ::read(fd.get(), buf, sizeof buf - 1);
  return n > 0 ? static_cast<pid_t>(std::stol(std::string(buf, static_cast<std::size_t>(n)))) : -1;
}

TEST_F(ScriptRunnerTest, ExitValueZeroIsSuccessOtherwiseFailure) {
  const std::stop_source stop;
  EXPECT_EQ(runner_.Run(kShell, Script("exit 0"), {}, {}, log_, stop.get_token()).code, 200);
  const JobResult r = runner_.Run(kShell, Script("exit 3"), {}, {}, log_, stop.get_token());
  EXPECT_EQ(r.code, 500);
  EXPECT_EQ(r.msg, "script exit value(3) is failed");
}

TEST_F(ScriptRunnerTest, ParamAndShardArgsAndBothOutputStreamsReachTheLog) {
  const std::stop_source stop;
  const auto r =
      runner_.Run(kShell, Script(R"(echo "args:$1|$2|$3"; echo oops >&2; read -t 1 x; echo "stdin:$?")"),
                  {"hello world", "2", "5"}, {}, log_, stop.get_token());
  EXPECT_EQ(r.code, 200) << r.msg;
  const auto log = cwtest::ReadAll(log_);
  EXPECT_THAT(log, HasSubstr("args:hello world|2|5\n"));
  EXPECT_THAT(log, HasSubstr("oops\n"));
  EXPECT_THAT(log, HasSubstr("stdin:1\n"));  // stdin is /dev/null: read hits EOF at once
}

TEST_F(ScriptRunnerTest, TheScriptGetsNoExecutorFileDescriptors) {
  // No O_CLOEXEC. Numbered from 100: the low numbers are the shell's own while it runs the pipeline below
  // (the pipe between ls and tr is fds 3 and 4 of the shell until it has started both).
  const cronwheel::executor::Fd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(devnull.ok());
  const cronwheel::executor::Fd leaked(::fcntl(devnull.get(), F_DUPFD, 100));
  ASSERT_TRUE(leaked.ok());
  const std::stop_source stop;
  const auto r = runner_.Run(kShell, Script("ls /proc/$$/fd | tr '\\n' ' '"), {}, {}, log_, stop.get_token());
  EXPECT_EQ(r.code, 200);
  const auto log = cwtest::ReadAll(log_);
  EXPECT_THAT(log, ::testing::Not(HasSubstr(" " + std::to_string(leaked.get()) + " ")));
}

// Sets an environment variable of the test process for one test and restores it after. Only while no
// other thread of the test runs (setenv is not thread-safe).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);  // NOLINT(concurrency-mt-unsafe)
    if (old != nullptr) old_ = old;
    ::setenv(name, value, 1);  // NOLINT(concurrency-mt-unsafe)
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
    } else {
      ::unsetenv(name_.c_str());  // NOLINT(concurrency-mt-unsafe)
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// The variables `env` printed (NAME=value per line), without those the shell itself exports (PWD, SHLVL, _).
std::map<std::string, std::string> PrintedEnvironment(const std::string& log) {
  std::map<std::string, std::string> vars;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const auto name = line.substr(0, eq);
    if (name == "PWD" || name == "OLDPWD" || name == "SHLVL" || name == "_") continue;
    vars[name] = line.substr(eq + 1);
  }
  return vars;
}

// Issue 21: a USER's GLUE_SHELL job printed the executor's CRONWHEEL_ACCESS_TOKEN. A script gets a fixed,
// minimal environment: nothing of the executor's but TZ and the variables named by script_env_pass.
TEST_F(ScriptRunnerTest, TheScriptGetsAMinimalEnvironmentAndNoneOfTheExecutorsSecrets) {
  const ScopedEnv token("CRONWHEEL_ACCESS_TOKEN", "s3cret-token-of-the-executor");
  const ScopedEnv other("CW_TEST_NOT_PASSED", "private");
  const ScopedEnv passed("CW_TEST_PASSED", "passed through");
  const ScopedEnv tz("TZ", "Europe/Berlin");
  const ScopedEnv path("PATH", "/opt/executor-only/bin:/usr/local/bin:/usr/bin:/bin");
  const ScriptRunner runner({.source_dir = dir_.path() / "gluesource",
                             .kill_grace = 1s,
                             .home = dir_.path() / "scripthome",
                             .env_pass = {"CW_TEST_PASSED", "CW_TEST_UNSET"}},
                            clock_);
  const auto script = runner.WriteSource(70, 1, kShell, "env");
  ASSERT_TRUE(script.ok()) << script.status();
  const FireInfo fire{.job_id = 70,
                      .log_id = 7001,
                      .log_date_time_ms = 1767225600123,
                      .param = "a b=c",
                      .shard_index = 2,
                      .shard_total = 5};
  const std::stop_source stop;
  const auto r = runner.Run(kShell, *script, {fire.param, "2", "5"}, ScriptRunner::FireEnvironment(fire),
                            log_, stop.get_token());
  ASSERT_EQ(r.code, 200) << r.msg;
  const auto log = cwtest::ReadAll(log_);
  EXPECT_THAT(log, ::testing::Not(HasSubstr("s3cret-token-of-the-executor")));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("private")));
  const std::map<std::string, std::string> expected{
      {"PATH", "/usr/local/bin:/usr/bin:/bin"},
      {"LANG", "C.UTF-8"},
      {"LC_ALL", "C.UTF-8"},
      {"HOME", (dir_.path() / "scripthome").string()},
      {"TZ", "Europe/Berlin"},
      {"CW_TEST_PASSED", "passed through"},
      {"CRONWHEEL_JOB_ID", "70"},
      {"CRONWHEEL_LOG_ID", "7001"},
      {"CRONWHEEL_LOG_DATE_TIME", "1767225600123"},
      {"CRONWHEEL_JOB_PARAM", "a b=c"},
      {"CRONWHEEL_SHARD_INDEX", "2"},
      {"CRONWHEEL_SHARD_TOTAL", "5"},
  };
  EXPECT_EQ(PrintedEnvironment(log), expected) << log;
  struct stat st {};
  ASSERT_EQ(::stat((dir_.path() / "scripthome").c_str(), &st), 0);  // HOME exists, the executor's own
  EXPECT_EQ(st.st_mode & 0777, 0700U);
}

// Issue 21: the log file a script's output goes to, its source and the folders around them are the
// executor user's only, whatever the umask.
TEST(ScriptRunner, WhatAScriptRunMakesIsTheOwnersOnlyWhateverTheUmask) {
  const cwtest::ZeroUmask umask0;
  cwtest::TempDir dir;
  cwtest::FakeClock clock;
  const ScriptRunner runner({.source_dir = dir.path() / "logs" / "gluesource",
                             .kill_grace = 1s,
                             .home = dir.path() / "logs" / "home"},
                            clock);
  const auto script = runner.WriteSource(1, 1, kShell, "echo hello");
  ASSERT_TRUE(script.ok()) << script.status();
  const std::stop_source stop;
  ASSERT_EQ(runner.Run(kShell, *script, {}, {}, dir.path() / "logs" / "1.log", stop.get_token()).code, 200);
  EXPECT_EQ(cwtest::ReadAll(dir.path() / "logs" / "1.log"), "hello\n");
  EXPECT_THAT(cwtest::NotOwnerOnly(dir.path() / "logs"), ::testing::IsEmpty());
}

TEST(ScriptRunner, OnlyVariableNamesThatAreNotCronwheelsOwnMayBePassed) {
  for (const char* ok : {"HTTP_PROXY", "_x", "PATH", "lower_case1"}) {
    EXPECT_EQ(ScriptRunner::CheckPassName(ok), absl::OkStatus()) << ok;
  }
  for (const char* bad : {"", "1ABC", "A-B", "A=B", "A B"}) {
    EXPECT_THAT(cwtest::ErrorOf(ScriptRunner::CheckPassName(bad)), HasSubstr("is not a variable name"))
        << bad;
  }
  EXPECT_THAT(cwtest::ErrorOf(ScriptRunner::CheckPassName("CRONWHEEL_ACCESS_TOKEN"),
                              absl::StatusCode::kPermissionDenied),
              HasSubstr("'CRONWHEEL_ACCESS_TOKEN' cannot be passed to scripts"));
}

TEST_F(ScriptRunnerTest, StopEndsTheWholeProcessGroup) {
  const auto fifo = dir_.path() / "pids";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::stop_source stop;
  pid_t leader = -1;
  auto run = std::async(std::launch::async, [&] {
    return runner_.Run(kShell, Script("sleep 30 & echo $! > \"$1\"; wait"), {fifo.string()}, {}, log_,
                       stop.get_token(), [&](pid_t p) { leader = p; });
  });
  const pid_t child = ReadPid(fifo);
  ASSERT_GT(child, 0);
  stop.request_stop();  // SIGTERM to the group
  ASSERT_EQ(run.wait_for(5s), std::future_status::ready);
  const auto r = run.get();
  EXPECT_EQ(r.msg, "script exit value(143) is failed");  // 128 + SIGTERM
  EXPECT_TRUE(WaitGone(leader));
  EXPECT_TRUE(WaitGone(child)) << "the script's background child survived";
}

TEST_F(ScriptRunnerTest, AGroupIgnoringSigtermGetsSigkillAfterTheGracePeriod) {
  const auto fifo = dir_.path() / "pids";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::stop_source stop;
  auto run = std::async(std::launch::async, [&] {
    return runner_.Run(kShell, Script("trap '' TERM; sleep 30 & echo $! > \"$1\"; wait; wait"),
                       {fifo.string()}, {}, log_, stop.get_token());
  });
  const pid_t child = ReadPid(fifo);
  ASSERT_GT(child, 0);
  stop.request_stop();
  ASSERT_TRUE(clock_.AwaitWaiters(1));  // the escalation waits for the grace period on the clock
  EXPECT_NE(run.wait_for(0s), std::future_status::ready);  // SIGTERM was ignored
  clock_.Advance(3s);
  ASSERT_EQ(run.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(run.get().msg, "script exit value(137) is failed");  // 128 + SIGKILL
  EXPECT_TRUE(WaitGone(child));
}

TEST_F(ScriptRunnerTest, AStoppedFireStartsNothing) {
  std::stop_source stop;
  stop.request_stop();
  const auto r = runner_.Run(kShell, Script("echo ran"), {}, {}, log_, stop.get_token());
  EXPECT_EQ(r.code, 500);
  EXPECT_FALSE(std::filesystem::exists(log_));
}

TEST_F(ScriptRunnerTest, AMissingInterpreterIsAClearFailure) {
  ScriptRunner runner({dir_.path() / "gluesource", 1s, (dir_.path() / "empty-bin").string()}, clock_);
  const std::stop_source stop;
  const auto r =
      runner.Run(*FindScriptGlue("GLUE_NODEJS"), Script("console.log(1)"), {}, {}, log_, stop.get_token());
  EXPECT_EQ(r.code, 500);
  EXPECT_THAT(r.msg, HasSubstr("interpreter 'node' for glueType[GLUE_NODEJS] was not found on PATH"));
}

TEST_F(ScriptRunnerTest, SourceIsWrittenOncePerVersionAndOldVersionsAreDeleted) {
  const auto v1 = runner_.WriteSource(1, 100, kShell, "echo one");
  ASSERT_TRUE(v1.ok()) << v1.status();
  EXPECT_EQ(*v1, dir_.path() / "gluesource" / "1_100.sh");
  const auto again = runner_.WriteSource(1, 100, kShell, "echo changed?");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *v1);
  EXPECT_EQ(cwtest::ReadAll(*v1), "echo one");
  const auto other = runner_.WriteSource(12, 100, kShell, "echo twelve");
  const auto v2 = runner_.WriteSource(1, 200, kShell, "echo two");
  ASSERT_TRUE(other.ok() && v2.ok()) << other.status() << "; " << v2.status();
  EXPECT_FALSE(std::filesystem::exists(*v1));
  EXPECT_TRUE(std::filesystem::exists(*v2));
  EXPECT_TRUE(std::filesystem::exists(*other));  // job 12 is not job 1
  // An older version written late (a replaced thread) does not delete the newer one.
  const auto late = runner_.WriteSource(1, 150, kShell, "echo late");
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_TRUE(std::filesystem::exists(*late));
  EXPECT_TRUE(std::filesystem::exists(*v2));
  struct stat st {};
  ASSERT_EQ(::stat((dir_.path() / "gluesource").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700U);
}

TEST(ScriptGlue, KnownTypes) {
  EXPECT_EQ(FindScriptGlue("GLUE_PYTHON")->interpreter, "python3");
  EXPECT_EQ(FindScriptGlue("GLUE_PYTHON2")->interpreter, "python2");
  EXPECT_EQ(FindScriptGlue("GLUE_POWERSHELL")->interpreter, "pwsh");
  EXPECT_EQ(FindScriptGlue("GLUE_PHP")->suffix, ".php");
  EXPECT_EQ(FindScriptGlue("GLUE_NODEJS")->suffix, ".js");
  EXPECT_EQ(FindScriptGlue("BEAN"), nullptr);
  EXPECT_EQ(FindScriptGlue("GLUE_GROOVY"), nullptr);
}

}  // namespace
