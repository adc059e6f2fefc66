// End-to-end tests of the cronwheel-executor binary against a protocol-faithful fake admin (dialect A),
// on loopback. Every test starts its own admin and executor processes and stops them, also on failure
// (destructors). Waits are polls with deadlines, never fixed sleeps.
//
// The admin-outage test keeps the admin down for kOutage (60 s, the issue's scenario); set
// CRONWHEEL_E2E_OUTAGE_S to shorten it locally.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cronwheel/net/http_address.hpp"
#include "cwtest/fake_admin.hpp"
#include "cwtest/process.hpp"
#include "xxljob/framing.hpp"
#include "xxljob/protocol.hpp"

namespace {

using cronwheel::xxljob::Envelope;
using cronwheel::xxljob::HandleCallbackParam;
using ::testing::HasSubstr;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* kToken = "e2e-secret-token";
// The fires' logDateTime: the test's start. A fixed date would be older than the executor's log retention
// (30 days), whose first pass at start-up deletes that day's folder, racing the first fire's log.
const std::int64_t kLogDate =
    std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
constexpr auto kWait = 20s;  // generous bound for anything that should be quick

std::chrono::seconds OutageLength() {
  const char* v = std::getenv("CRONWHEEL_E2E_OUTAGE_S");  // NOLINT(concurrency-mt-unsafe)
  return std::chrono::seconds(v != nullptr ? std::atoi(v) : 60);
}

// Polls `f` every 20 ms until it returns true or `timeout` passes (the shared e2e helper).
template <class F>
bool Eventually(F f, std::chrono::milliseconds timeout = kWait) {
  return cwtest::Eventually(f, timeout, 20ms);
}

std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A cronwheel-executor process: cwtest::ChildProcess from a clean environment (PATH only), so no
// CRONWHEEL_* setting of the caller may change the executor under test. Stopped by the destructor.
// `run_as`: a user to run it as (through setpriv, which execs it in place: the pid is the executor's); the
// test must be root for that.
class ExecutorProcess : public cwtest::ChildProcess {
 public:
  ExecutorProcess(const std::vector<std::string>& args, const std::filesystem::path& out,
                  std::map<std::string, std::string> env = {}, const std::string& run_as = "")
      : cwtest::ChildProcess(
            {.program = run_as.empty() ? CRONWHEEL_EXECUTOR_BIN : cwtest::FindInPath("setpriv"),
             .args = RunAs(run_as, args),
             .env = std::move(env),
             .log_path = out.string(),
             .clean_env = true}) {}
  static std::vector<std::string> RunAs(const std::string& user, const std::vector<std::string>& args) {
    if (user.empty()) return args;
    std::vector<std::string> out{"--reuid=" + user, "--regid=nogroup", "--clear-groups", "--",
                                 CRONWHEEL_EXECUTOR_BIN};
    out.insert(out.end(), args.begin(), args.end());
    return out;
  }
  // SIGTERM (SIGKILL after 15 s) and wait; the exit code.
  int Stop() { return cwtest::ChildProcess::Stop(15s); }
  bool WaitExit(std::chrono::milliseconds timeout) { return Wait(timeout).has_value(); }
  [[nodiscard]] int exit_code() { return Wait(std::chrono::milliseconds(0)).value_or(-1); }
};

class ExecutorE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "cw-exec-e2e-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    log_dir_ = dir_ / "logs";
  }
  void TearDown() override {
    for (auto& e : executors_) {
      if (HasFailure())
        std::cerr << "---- executor output ----\n" << e->Output() << "-------------------------\n";
      e->Stop();
    }
    executors_.clear();
    admin_.Stop();
    std::error_code ec;
    if (!HasFailure()) std::filesystem::remove_all(dir_, ec);
  }

  // Starts an executor registered with admin_ (listen on any free port unless given); extra flags last.
  // `env`: the executor's environment besides PATH.
  ExecutorProcess& StartExecutor(std::vector<std::string> extra = {}, const std::string& token = kToken,
                                 std::map<std::string, std::string> env = {},
                                 const std::string& run_as = "") {
    std::vector<std::string> args{"--app-name",
                                  "e2e-app",
                                  "--admin-addresses",
                                  admin_.address(),
                                  "--log-dir",
                                  log_dir_.string(),
                                  "--heartbeat-interval-s",
                                  "1",
                                  "--callback-retry-interval-s",
                                  "1",
                                  "--admin-timeout-ms",
                                  "1000",
                                  "--log-level",
                                  "debug"};
    if (std::find(extra.begin(), extra.end(), "--listen") == extra.end()) {
      args.insert(args.end(), {"--listen", "127.0.0.1:0"});
    }
    if (!token.empty()) args.insert(args.end(), {"--access-token", token});
    args.insert(args.end(), extra.begin(), extra.end());
    const auto out = dir_ / ("executor-" + std::to_string(executors_.size()) + ".out");
    executors_.push_back(std::make_unique<ExecutorProcess>(args, out, std::move(env), run_as));
    return *executors_.back();
  }

  // Waits for a registry heartbeat and returns the registered address.
  std::string AwaitRegistered(std::size_t n = 1) {
    EXPECT_TRUE(admin_.WaitRegistries(n, kWait)) << "no registry heartbeat";
    const auto r = admin_.registries();
    return r.empty() ? "" : r.back().registry_value;
  }

  // POSTs to the executor (dialect A/B style) and returns the envelope.
  static Envelope Call(const std::string& address, const std::string& method, const nlohmann::json& body,
                       const std::string& token = kToken) {
    const auto a = cronwheel::net::ParseHttpAddress(address);
    EXPECT_TRUE(a.ok()) << a.status();
    httplib::Client c(a->origin);
    c.set_tcp_nodelay(true);
    c.set_read_timeout(10s);
    httplib::Headers h;
    if (!token.empty()) h.emplace(cronwheel::xxljob::kAccessTokenHeader, token);
    const auto res = c.Post(a->Path(method), h, body.dump(), "application/json;charset=UTF-8");
    if (!res) return Envelope::Fail("transport: " + httplib::to_string(res.error()));
    EXPECT_EQ(res->status, 200);  // always HTTP 200, as XXL-JOB's executor
    const auto e = cronwheel::xxljob::ParseEnvelope(res->body);
    EXPECT_TRUE(e.ok()) << e.status() << ": " << res->body;
    return e.ok() ? *e : Envelope::Fail(e.status());
  }

  static nlohmann::json Trigger(int job, std::int64_t log, const std::string& handler,
                                const std::string& param = "", int timeout_s = 0) {
    return {{"jobId", job},
            {"executorHandler", handler},
            {"executorParams", param},
            {"executorBlockStrategy", "SERIAL_EXECUTION"},
            {"executorTimeout", timeout_s},
            {"logId", log},
            {"logDateTime", kLogDate},
            {"glueType", "BEAN"},
            {"glueSource", ""},
            {"glueUpdatetime", 0},
            {"broadcastIndex", 0},
            {"broadcastTotal", 1}};
  }

  // The whole job log as /log serves it, following toLineNum like the admin's console does.
  static std::string FetchLog(const std::string& address, std::int64_t log_id) {
    std::string all;
    int from = 1;
    for (int i = 0; i < 100; ++i) {
      const auto e =
          Call(address, "log", {{"logDateTim", kLogDate}, {"logId", log_id}, {"fromLineNum", from}});
      if (!e.ok() || !e.content.is_object()) break;
      const auto to = e.content.value("toLineNum", 0);
      if (to < from) break;
      all += e.content.value("logContent", "");
      from = to + 1;
    }
    return all;
  }

  std::filesystem::path dir_;
  std::filesystem::path log_dir_;
  cwtest::FakeAdmin admin_{{kToken, "/xxl-job-admin"}};
  std::vector<std::unique_ptr<ExecutorProcess>> executors_;
};

TEST_F(ExecutorE2E, RegistersRunsAHandlerCallsBackServesTheLogAndDeregisters) {
  admin_.Start();
  auto& exec = StartExecutor();
  const auto address = AwaitRegistered();
  const auto reg = admin_.registries().front();
  EXPECT_EQ(reg.registry_group, "EXECUTOR");
  EXPECT_EQ(reg.registry_key, "e2e-app");
  EXPECT_THAT(address, ::testing::MatchesRegex("http://127\\.0\\.0\\.1:[0-9]+/"));

  EXPECT_EQ(Call(address, "beat", "").code, 200);
  EXPECT_EQ(Call(address, "run", Trigger(1, 1001, "demoJobHandler", "hello")).code, 200);
  const auto cb = admin_.WaitCallbackFor(1001, kWait);
  ASSERT_TRUE(cb);
  EXPECT_EQ(cb->handle_code, 200);
  EXPECT_EQ(cb->log_date_tim, kLogDate);
  // Dialect A/B body: a JSON array with logDateTim.
  const auto body = nlohmann::json::parse(admin_.callback_bodies().front());
  ASSERT_TRUE(body.is_array());
  EXPECT_TRUE(body[0].contains("logDateTim"));

  const auto log = FetchLog(address, 1001);
  EXPECT_THAT(log, HasSubstr("demoJobHandler: param 'hello'"));
  EXPECT_THAT(log, HasSubstr("job execute end ----------- handleCode=200"));
  EXPECT_TRUE(
      Eventually([&] { return FetchLog(address, 1001).find("job callback finish.") != std::string::npos; }));
  const auto missing =
      Call(address, "log", {{"logDateTim", kLogDate}, {"logId", 424242}, {"fromLineNum", 1}});
  EXPECT_TRUE(missing.content.value("isEnd", false));

  // Dialect C's /trigger, sharding params.
  auto t = Trigger(2, 1002, "shardingJobHandler");
  t["broadcastIndex"] = 1;
  t["broadcastTotal"] = 3;
  EXPECT_EQ(Call(address, "trigger", t).code, 200);
  ASSERT_TRUE(admin_.WaitCallbackFor(1002, kWait));
  EXPECT_THAT(FetchLog(address, 1002), HasSubstr("shard index = 1, total = 3"));
  EXPECT_EQ(Call(address, "idleBeat", {{"jobId", 2}}).code, 200);
  EXPECT_EQ(Call(address, "run", Trigger(1, 1003, "noSuchHandler")).msg,
            "job handler [noSuchHandler] not found.");

  EXPECT_EQ(exec.Stop(), 0);
  ASSERT_TRUE(admin_.WaitRemoves(1, kWait));
  EXPECT_EQ(admin_.removes().front().registry_value, address);
}

TEST_F(ExecutorE2E, KillAndTimeoutEndALongJobAndCallBack) {
  admin_.Start();
  StartExecutor();
  const auto address = AwaitRegistered();
  EXPECT_EQ(Call(address, "run", Trigger(5, 2001, "demoJobHandler", "60")).code, 200);
  ASSERT_TRUE(Eventually([&] { return FetchLog(address, 2001).find("param '60'") != std::string::npos; }));
  EXPECT_EQ(Call(address, "idleBeat", {{"jobId", 5}}).msg, "job thread is running or has trigger queue.");
  const auto started = Clock::now();
  EXPECT_EQ(Call(address, "kill", {{"jobId", 5}}).code, 200);
  const auto killed = admin_.WaitCallbackFor(2001, kWait);
  ASSERT_TRUE(killed);
  EXPECT_EQ(killed->handle_code, 500);
  EXPECT_EQ(killed->handle_msg, "scheduling center kill job. [job running, killed]");
  EXPECT_LT(Clock::now() - started, 10s);
  EXPECT_TRUE(Eventually([&] { return FetchLog(address, 2001).find("stopped after") != std::string::npos; }));

  EXPECT_EQ(Call(address, "run", Trigger(6, 2002, "demoJobHandler", "60", /*timeout_s=*/1)).code, 200);
  const auto timed_out = admin_.WaitCallbackFor(2002, kWait);
  ASSERT_TRUE(timed_out);
  EXPECT_EQ(timed_out->handle_code, 502);
  EXPECT_EQ(timed_out->handle_msg, "job execute timeout");
}

TEST_F(ExecutorE2E, CallbacksOfJobsFinishingDuringAnAdminOutageAllArrive) {
  const auto outage = OutageLength();
  admin_.Start();
  StartExecutor();
  const auto address = AwaitRegistered();
  admin_.Stop();
  const auto down_at = Clock::now();

  // Jobs that finish at once, and jobs that finish later during the outage.
  constexpr int kQuick = 30;
  std::vector<std::int64_t> logs;
  for (int i = 0; i < kQuick; ++i) {
    const std::int64_t log = 3000 + i;
    EXPECT_EQ(Call(address, "run", Trigger(10 + i % 5, log, "noopJobHandler")).code, 200);
    logs.push_back(log);
  }
  const auto outage_s = outage.count();
  const std::vector<std::int64_t> seconds{outage_s / 6, outage_s / 3, outage_s / 2};
  for (std::size_t k = 0; k < seconds.size(); ++k) {
    const std::int64_t log = 3100 + static_cast<std::int64_t>(k);
    EXPECT_EQ(Call(address, "run",
                   Trigger(20 + static_cast<int>(k), log, "demoJobHandler", std::to_string(seconds[k])))
                  .code,
              200);
    logs.push_back(log);
  }
  EXPECT_TRUE(
      Eventually([&] { return FetchLog(address, 3000).find("job callback fail") != std::string::npos; }));

  // Keep the admin down for the whole outage, then restart it on the same port.
  std::this_thread::sleep_until(down_at + outage);  // the scenario's length, not a synchronisation
  std::cout << "admin was down "
            << std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - down_at).count() << " s; "
            << admin_.callbacks().size() << " callbacks received before the outage\n";
  admin_.Start(admin_.port());
  ASSERT_TRUE(admin_.WaitCallbacks(logs.size(), 60s));
  std::map<std::int64_t, int> per_log;
  for (const auto& c : admin_.callbacks())
    ++per_log[c.log_id];
  int missing = 0;
  for (auto log : logs) {
    if (per_log[log] == 0) ++missing;
    EXPECT_EQ(admin_.WaitCallbackFor(log, 1s).value_or(HandleCallbackParam{}).handle_code, 200) << log;
  }
  std::cout << "jobs run during the outage: " << logs.size()
            << "; callbacks received after it: " << admin_.callbacks().size() << " (distinct log ids "
            << per_log.size() << ", missing " << missing << ")\n";
  EXPECT_EQ(missing, 0);
  EXPECT_TRUE(Eventually([&] {
    std::error_code ec;
    return std::filesystem::is_empty(log_dir_ / "callbacklogs", ec);
  }));
}

TEST_F(ExecutorE2E, AShellScriptJobsOutputComesBackThroughLog) {
  admin_.Start();
  StartExecutor({"--enable-scripts", "true"});
  const auto address = AwaitRegistered();
  auto t = Trigger(40, 4001, "", "p1");
  t["glueType"] = "GLUE_SHELL";
  t["glueUpdatetime"] = 1767225600123;
  t["glueSource"] = "#!/bin/bash\necho \"from shell: $1 $2 $3\"\necho to-stderr >&2\nexit 0\n";
  EXPECT_EQ(Call(address, "run", t).code, 200);
  const auto cb = admin_.WaitCallbackFor(4001, kWait);
  ASSERT_TRUE(cb);
  EXPECT_EQ(cb->handle_code, 200) << cb->handle_msg;
  const auto log = FetchLog(address, 4001);
  EXPECT_THAT(log, HasSubstr("\nfrom shell: p1 0 1\n"));
  EXPECT_THAT(log, HasSubstr("\nto-stderr\n"));
  EXPECT_TRUE(std::filesystem::exists(log_dir_ / "gluesource" / "40_1767225600123.sh"));

  t["logId"] = 4002;
  t["glueSource"] = "exit 7";
  t["glueUpdatetime"] = 1767225600999;
  EXPECT_EQ(Call(address, "run", t).code, 200);
  const auto failed = admin_.WaitCallbackFor(4002, kWait);
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->handle_code, 500);
  EXPECT_EQ(failed->handle_msg, "script exit value(7) is failed");
}

// Issue 21: a USER's GLUE_SHELL job printed the executor's CRONWHEEL_ACCESS_TOKEN. A script gets a minimal
// environment of its own (docs/operations.md, "Script jobs"): none of the executor's variables but TZ and
// those named by script_env_pass.
TEST_F(ExecutorE2E, AScriptGetsAMinimalEnvironmentWithoutTheExecutorsToken) {
  admin_.Start();
  StartExecutor({"--enable-scripts", "true", "--script-env-pass", "CW_E2E_PASSED"}, "",
                {{"CRONWHEEL_ACCESS_TOKEN", kToken},  // the token as operators set it: in the environment
                 {"CW_E2E_PASSED", "passed through"},
                 {"CW_E2E_PRIVATE", "executor-only"},
                 {"TZ", "Asia/Tokyo"}});
  const auto address = AwaitRegistered();  // the token from the environment works
  auto t = Trigger(42, 4201, "", "the param");
  t["glueType"] = "GLUE_SHELL";
  t["glueUpdatetime"] = 1767225600123;
  t["broadcastIndex"] = 1;
  t["broadcastTotal"] = 3;
  t["glueSource"] = "#!/bin/bash\necho '---- env'\nenv\necho '---- end'\n";
  ASSERT_EQ(Call(address, "run", t).code, 200);
  const auto cb = admin_.WaitCallbackFor(4201, kWait);
  ASSERT_TRUE(cb);
  EXPECT_EQ(cb->handle_code, 200) << cb->handle_msg;
  const auto log = FetchLog(address, 4201);
  EXPECT_THAT(log, ::testing::Not(HasSubstr(kToken))) << log;
  EXPECT_THAT(log, ::testing::Not(HasSubstr("CRONWHEEL_ACCESS_TOKEN"))) << log;
  EXPECT_THAT(log, ::testing::Not(HasSubstr("executor-only"))) << log;
  const std::vector<std::string> expected{"PATH=/usr/local/bin:/usr/bin:/bin",
                                          "LANG=C.UTF-8",
                                          "LC_ALL=C.UTF-8",
                                          "HOME=" + (log_dir_ / "scripthome").string(),
                                          "TZ=Asia/Tokyo",
                                          "CW_E2E_PASSED=passed through",
                                          "CRONWHEEL_JOB_ID=42",
                                          "CRONWHEEL_LOG_ID=4201",
                                          "CRONWHEEL_LOG_DATE_TIME=" + std::to_string(kLogDate),
                                          "CRONWHEEL_JOB_PARAM=the param",
                                          "CRONWHEEL_SHARD_INDEX=1",
                                          "CRONWHEEL_SHARD_TOTAL=3"};
  for (const auto& line : expected) {
    EXPECT_THAT(log, HasSubstr("\n" + line + "\n")) << log;
  }
}

// Security review 2, F3: a script job read the executor's token from /proc/$PPID/environ (its own environment
// was clean), and `EnvironmentFile=` did not help, as the script runs as the executor's user. The token is
// given here as operators do: in the environment (read by the service manager, as root, from a file only
// root reads) and, as the e2e clusters do, as a flag. The script tries every place it could read it from.
std::string ProbeTheExecutor(const std::filesystem::path& token_file) {
  return "#!/bin/bash\n"
         "echo '---- environ'; tr '\\0' '\\n' < /proc/$PPID/environ 2>&1\n"
         "echo '---- cmdline'; tr '\\0' ' ' < /proc/$PPID/cmdline 2>&1; echo\n"
         "echo '---- mem'; if dd if=/proc/$PPID/mem of=/dev/null bs=1 count=1 2>&1 | grep -q 'Permission "
         "denied'; then echo mem-refused; else echo mem-opened; fi\n"
         "echo '---- file'; cat " +
         token_file.string() +
         " 2>&1\n"
         "echo '---- end'\n";
}

class ExecutorF3E2E : public ExecutorE2E {
 protected:
  // Runs the probe as fire `log_id` of an executor started with the token in its environment and in its
  // arguments (as `run_as`, or as the test's user); returns its job log.
  std::string ProbeFrom(const std::string& run_as, std::int64_t log_id) {
    const auto token_file = dir_ / "executor.env";
    {
      std::ofstream f(token_file);
      f << "CRONWHEEL_ACCESS_TOKEN=" << kToken << "\n";
    }
    std::filesystem::permissions(token_file,
                                 std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    if (!run_as.empty()) {
      // The executor's own folders are its user's, as on a host (docs/security.md).
      std::filesystem::permissions(dir_, std::filesystem::perms::others_exec,
                                   std::filesystem::perm_options::add);
      std::filesystem::create_directories(log_dir_);
      // NOLINTNEXTLINE(concurrency-mt-unsafe): before the executor starts, on the test's one thread
      EXPECT_EQ(::system(("chown -R " + run_as + " " + log_dir_.string()).c_str()), 0);
    }
    admin_.Start();
    StartExecutor({"--enable-scripts", "true"}, kToken, {{"CRONWHEEL_ACCESS_TOKEN", kToken}}, run_as);
    const auto address = AwaitRegistered();
    auto t = Trigger(77, log_id, "", "");
    t["glueType"] = "GLUE_SHELL";
    t["glueUpdatetime"] = 1767225600123;
    t["glueSource"] = ProbeTheExecutor(token_file);
    EXPECT_EQ(Call(address, "run", t).code, 200);
    const auto cb = admin_.WaitCallbackFor(log_id, kWait);
    EXPECT_TRUE(cb);
    return FetchLog(address, log_id);
  }
};

TEST_F(ExecutorF3E2E, F3_AScriptOfTheExecutorsUserReadsItsTokenNeitherFromProcNorFromTheTokenFile) {
  // The deployment docs/security.md describes: the executor runs as a user of its own (here nobody, when
  // the test can switch to it), the token file is root's.
  const std::string user = ::geteuid() == 0 ? "nobody" : "";
  const auto log = ProbeFrom(user, 7701);
  EXPECT_THAT(log, HasSubstr("---- end")) << log;
  EXPECT_THAT(log, ::testing::Not(HasSubstr(kToken))) << log;
  // Not only scrubbed: unreadable, as the process is not dumpable.
  EXPECT_THAT(log, ::testing::ContainsRegex("---- environ\n[^\n]*Permission denied")) << log;
  EXPECT_THAT(log, HasSubstr("mem-refused")) << log;
  EXPECT_THAT(log, HasSubstr("--access-token")) << "the probe read the command line: " << log;
  if (user.empty()) {
    std::printf(
        "[F3] not root: the executor ran as this test's user, who can read the token file; only "
        "/proc was checked\n");
  } else {
    EXPECT_THAT(log, ::testing::ContainsRegex("---- file\n[^\n]*Permission denied")) << log;
  }
}

TEST_F(ExecutorF3E2E, F3_EvenAScriptRunAsRootFindsNoTokenInTheExecutorsEnvironOrCommandLine) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: an executor run as root";
  // What remains (docs/security.md): root reads any process's memory and the token file. The places a
  // script would look first no longer hold the token.
  const auto log = ProbeFrom("", 7702);
  const auto environ_part = log.substr(0, log.find("---- mem"));
  EXPECT_THAT(environ_part, HasSubstr("CRONWHEEL_ACCESS_TOKEN=")) << "root reads the environ: " << log;
  EXPECT_THAT(environ_part, ::testing::Not(HasSubstr(kToken))) << log;
  EXPECT_THAT(environ_part, HasSubstr("--access-token")) << log;
}

TEST_F(ExecutorE2E, AScriptEnvPassNamingACronwheelVariableStopsTheExecutor) {
  auto& exec = StartExecutor({"--script-env-pass", "HTTP_PROXY,CRONWHEEL_ACCESS_TOKEN"});
  ASSERT_TRUE(exec.WaitExit(kWait)) << "still running";
  EXPECT_NE(exec.exit_code(), 0);
  EXPECT_THAT(exec.Output(), HasSubstr("setting script_env_pass: 'CRONWHEEL_ACCESS_TOKEN' cannot be passed"));
}

// Issue 21: job logs were world-readable (0644). Everything the executor writes under its log dir (the
// folder itself, day folders, log segments and their indexes, a script fire's own log, glue sources, the
// script HOME, spooled callbacks, the run trace) is its user's only, whatever the umask it started with.
TEST_F(ExecutorE2E, EverythingTheExecutorWritesIsItsUsersOnlyWhateverTheUmask) {
  admin_.Start();
  const mode_t old_umask = ::umask(0);  // inherited by the executor
  auto& exec =
      StartExecutor({"--enable-scripts", "true", "--run-trace-file", (log_dir_ / "trace.txt").string()});
  ::umask(old_umask);
  const auto address = AwaitRegistered();
  auto script = Trigger(43, 4301, "", "p");
  script["glueType"] = "GLUE_SHELL";
  script["glueUpdatetime"] = 1767225600123;
  script["glueSource"] = "echo from a script";
  ASSERT_EQ(Call(address, "run", script).code, 200);
  ASSERT_EQ(Call(address, "run", Trigger(44, 4401, "demoJobHandler", "x")).code, 200);
  ASSERT_TRUE(admin_.WaitCallbackFor(4301, kWait));
  ASSERT_TRUE(admin_.WaitCallbackFor(4401, kWait));
  admin_.Stop();  // the next result cannot be sent: it is spooled
  ASSERT_EQ(Call(address, "run", Trigger(44, 4402, "demoJobHandler", "y")).code, 200);
  EXPECT_EQ(exec.Stop(), 0);  // the segments get their indexes, the queue goes to the spool
  const std::chrono::year_month_day ymd{std::chrono::floor<std::chrono::days>(
      std::chrono::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(kLogDate)))};
  char name[16];
  std::snprintf(name, sizeof name, "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
  const auto day = log_dir_ / name;  // the fires' UTC day folder
  for (const auto& p :
       {log_dir_ / "trace.txt", day / "4301.log", day / "fires-000001.seg", day / "fires-000001.idx",
        log_dir_ / "gluesource" / "43_1767225600123.sh", log_dir_ / "scripthome"}) {
    EXPECT_TRUE(std::filesystem::exists(p)) << p;
  }
  EXPECT_FALSE(std::filesystem::is_empty(log_dir_ / "callbacklogs")) << "no callback was spooled";
  std::vector<std::string> wide;
  for (const auto& e : std::filesystem::recursive_directory_iterator(log_dir_)) {
    const auto mode = std::filesystem::status(e.path()).permissions();
    if ((mode & (std::filesystem::perms::group_all | std::filesystem::perms::others_all)) !=
        std::filesystem::perms::none) {
      wide.push_back(e.path().string());
    }
  }
  EXPECT_THAT(wide, ::testing::IsEmpty());
  const auto top = std::filesystem::status(log_dir_).permissions();
  EXPECT_EQ(top & (std::filesystem::perms::group_all | std::filesystem::perms::others_all),
            std::filesystem::perms::none);
}

TEST_F(ExecutorE2E, AScriptJobIsRefusedWhenScriptsAreOff) {
  admin_.Start();
  StartExecutor();
  const auto address = AwaitRegistered();
  auto t = Trigger(41, 4101, "");
  t["glueType"] = "GLUE_SHELL";
  t["glueSource"] = "touch " + (dir_ / "ran").string();
  const auto e = Call(address, "run", t);
  EXPECT_EQ(e.code, 500);
  EXPECT_THAT(e.msg.value_or(""), HasSubstr("script jobs are disabled"));
  EXPECT_THAT(e.msg.value_or(""), HasSubstr("CRONWHEEL_ENABLE_SCRIPTS=true"));
  EXPECT_EQ(Call(address, "beat", "").code, 200);  // a later call: the refused run left nothing behind
  EXPECT_FALSE(admin_.WaitCallbackFor(4101, 200ms));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "ran"));
}

TEST_F(ExecutorE2E, HttpRulesTokenMethodPathSizeAndJson) {
  admin_.Start();
  const int port = cwtest::FreeTcpPort();
  const std::string prefixed = "http://127.0.0.1:" + std::to_string(port) + "/exec/";
  StartExecutor({"--listen", "127.0.0.1:" + std::to_string(port), "--advertise-address", prefixed});
  EXPECT_EQ(AwaitRegistered(), prefixed);
  const std::string plain = "http://127.0.0.1:" + std::to_string(port) + "/";

  EXPECT_EQ(Call(plain, "beat", "", "wrong").msg, "The access token is wrong.");
  EXPECT_EQ(Call(plain, "beat", "", "").msg, "The access token is wrong.");
  EXPECT_EQ(Call(plain, "run", Trigger(1, 1, "noopJobHandler"), kToken + std::string("x")).msg,
            "The access token is wrong.");
  EXPECT_EQ(Call(prefixed, "beat", "").code, 200);  // under the advertised path prefix
  EXPECT_EQ(Call(plain, "beat", "").code, 200);     // and without it
  EXPECT_EQ(Call(plain, "nope", "").msg, "invalid request, uri-mapping(/nope) not found.");
  EXPECT_THAT(Call(plain, "run", {{"jobId", "seven"}, {"logId", 1}}).msg.value_or(""), HasSubstr("'jobId'"));

  httplib::Client c("127.0.0.1", port);
  const auto get = c.Get("/beat", {{cronwheel::xxljob::kAccessTokenHeader, kToken}});
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 200);
  EXPECT_THAT(get->body, HasSubstr("invalid request, HttpMethod not support."));
  const std::string big(cronwheel::xxljob::kMaxBodyBytes + 1, ' ');
  const auto large =
      c.Post("/run", {{cronwheel::xxljob::kAccessTokenHeader, kToken}}, big, "application/json");
  ASSERT_TRUE(large);
  EXPECT_EQ(large->status, 200);
  EXPECT_THAT(large->body, HasSubstr("5242880 bytes"));
  // A GET with a body (httplib would leave it to be read as the next request) is refused and the answer
  // closes the connection; the next request gets its own answer. Found by the bad-input suite.
  httplib::Request with_body;
  with_body.method = "GET";
  with_body.path = "/beat";
  with_body.headers = {{cronwheel::xxljob::kAccessTokenHeader, kToken}};
  with_body.body = "POST /run HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}";
  with_body.set_header("Content-Type", "text/plain");
  const auto refused = c.send(with_body);
  ASSERT_TRUE(refused);
  EXPECT_THAT(refused->body, HasSubstr("invalid request, HttpMethod not support."));
  EXPECT_EQ(refused->get_header_value("Connection"), "close");
  EXPECT_EQ(Call(plain, "beat", "").code, 200);
}

TEST_F(ExecutorE2E, SpooledCallbacksArriveAfterAnExecutorRestart) {
  admin_.Start();
  const int admin_port = admin_.port();
  admin_.Stop();  // the admin is down for the executor's whole first life
  auto& first = StartExecutor();
  // Without an admin there is no registry answer: wait for the HTTP API through its log line.
  std::string address;
  ASSERT_TRUE(Eventually([&] {
    const auto out = first.Output();
    const auto at = out.find("advertised as ");
    if (at == std::string::npos) return false;
    address = out.substr(at + 14, out.find(';', at) - at - 14);
    return true;
  }));
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(Call(address, "run", Trigger(50 + i, 5000 + i, "noopJobHandler")).code, 200);
  ASSERT_TRUE(Eventually([&] {
    std::size_t spooled = 0;
    std::error_code ec;
    for (const auto& f : std::filesystem::directory_iterator(log_dir_ / "callbacklogs", ec)) {
      if (f.path().extension() == ".json") spooled += nlohmann::json::parse(ReadAll(f.path())).size();
    }
    return spooled == 5;
  }));
  EXPECT_EQ(first.Stop(), 0);
  EXPECT_TRUE(admin_.callbacks().empty());

  admin_.Start(admin_port);
  StartExecutor();  // same log dir
  ASSERT_TRUE(admin_.WaitCallbacks(5, kWait));
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(admin_.WaitCallbackFor(5000 + i, 1s).value_or(HandleCallbackParam{}).handle_code, 200);
  std::cout << "callbacks replayed after the restart: " << admin_.callbacks().size() << " of 5\n";
}

// Job logs live in segments (docs/operations.md, "Executor job logs"). A SIGKILL leaves the open segment
// without its index: after a restart /log still serves every line of the fires run before, and new fires
// go to a new segment.
TEST_F(ExecutorE2E, JobLogsOutliveAKilledExecutor) {
  admin_.Start();
  auto& first = StartExecutor();
  const auto before = AwaitRegistered();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Call(before, "run", Trigger(60 + i, 6000 + i, "demoJobHandler", "")).code, 200);
    ASSERT_TRUE(admin_.WaitCallbackFor(6000 + i, kWait));
  }
  std::vector<std::string> logs;
  for (int i = 0; i < 3; ++i) {
    logs.push_back(FetchLog(before, 6000 + i));
    EXPECT_THAT(logs.back(), HasSubstr("job execute end")) << 6000 + i;
  }
  first.Kill();
  const std::time_t secs = kLogDate / 1000;
  std::tm utc{};
  ::gmtime_r(&secs, &utc);
  std::array<char, 16> name{};
  ASSERT_EQ(std::strftime(name.data(), name.size(), "%Y-%m-%d", &utc), 10U);
  const auto day = log_dir_ / name.data();
  EXPECT_TRUE(std::filesystem::exists(day / "fires-000001.seg"));
  EXPECT_FALSE(std::filesystem::exists(day / "fires-000001.idx"));  // killed: never written

  StartExecutor();
  std::string after;
  ASSERT_TRUE(Eventually([&] {
    after = admin_.registries().back().registry_value;
    return after != before;
  }));
  for (int i = 0; i < 3; ++i) {
    const auto log = FetchLog(after, 6000 + i);
    // The callback line may have been written after the first fetch: the rest is the same.
    EXPECT_TRUE(log.starts_with(logs[static_cast<std::size_t>(i)])) << log;
  }
  EXPECT_TRUE(std::filesystem::exists(day / "fires-000001.idx"));  // built by the first read
  EXPECT_EQ(Call(after, "run", Trigger(63, 6003, "demoJobHandler", "")).code, 200);
  ASSERT_TRUE(admin_.WaitCallbackFor(6003, kWait));
  EXPECT_THAT(FetchLog(after, 6003), HasSubstr("job execute end"));
  EXPECT_TRUE(std::filesystem::exists(day / "fires-000002.seg"));
}

TEST_F(ExecutorE2E, ProductionModeRefusesToStartWithoutAToken) {
  admin_.Start();
  auto& exec = StartExecutor({}, "");
  ASSERT_TRUE(exec.WaitExit(kWait));
  EXPECT_EQ(exec.exit_code(), 2);
  EXPECT_THAT(exec.Output(), HasSubstr("CRONWHEEL_ACCESS_TOKEN"));
  auto& dev = StartExecutor({"--mode", "dev"}, "");  // runs, with a warning
  EXPECT_TRUE(Eventually([&] { return dev.Output().find("advertised as") != std::string::npos; }));
  EXPECT_THAT(dev.Output(), HasSubstr("dev mode without an access token"));
  EXPECT_EQ(dev.Stop(), 0);
}

TEST_F(ExecutorE2E, HelpListsEverySettingWithItsEnvironmentVariable) {
  ExecutorProcess help({"--help"}, dir_ / "help.out");
  ASSERT_TRUE(help.WaitExit(kWait));
  EXPECT_EQ(help.exit_code(), 0);
  const auto out = help.Output();
  for (const char* env :
       {"CRONWHEEL_APP_NAME", "CRONWHEEL_ADMIN_ADDRESSES", "CRONWHEEL_LISTEN", "CRONWHEEL_ADVERTISE_ADDRESS",
        "CRONWHEEL_ACCESS_TOKEN", "CRONWHEEL_LOG_DIR", "CRONWHEEL_ENABLE_SCRIPTS",
        "CRONWHEEL_HEARTBEAT_INTERVAL_S", "CRONWHEEL_MODE", "CRONWHEEL_HTTP_HANDLER_ALLOW",
        "CRONWHEEL_SERVER_THREADS", "CRONWHEEL_LOG_RETENTION_DAYS"}) {
    EXPECT_THAT(out, HasSubstr(env));
  }
}

TEST(FakeAdmin, AcceptsBothCallbackBodiesAndChecksTheToken) {
  cwtest::FakeAdmin admin({kToken, ""});
  admin.Start();
  httplib::Client c("127.0.0.1", admin.port());
  const httplib::Headers h{{cronwheel::xxljob::kAccessTokenHeader, kToken}};
  auto r = c.Post("/api/callback", h, R"([{"logId":1,"logDateTim":5,"handleCode":200,"handleMsg":""}])",
                  "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, R"({"code":200,"content":null,"msg":null})");
  r = c.Post("/api/callback", h, R"({"callbackList":[{"logId":2,"logDateTime":5,"handleCode":500}]})",
             "application/json");
  EXPECT_THAT(r->body, HasSubstr("\"code\":200"));
  r = c.Post("/api/callback", R"([])", "application/json");
  EXPECT_THAT(r->body, HasSubstr("The access token is wrong."));
  r = c.Post("/api/registry", h, R"({"registryGroup":"EXECUTOR","registryKey":"","registryValue":"x"})",
             "application/json");
  EXPECT_THAT(r->body, HasSubstr("Illegal Argument."));
  ASSERT_EQ(admin.callbacks().size(), 2U);
  EXPECT_EQ(admin.callbacks()[1].handle_code, 500);
  admin.Stop();
}

}  // namespace
