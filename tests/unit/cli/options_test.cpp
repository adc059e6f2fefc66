#include "cwcli/options.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cwcli/api.hpp"

namespace {

using namespace cronwheel::cli;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

cronwheel::cli::Invocation Parsed(const std::vector<std::string>& args, const Environment& env = {}) {
  auto r = ParseCommandLine(args, env);
  EXPECT_TRUE(r.invocation.has_value()) << r.err;
  return r.invocation.value_or(cronwheel::cli::Invocation{});
}

TEST(ParseCommandLine, JobsListWithAGroupAndGlobalOptionsAfterTheCommand) {
  const auto inv =
      Parsed({"jobs", "list", "--group", "3", "--json", "--admin", "http://a:1", "--timeout", "7"});
  EXPECT_EQ(inv.command, Command::kJobsList);
  EXPECT_EQ(inv.group_id, 3);
  EXPECT_TRUE(inv.json);
  EXPECT_EQ(inv.admin_url, "http://a:1");
  EXPECT_EQ(inv.timeout, 7s);
}

TEST(ParseCommandLine, TheAdminComesFromTheFlagThenTheEnvironmentThenTheDefault) {
  EXPECT_EQ(Parsed({"groups", "list"}).admin_url, "http://127.0.0.1:8080");
  const Environment env{{"CRONWHEEL_ADMIN_URL", "http://env:9"}, {"CRONWHEEL_API_TOKEN", "cwt_x"}};
  EXPECT_EQ(Parsed({"groups", "list"}, env).admin_url, "http://env:9");
  EXPECT_EQ(Parsed({"--admin", "http://flag:1", "groups", "list"}, env).admin_url, "http://flag:1");
  EXPECT_EQ(Parsed({"groups", "list"}, env).token, "cwt_x");
}

TEST(ParseCommandLine, TheTokenIsNeverAnOption) {
  const auto r = ParseCommandLine({"groups", "list", "--token", "cwt_x"}, {});
  EXPECT_FALSE(r.invocation);
  EXPECT_EQ(r.exit_code, cronwheel::cli::kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--token"));
  EXPECT_EQ(Parsed({"groups", "list", "--token-file", "/tmp/t"}).token_file, "/tmp/t");
}

TEST(ParseCommandLine, EveryJobCommand) {
  EXPECT_EQ(Parsed({"jobs", "show", "12"}).job_id, 12);
  auto inv = Parsed({"jobs", "create", "job.txt", "--format", "toml", "--group", "4"});
  EXPECT_EQ(inv.command, Command::kJobsCreate);
  EXPECT_EQ(inv.file, "job.txt");
  EXPECT_EQ(inv.format, FileFormat::kToml);
  EXPECT_EQ(inv.group_id, 4);
  inv = Parsed({"jobs", "update", "5", "job.json"});
  EXPECT_EQ(inv.command, Command::kJobsUpdate);
  EXPECT_EQ(inv.job_id, 5);
  EXPECT_EQ(inv.format, FileFormat::kAuto);
  EXPECT_EQ(Parsed({"jobs", "start", "5"}).command, Command::kJobsStart);
  EXPECT_EQ(Parsed({"jobs", "stop", "5"}).command, Command::kJobsStop);
  inv = Parsed({"jobs", "trigger", "5", "--param", "a b", "--address", "http://e:1/"});
  EXPECT_EQ(inv.command, Command::kJobsTrigger);
  EXPECT_EQ(inv.param, "a b");
  EXPECT_EQ(inv.address, "http://e:1/");
  EXPECT_FALSE(Parsed({"jobs", "trigger", "5"}).param.has_value());
  inv = Parsed({"jobs", "run-once", "5", "--at", "2026-11-27T18:30+01:00", "--param", "x"});
  EXPECT_EQ(inv.command, Command::kJobsRunOnce);
  EXPECT_EQ(inv.at_ms, 1795800600000);  // 17:30 UTC
  EXPECT_FALSE(inv.delay_ms.has_value());
  EXPECT_EQ(inv.param, "x");
  inv = Parsed({"jobs", "run-once", "5", "--in", "1h30m"});
  EXPECT_EQ(inv.delay_ms, 5'400'000);
  EXPECT_FALSE(inv.at_ms.has_value());
  inv = Parsed({"jobs", "run-once-list", "5", "--limit", "3"});
  EXPECT_EQ(inv.command, Command::kJobsRunOnceList);
  EXPECT_EQ(inv.limit, 3);
  inv = Parsed({"jobs", "run-once-cancel", "5", "12"});
  EXPECT_EQ(inv.command, Command::kJobsRunOnceCancel);
  EXPECT_EQ(inv.job_id, 5);
  EXPECT_EQ(inv.run_id, 12);
  inv = Parsed({"jobs", "bulk", "stop", "5", "6", "7"});
  EXPECT_EQ(inv.command, Command::kJobsBulk);
  EXPECT_EQ(inv.bulk_action, "stop");
  EXPECT_EQ(inv.job_ids, (std::vector<int>{5, 6, 7}));
  inv = Parsed({"jobs", "bulk", "trigger", "5", "--param", "p"});
  EXPECT_EQ(inv.param, "p");
  inv = Parsed({"jobs", "delete", "5", "-y"});
  EXPECT_EQ(inv.command, Command::kJobsDelete);
  EXPECT_TRUE(inv.yes);
  EXPECT_FALSE(Parsed({"jobs", "delete", "5"}).yes);
}

TEST(ParseCommandLine, LogsExecutorsExportImport) {
  auto inv = Parsed({"logs", "tail", "99", "--follow", "--interval", "200", "--from-line", "3"});
  EXPECT_EQ(inv.command, Command::kLogsTail);
  EXPECT_EQ(inv.log_id, 99);
  EXPECT_TRUE(inv.follow);
  EXPECT_EQ(inv.poll_interval, 200ms);
  EXPECT_EQ(inv.from_line, 3);
  inv = Parsed({"logs", "list", "--job", "7", "--status", "FAILED", "--limit", "5"});
  EXPECT_EQ(inv.command, Command::kLogsList);
  EXPECT_EQ(inv.job_id, 7);
  EXPECT_EQ(inv.status, "FAILED");
  EXPECT_EQ(inv.limit, 5);
  inv = Parsed({"executors", "list", "--group", "2"});
  EXPECT_EQ(inv.command, Command::kExecutorsList);
  EXPECT_EQ(inv.group_id, 2);
  inv = Parsed({"executors", "drain", "--group", "2", "http://10.0.0.1:9999/"});
  EXPECT_EQ(inv.command, Command::kExecutorsDrain);
  EXPECT_EQ(inv.group_id, 2);
  EXPECT_EQ(inv.address, "http://10.0.0.1:9999/");
  inv = Parsed({"export", "--group", "2", "-o", "out.json"});
  EXPECT_EQ(inv.command, Command::kExport);
  EXPECT_EQ(inv.output, "out.json");
  inv = Parsed({"import", "doc.json", "--group", "3", "--dry-run", "--on-conflict", "update", "--stopped"});
  EXPECT_EQ(inv.command, Command::kImport);
  EXPECT_EQ(inv.file, "doc.json");
  EXPECT_EQ(inv.group_id, 3);
  EXPECT_TRUE(inv.dry_run);
  EXPECT_EQ(inv.on_conflict, OnConflict::kUpdate);
  EXPECT_TRUE(inv.stopped);
  EXPECT_EQ(Parsed({"import", "doc.json", "--group", "3"}).on_conflict, OnConflict::kFail);
  EXPECT_EQ(Parsed({"import", "d.json", "--group", "3", "--on-conflict", "skip"}).on_conflict,
            OnConflict::kSkip);
}

TEST(ParseCommandLine, EveryWorkflowCommand) {
  auto inv = Parsed({"workflows", "list", "--group", "3"});
  EXPECT_EQ(inv.command, Command::kWorkflowsList);
  EXPECT_EQ(inv.group_id, 3);
  EXPECT_EQ(Parsed({"workflows", "show", "4"}).workflow_id, 4);
  inv = Parsed({"workflows", "create", "--file", "wf.txt", "--format", "toml", "--group", "2"});
  EXPECT_EQ(inv.command, Command::kWorkflowsCreate);
  EXPECT_EQ(inv.file, "wf.txt");
  EXPECT_EQ(inv.format, FileFormat::kToml);
  EXPECT_EQ(inv.group_id, 2);
  EXPECT_EQ(Parsed({"workflows", "create", "wf.json"}).file, "wf.json") << "FILE, as for jobs create";
  inv = Parsed({"workflows", "update", "4", "--file", "wf.json"});
  EXPECT_EQ(inv.command, Command::kWorkflowsUpdate);
  EXPECT_EQ(inv.workflow_id, 4);
  EXPECT_EQ(inv.file, "wf.json");
  inv = Parsed({"workflows", "delete", "4", "--yes"});
  EXPECT_EQ(inv.command, Command::kWorkflowsDelete);
  EXPECT_TRUE(inv.yes);
  inv = Parsed({"workflows", "trigger", "4"});
  EXPECT_EQ(inv.command, Command::kWorkflowsTrigger);
  EXPECT_FALSE(inv.wait);
  EXPECT_FALSE(inv.param);
  EXPECT_EQ(inv.wait_timeout, 600s);
  inv = Parsed(
      {"workflows", "trigger", "4", "--param", "p", "--wait", "--wait-timeout", "30", "--timeout", "5"});
  EXPECT_TRUE(inv.wait);
  EXPECT_EQ(inv.param, "p");
  EXPECT_EQ(inv.wait_timeout, 30s);
  EXPECT_EQ(inv.timeout, 5s) << "--timeout stays the global answer timeout";
  inv = Parsed({"workflows", "runs", "4", "--limit", "5"});
  EXPECT_EQ(inv.command, Command::kWorkflowsRuns);
  EXPECT_EQ(inv.limit, 5);
  inv = Parsed({"workflows", "run", "9"});
  EXPECT_EQ(inv.command, Command::kWorkflowsRun);
  EXPECT_EQ(inv.run_id, 9);
  EXPECT_EQ(Parsed({"workflows", "kill", "9"}).command, Command::kWorkflowsKill);
  inv = Parsed({"workflows", "rerun", "9", "load"});
  EXPECT_EQ(inv.command, Command::kWorkflowsRerun);
  EXPECT_EQ(inv.run_id, 9);
  EXPECT_EQ(inv.node_key, "load");
}

TEST(ParseCommandLine, UsageErrorsNameTheProblemAndExit2) {
  struct Case {
    std::vector<std::string> args;
    std::string mentions;
  };
  const std::vector<Case> cases = {
      {{}, "needs a command: jobs, groups"},
      {{"jobs"}, "'cronwheel jobs' needs a command: list, show"},
      {{"jobs", "fly"}, "'fly' is not a command of 'cronwheel jobs'"},
      {{"jobs", "show"}, "ID"},
      {{"jobs", "show", "abc"}, "abc"},
      {{"jobs", "show", "0"}, "ID"},
      {{"jobs", "list", "--group", "-1"}, "--group"},
      {{"import", "doc.json"}, "--group"},
      {{"import", "doc.json", "--group", "1", "--on-conflict", "merge"}, "merge"},
      {{"export"}, "--group"},
      {{"logs", "list"}, "--job"},
      {{"logs", "list", "--job", "1", "--status", "DONE"}, "DONE"},
      {{"logs", "tail", "1", "--interval", "1"}, "--interval"},
      {{"jobs", "create", "x.json", "--format", "yaml"}, "yaml"},
      {{"jobs", "list", "--timeout", "0"}, "--timeout"},
      {{"executors", "drain", "http://10.0.0.1:9999/"}, "--group"},
      {{"executors", "drain", "--group", "1"}, "ADDRESS"},
      {{"jobs", "run-once", "1", "--at", "2026-11-27 18:30"}, "with an offset"},
      {{"jobs", "run-once", "1", "--at", "tomorrow"}, "'tomorrow' is not an instant"},
      {{"jobs", "run-once", "1", "--in", "10"}, "'10' is not a duration"},
      {{"jobs", "run-once", "1", "--in", "5w"}, "units ms, s, m, h, d"},
      {{"jobs", "run-once", "1", "--in", "10m", "--at", "2026-11-27T18:30Z"}, "excludes"},
      {{"jobs", "run-once-cancel", "1"}, "RUN_ID"},
      {{"jobs", "bulk", "pause", "1"}, "pause"},
      {{"jobs", "bulk", "stop"}, "ID"},
      {{"jobs", "bulk", "stop", "1", "x"}, "x"},
      {{"workflows"}, "'cronwheel workflows' needs a command: list, show"},
      {{"workflows", "create"}, "--file is required"},
      {{"workflows", "trigger", "4", "--wait-timeout", "30"}, "--wait"},
      {{"workflows", "runs", "4", "--limit", "500"}, "--limit"},
      {{"workflows", "rerun", "9"}, "NODE_KEY"},
  };
  for (const auto& c : cases) {
    const auto r = ParseCommandLine(c.args, {});
    EXPECT_FALSE(r.invocation) << ::testing::PrintToString(c.args);
    EXPECT_EQ(r.exit_code, 2) << ::testing::PrintToString(c.args);
    EXPECT_THAT(r.err, HasSubstr(c.mentions)) << ::testing::PrintToString(c.args);
    EXPECT_THAT(r.err, HasSubstr("--help")) << ::testing::PrintToString(c.args);
  }
}

TEST(ParseCommandLine, HelpOnEveryCommandIsPrintedAndExits0) {
  const std::vector<std::vector<std::string>> commands = {{},
                                                          {"jobs"},
                                                          {"jobs", "list"},
                                                          {"jobs", "show"},
                                                          {"jobs", "create"},
                                                          {"jobs", "update"},
                                                          {"jobs", "start"},
                                                          {"jobs", "stop"},
                                                          {"jobs", "trigger"},
                                                          {"jobs", "run-once"},
                                                          {"jobs", "run-once-list"},
                                                          {"jobs", "run-once-cancel"},
                                                          {"jobs", "bulk"},
                                                          {"jobs", "delete"},
                                                          {"groups", "list"},
                                                          {"executors", "list"},
                                                          {"logs", "tail"},
                                                          {"logs", "list"},
                                                          {"export"},
                                                          {"import"},
                                                          {"workflows"},
                                                          {"workflows", "list"},
                                                          {"workflows", "show"},
                                                          {"workflows", "create"},
                                                          {"workflows", "update"},
                                                          {"workflows", "delete"},
                                                          {"workflows", "trigger"},
                                                          {"workflows", "runs"},
                                                          {"workflows", "run"},
                                                          {"workflows", "kill"},
                                                          {"workflows", "rerun"}};
  for (auto args : commands) {
    const auto name = args.empty() ? std::string("cronwheel") : args.back();
    args.emplace_back("--help");
    const auto r = ParseCommandLine(args, {});
    EXPECT_FALSE(r.invocation);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_TRUE(r.err.empty()) << r.err;
    EXPECT_THAT(r.out, HasSubstr(name)) << ::testing::PrintToString(args);
    EXPECT_THAT(r.out, HasSubstr("Usage")) << ::testing::PrintToString(args);
  }
  const auto import_help = ParseCommandLine({"import", "--help"}, {}).out;
  EXPECT_THAT(import_help, HasSubstr("matched"));
  EXPECT_THAT(import_help, HasSubstr("description"));
  EXPECT_THAT(ParseCommandLine({"--help"}, {}).out, HasSubstr("CRONWHEEL_API_TOKEN"));
}

}  // namespace
