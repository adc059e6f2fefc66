// The fire output archive (docs/operations.md, "The fire output archive") on real processes on loopback: a
// fire's output outlives the executor that ran it.
// - A cronwheel-executor runs a script printing 3,000 lines (its own log file) and a BEAN handler (log
//   segments); it sends each log with its fire's result. It is then killed (SIGKILL) and its log_dir
//   deleted: `cronwheel logs tail ID` (the real CLI) still prints every line, and says it reads the archive.
// - The npm xxl-job executor (tests/e2e/xxl_job_node, with its file logs on) sends no log: the admin reads it
//   from the executor's /log after the callback. Once the Node process is killed and its log folder deleted,
//   `cronwheel logs tail ID` prints every line its handler wrote. (The package's /log numbers lines from 0:
//   asked for line 1 on, it leaves out its log's first line, "Job Task: N is running: ID"; the archive holds
//   what /log gives, as the console showed while the fire ran.)
// Each test ends within a minute; everything started is stopped by the Cluster and ChildProcess destructors.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cluster.hpp"
#include "http_client.hpp"
#include "node_executor.hpp"

namespace {

using namespace cwtest::e2e;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr const char* kPassword = "archive-e2e-admin-password";
constexpr const char* kNeverCron = "0 0 0 1 1 ?";  // 1 January: the jobs here only fire when triggered

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

// An admin's API token (scope read) for the CLI, through a console session.
std::string ApiToken(Cluster& c) {
  HttpCaller http(c.admin_port(0));
  const auto session = cwtest::Login(http, "admin", kPassword);
  if (!session) return "";
  const auto r = http.Send("POST", "/api/v1/tokens", cwtest::SessionHeaders(*session),
                           json{{"name", "archive-e2e"}, {"scope", "operate"}}.dump());
  EXPECT_EQ(r.status, 201) << r.body;
  return r.status == 201 ? r.Json()->at("token").get<std::string>() : "";
}

// `cronwheel args...` against admin 0 of `c` with `token`; stdout and stderr apart; at most 30 s.
CliRun Cli(Cluster& c, const std::string& token, const std::vector<std::string>& args) {
  static int n = 0;
  ++n;
  const auto out = c.dir() / fmt::format("cli-{}.out", n);
  const auto err = c.dir() / fmt::format("cli-{}.err", n);
  ChildProcess p({.program = CRONWHEEL_CLI_BIN,
                  .args = args,
                  .env = {{"CRONWHEEL_ADMIN_URL", fmt::format("http://127.0.0.1:{}", c.admin_port(0))},
                          {"CRONWHEEL_API_TOKEN", token}},
                  .log_path = out.string(),
                  .stderr_path = err.string(),
                  .clean_env = true});
  CliRun run;
  const auto code = p.Wait(30s);
  if (!code) {
    p.Kill();
    ADD_FAILURE() << "cronwheel " << ::testing::PrintToString(args) << " did not end within 30 s";
  }
  run.code = code.value_or(-1);
  run.out = ReadWholeFile(out);
  run.err = ReadWholeFile(err);
  return run;
}

// Triggers job `job` through the CLI; returns the fire's log id (0 on failure).
std::int64_t Trigger(Cluster& c, const std::string& token, int job, const std::string& param) {
  const auto run = Cli(c, token, {"jobs", "trigger", std::to_string(job), "--param", param, "--json"});
  EXPECT_EQ(run.code, 0) << run.err;
  if (run.code != 0) return 0;
  return json::parse(run.out).at("log_id").get<std::int64_t>();
}

// Waits (at most `timeout`) until fire `log_id` has its result and its archive row (via `via`).
bool Archived(Cluster& c, std::int64_t log_id, const std::string& via, std::chrono::milliseconds timeout) {
  return Eventually(
      [&] {
        return c.Scalar(
                   fmt::format("SELECT count(*) FROM job_log l JOIN fire_output o ON o.log_id = l.id AND "
                               "o.scheduled_ms = l.scheduled_ms WHERE l.id = {} AND l.handle_code = 200 "
                               "AND o.via = '{}' AND o.content IS NOT NULL",
                               log_id, via)) == 1;
      },
      timeout, 100ms);
}

// The numbers i of the lines "<prefix> i" in `text` that are missing from 1..n.
std::vector<int> MissingLines(const std::string& text, const std::string& prefix, int n) {
  std::vector<bool> seen(static_cast<std::size_t>(n) + 1, false);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto at = line.find(prefix + " ");
    if (at == std::string::npos) continue;
    const int i = std::atoi(line.c_str() + at + prefix.size() + 1);
    if (i >= 1 && i <= n) seen[static_cast<std::size_t>(i)] = true;
  }
  std::vector<int> missing;
  for (int i = 1; i <= n; ++i) {
    if (!seen[static_cast<std::size_t>(i)]) missing.push_back(i);
  }
  return missing;
}

TEST(OutputArchiveE2E, AFinishedFiresOutputOutlivesItsExecutorKilledWithItsLogDirDeleted) {
  const auto started = std::chrono::steady_clock::now();
  Cluster c({.admins = 1,
             .executors = 1,
             .admin_env = {{"CRONWHEEL_ADMIN_PASSWORD", kPassword}},
             .scripts_on_last_executor = true});
  const auto token = ApiToken(c);
  ASSERT_FALSE(token.empty());
  const int group = c.AddGroup();
  constexpr int kLines = 3000;
  const int script = c.AddJob(
      group, kNeverCron, "FIRST", "DO_NOTHING", "script", 0,
      fmt::format("glue_type = 'GLUE_SHELL', handler = '', glue_source = 'for i in $(seq 1 {}); do echo "
                  "\"archived line $i\"; done'",
                  kLines));
  const int bean = c.AddJob(group, kNeverCron, "FIRST", "DO_NOTHING", "demoJobHandler");
  const auto script_fire = Trigger(c, token, script, "");
  const auto bean_fire = Trigger(c, token, bean, "0");
  ASSERT_TRUE(script_fire > 0 && bean_fire > 0);
  ASSERT_TRUE(Archived(c, script_fire, "push", 20s)) << c.executor(0).LogTail() << c.admin(0).LogTail();
  ASSERT_TRUE(Archived(c, bean_fire, "push", 20s)) << c.executor(0).LogTail();

  // While the executor lives, the output still comes from the archive (the fire has ended).
  auto run = Cli(c, token, {"logs", "tail", std::to_string(script_fire)});
  ASSERT_EQ(run.code, 0) << run.err;
  const auto before = run.out;

  c.executor(0).Kill();
  ASSERT_TRUE(c.executor(0).Wait(10s));
  std::error_code ec;
  fs::remove_all(c.dir() / "executor-1", ec);
  ASSERT_FALSE(ec) << ec.message();
  ASSERT_FALSE(fs::exists(c.dir() / "executor-1"));

  run = Cli(c, token, {"logs", "tail", std::to_string(script_fire)});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(MissingLines(run.out, "archived line", kLines), std::vector<int>{});
  EXPECT_THAT(run.out, HasSubstr("cronwheel job execute start"));
  EXPECT_THAT(run.out, HasSubstr("handleCode=200"));
  EXPECT_EQ(run.out, before);
  EXPECT_THAT(run.err,
              HasSubstr(fmt::format("fire {}: output from the admin's archive (sent by the executor with "
                                    "its result)",
                                    script_fire)));
  run = Cli(c, token, {"logs", "tail", std::to_string(bean_fire), "--follow", "--interval", "200"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("demoJobHandler: param '0'"));
  EXPECT_THAT(run.err, HasSubstr(fmt::format("fire {}: SUCCESS (handle_code 200)", bean_fire)));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 60s);
}

TEST(OutputArchiveE2E, AnXxlJobExecutorsOutputIsPulledAfterItsCallbackAndOutlivesTheProcess) {
  const auto started = std::chrono::steady_clock::now();
  const auto node = FindInPath("node");
  if (const auto missing = MissingPrerequisite(node); !missing.empty()) FAIL() << missing;
  constexpr const char* kApp = "xxl-job-node";
  Cluster c(
      {.admins = 1,
       .executors = 0,
       .app_name = kApp,
       .admin_args = {"--output-pull", "all"},  // the fire succeeds: the default pulls failed fires' only
       .admin_env = {{"CRONWHEEL_ADMIN_PASSWORD", kPassword}}});
  const auto token = ApiToken(c);
  ASSERT_FALSE(token.empty());
  const auto work = c.dir() / "node-work";
  auto executor = StartNodeExecutor(c, node, kApp, c.dir() / "xxl-job-node.trace",
                                    {"--log-storage", "local", "--work-dir", work.string()});
  ASSERT_TRUE(executor.registered) << executor.why;
  const int group = c.AddGroup();
  const int job = c.AddJob(group, kNeverCron, "FIRST", "DO_NOTHING", "nodeLinesHandler");
  constexpr int kLines = 500;
  const auto fire = Trigger(c, token, job, std::to_string(kLines));
  ASSERT_GT(fire, 0);
  ASSERT_TRUE(Archived(c, fire, "pull", 30s)) << executor.process->LogTail() << c.admin(0).LogTail();

  executor.process->Kill();
  ASSERT_TRUE(executor.process->Wait(10s));
  std::error_code ec;
  fs::remove_all(work, ec);
  ASSERT_FALSE(ec) << ec.message();

  const auto run = Cli(c, token, {"logs", "tail", std::to_string(fire)});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(MissingLines(run.out, "node line", kLines), std::vector<int>{});
  EXPECT_THAT(run.out, HasSubstr(fmt::format("is finished: {}", fire)));
  EXPECT_THAT(run.err, HasSubstr(fmt::format(
                           "fire {}: output from the admin's archive (read from the executor after its "
                           "result)",
                           fire)));
  EXPECT_GE(c.Scalar(fmt::format("SELECT log_bytes FROM fire_output WHERE log_id = {}", fire)),
            static_cast<std::int64_t>(kLines) * 10);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 60s);
}

}  // namespace
