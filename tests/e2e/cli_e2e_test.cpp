// The command-line client (`cronwheel`, docs/cli.md) as a child process against a real admin, executor and
// PostgreSQL on loopback:
// - 50 varied jobs created through `jobs create` (JSON and TOML files), exported, imported into a second
//   group, and equal there field by field (apart from ids and the group); a second import with
//   --on-conflict skip creates nothing, one without it changes nothing and exits 1;
// - XXL-JOB's /jobinfo/pageList answers of 2.x, 3.3 and 3.5 (tests/unit/cli/fixtures/) are imported;
// - a bad job file exits 1 naming the field, an admin's refusal exits 1 with its field errors, an
//   unreachable admin exits 3, a usage error 2;
// - `jobs trigger` then `logs tail --follow` prints the fire's output from a cronwheel-executor and ends
//   when the fire has its result.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cluster.hpp"
#include "http_client.hpp"

namespace {

using namespace cwtest::e2e;
using ::testing::HasSubstr;

constexpr const char* kPassword = "cli-e2e-admin-password";
constexpr int kJobs = 50;

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A TOML basic string.
std::string TomlString(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

class CliE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new Cluster(Cluster::Options{
        .admins = 1, .executors = 1, .admin_env = {{"CRONWHEEL_ADMIN_PASSWORD", kPassword}}});
    HttpCaller http(cluster_->admin_port(0));
    const auto session = cwtest::Login(http, "admin", kPassword);
    ASSERT_TRUE(session);
    const auto r = http.Send("POST", "/api/v1/tokens", cwtest::SessionHeaders(*session),
                             json{{"name", "cli-e2e"}, {"scope", "admin"}}.dump());
    ASSERT_EQ(r.status, 201) << r.body;
    token_ = new std::string(r.Json()->at("token").get<std::string>());
    group_ = cluster_->AddGroup();  // the executors' app: fires run
  }
  static void TearDownTestSuite() {
    delete cluster_;
    delete token_;
    cluster_ = nullptr;
  }

  // Runs `cronwheel args...` with the admin's URL and the token in its environment (and nothing else of
  // ours), stdout and stderr apart.
  static CliRun Cli(const std::vector<std::string>& args, std::map<std::string, std::string> env = {}) {
    static int n = 0;
    ++n;
    const auto out = cluster_->dir() / fmt::format("cli-{}.out", n);
    const auto err = cluster_->dir() / fmt::format("cli-{}.err", n);
    env.emplace("CRONWHEEL_ADMIN_URL", fmt::format("http://127.0.0.1:{}", cluster_->admin_port(0)));
    env.emplace("CRONWHEEL_API_TOKEN", *token_);
    ChildProcess p({.program = CRONWHEEL_CLI_BIN,
                    .args = args,
                    .env = env,
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
    run.out = ReadFile(out);
    run.err = ReadFile(err);
    return run;
  }

  static std::string WriteFile(const std::string& name, const std::string& content) {
    const auto path = cluster_->dir() / name;
    std::ofstream(path, std::ios::binary) << content;
    return path.string();
  }

  // Every job of a group, by the API.
  static std::vector<json> GroupJobs(int group) {
    HttpCaller http(cluster_->admin_port(0));
    const auto r = http.Send("GET", fmt::format("/api/v1/jobs?group_id={}&limit=1000", group),
                             cwtest::BearerHeaders(*token_), "", "");
    EXPECT_EQ(r.status, 200) << r.body;
    return r.Json()->at("items").get<std::vector<json>>();
  }

  static int CreateGroup(const std::string& app_name) {
    HttpCaller http(cluster_->admin_port(0));
    const auto r = http.Send("POST", "/api/v1/groups", cwtest::BearerHeaders(*token_),
                             json{{"app_name", app_name}, {"title", app_name}}.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Json()->at("id").get<int>();
  }

  static Cluster* cluster_;
  static std::string* token_;
  static int group_;
};

Cluster* CliE2E::cluster_ = nullptr;
std::string* CliE2E::token_ = nullptr;
int CliE2E::group_ = 0;

// Job i of the 50: every schedule type, route, block and misfire strategy, script and bean jobs,
// multi-line and non-ASCII text, some running, some with a child job.
json JobSpec(int i) {
  constexpr std::array<const char*, 10> kRoutes = {"FIRST",
                                                   "LAST",
                                                   "ROUND",
                                                   "RANDOM",
                                                   "CONSISTENT_HASH",
                                                   "LEAST_FREQUENTLY_USED",
                                                   "LEAST_RECENTLY_USED",
                                                   "FAILOVER",
                                                   "BUSYOVER",
                                                   "SHARDING_BROADCAST"};
  constexpr std::array<const char*, 3> kBlocks = {"SERIAL_EXECUTION", "DISCARD_LATER", "COVER_EARLY"};
  json j{{"description", fmt::format("job {:02} {}", i, i % 7 == 0 ? "数据同步" : "sync")},
         {"author", fmt::format("team-{}", i % 3)},
         {"alarm_email", i % 5 == 0 ? "ops@example.com" : ""},
         {"misfire_strategy", i % 2 == 0 ? "DO_NOTHING" : "FIRE_ONCE_NOW"},
         {"route_strategy", kRoutes[static_cast<std::size_t>(i) % kRoutes.size()]},
         {"block_strategy", kBlocks[static_cast<std::size_t>(i) % kBlocks.size()]},
         {"timeout_s", i * 10},
         {"retry_count", i % 5},
         {"retry_backoff_s", (i % 3) * 10},
         {"param", i % 2 == 1 ? fmt::format("line one of {}\nline two ✓", i) : ""},
         {"tags", i % 4 == 3 ? json::array() : json::array({fmt::format("team:{}", i % 3), "nightly"})},
         {"enabled", i % 8 == 0}};
  switch (i % 4) {
    case 0:
      j["schedule_type"] = "CRON";
      j["schedule_conf"] = fmt::format("0 {} 3 * * ?", i);  // 03:xx in Berlin: never during the test
      j["time_zone"] = "Europe/Berlin";
      break;
    case 1:
      j["schedule_type"] = "FIX_RATE";
      j["schedule_conf"] = std::to_string(3600 + i);
      break;
    case 2:
      j["schedule_type"] = "NONE";
      break;
    default:
      j["schedule_type"] = "CRON";
      j["schedule_conf"] = "0 0 4 1 1 ?";
      j["time_zone"] = "Asia/Shanghai";
  }
  if (i % 6 == 5) {
    j["glue_type"] = "GLUE_SHELL";
    j["glue_source"] = fmt::format("#!/bin/sh\necho \"job {}\"\n", i);
    j["glue_remark"] = "first version";
  } else {
    j["handler"] = "demoJobHandler";
  }
  return j;
}

// `body` as a TOML document (strings, integers, booleans, integer lists).
std::string ToToml(const json& body) {
  std::string out = "# a job for cronwheel jobs create\n";
  for (const auto& [k, v] : body.items()) {
    if (v.is_string()) {
      const auto s = v.get<std::string>();
      if (k == "glue_source") {
        out += fmt::format("{} = \"\"\"\n{}\"\"\"\n", k, s);  // a multi-line string: the script as written
      } else {
        out += fmt::format("{} = {}\n", k, TomlString(s));
      }
    } else {
      out += fmt::format("{} = {}\n", k, v.dump());
    }
  }
  return out;
}

TEST_F(CliE2E, FiftyJobsCreatedExportedAndImportedIntoAnotherGroupAreEqualFieldByField) {
  const int source = CreateGroup("cli-export-source");
  const int target = CreateGroup("cli-import-target");
  std::vector<int> ids;
  for (int i = 0; i < kJobs; ++i) {
    auto body = JobSpec(i);
    if (i % 10 == 9) body["child_job_ids"] = json::array({ids.back()});
    std::vector<std::string> args = {"jobs", "create", "--json"};
    if (i % 3 == 0) {
      body["group_id"] = source;
    } else {
      args.insert(args.end(), {"--group", std::to_string(source)});
    }
    args.push_back(i % 2 == 0 ? WriteFile(fmt::format("job-{}.toml", i), ToToml(body))
                              : WriteFile(fmt::format("job-{}.json", i), body.dump(2)));
    const auto run = Cli(args);
    ASSERT_EQ(run.code, 0) << "job " << i << ": " << run.err;
    ids.push_back(json::parse(run.out).at("id").get<int>());
  }
  // The jobs are what the files said.
  const auto created = GroupJobs(source);
  ASSERT_EQ(created.size(), static_cast<std::size_t>(kJobs));
  for (const auto& job : created) {
    const auto i = static_cast<int>(std::find(ids.begin(), ids.end(), job.at("id").get<int>()) - ids.begin());
    ASSERT_LT(i, kJobs);
    const auto spec = JobSpec(i);
    for (const auto& [k, v] : spec.items())
      EXPECT_EQ(job.at(k), v) << "job " << i << " field " << k;
  }

  const auto doc_path = (cluster_->dir() / "export.json").string();
  auto run = Cli({"export", "--group", std::to_string(source), "-o", doc_path});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr(fmt::format("exported {} jobs", kJobs)));
  const auto doc = json::parse(ReadFile(doc_path));
  EXPECT_EQ(doc.at("format"), "cronwheel.jobs");
  EXPECT_EQ(doc.at("version"), 1);
  ASSERT_EQ(doc.at("jobs").size(), static_cast<std::size_t>(kJobs));
  for (const auto& j : doc.at("jobs")) {
    for (const auto* owned :
         {"id", "group_id", "created_ms", "updated_ms", "next_fire_ms", "glue_updated_ms"})
      EXPECT_FALSE(j.contains(owned)) << owned;
  }

  run = Cli({"import", doc_path, "--group", std::to_string(target), "--json"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(json::parse(run.out).at("created").size(), static_cast<std::size_t>(kJobs));

  // Field by field, apart from ids, the group and what the server owns; children by description.
  const auto by_description = [](const std::vector<json>& jobs) {
    std::map<int, std::string> name;
    for (const auto& j : jobs)
      name[j.at("id").get<int>()] = j.at("description").get<std::string>();
    std::map<std::string, json> out;
    for (auto j : jobs) {
      json children = json::array();
      for (const auto& c : j.at("child_job_ids"))
        children.push_back(name.at(c.get<int>()));
      j["child_job_ids"] = children;
      for (const auto* owned : {"id", "group_id", "created_ms", "updated_ms", "next_fire_ms", "last_fire_ms",
                                "glue_updated_ms", "stop_reason"})
        j.erase(owned);
      out[j.at("description").get<std::string>()] = j;
    }
    return out;
  };
  const auto want = by_description(created);
  const auto got = by_description(GroupJobs(target));
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [description, job] : want) {
    ASSERT_TRUE(got.contains(description)) << description;
    for (const auto& [k, v] : job.items())
      EXPECT_EQ(got.at(description).at(k), v) << description << " field " << k;
  }
  EXPECT_EQ(got.at("job 09 sync").at("child_job_ids"), json::array({"job 08 sync"}));
  // The tags came along: the imported jobs are found by them.
  run = Cli(
      {"jobs", "list", "--group", std::to_string(target), "--tag", "team:1", "--tag", "NIGHTLY", "--json"});
  ASSERT_EQ(run.code, 0) << run.err;
  int tagged = 0;
  for (int i = 0; i < kJobs; ++i)
    tagged += i % 4 != 3 && i % 3 == 1 ? 1 : 0;
  EXPECT_EQ(json::parse(run.out).at("total"), tagged);

  // Again, skipping what exists: nothing new.
  run = Cli({"import", doc_path, "--group", std::to_string(target), "--on-conflict", "skip", "--json"});
  ASSERT_EQ(run.code, 0) << run.err;
  const auto again = json::parse(run.out);
  EXPECT_TRUE(again.at("created").empty());
  EXPECT_EQ(again.at("skipped").size(), static_cast<std::size_t>(kJobs));
  // Again, failing on conflicts (the default): nothing changes.
  run = Cli({"import", doc_path, "--group", std::to_string(target)});
  EXPECT_EQ(run.code, 1);
  EXPECT_THAT(run.err, HasSubstr("exists in the target group"));
  EXPECT_THAT(run.err, HasSubstr("nothing was changed"));
  EXPECT_EQ(GroupJobs(target).size(), static_cast<std::size_t>(kJobs));
}

TEST_F(CliE2E, XxlJobPageListAnswersOfEachVersionAreImported) {
  // tests/unit/cli/fixtures/: one /jobinfo/pageList answer of XXL-JOB 2.x, 3.3 and 3.5, with two jobs each,
  // the first the parent of the second. The admin takes every mapped job as it is, child link included.
  struct Case {
    std::string fixture;
    std::string source;
    std::string parent;
    std::string child;
  };
  const std::vector<Case> cases = {
      {"xxl-job-2.x-pagelist.json", "XXL-JOB 2.x /jobinfo/pageList answer", "测试任务1",
       "clean up temp files"},
      {"xxl-job-3.3-pagelist.json", "XXL-JOB 3.3+ /jobinfo/pageList answer", "nightly invoices",
       "send invoices"},
      {"xxl-job-3.5-pagelist.json", "XXL-JOB 3.5+ /jobinfo/pageList answer", "daily report",
       "archive report"},
  };
  int n = 0;
  for (const auto& c : cases) {
    const int group = CreateGroup(fmt::format("cli-xxl-import-{}", ++n));
    const auto file = std::string(CRONWHEEL_SOURCE_DIR) + "/tests/unit/cli/fixtures/" + c.fixture;
    const auto run = Cli({"import", file, "--group", std::to_string(group), "--time-zone", "Europe/Berlin"});
    EXPECT_EQ(run.code, 0) << c.fixture << ": " << run.err;
    EXPECT_THAT(run.err, HasSubstr(fmt::format("from {}: 2 created, 0 updated, 0 skipped", c.source)));
    EXPECT_THAT(run.err, ::testing::Not(HasSubstr("warning"))) << c.fixture;
    std::map<std::string, json> by_description;
    for (const auto& j : GroupJobs(group))
      by_description[j.at("description").get<std::string>()] = j;
    ASSERT_EQ(by_description.size(), 2U) << c.fixture;
    const auto& parent = by_description[c.parent];
    const auto& child = by_description[c.child];
    EXPECT_EQ(parent.at("child_job_ids"), json::array({child.at("id")})) << c.fixture;
    EXPECT_EQ(parent.at("time_zone"), "Europe/Berlin")
        << c.fixture << ": --time-zone (no XXL-JOB version has a job time zone)";
    EXPECT_EQ(parent.at("enabled"), true) << c.fixture << ": triggerStatus 1";
    EXPECT_EQ(child.at("enabled"), false) << c.fixture << ": triggerStatus 0";
  }
}

TEST_F(CliE2E, BadInputAndAnUnreachableAdminGiveTheirExitCodes) {
  // A wrong type in the file: refused before anything is sent, naming the field and its line.
  auto run =
      Cli({"jobs", "create", "--group", std::to_string(group_),
           WriteFile("bad.toml", "description = \"bad\"\nschedule_type = \"NONE\"\ntimeout_s = \"ten\"\n")});
  EXPECT_EQ(run.code, 1);
  EXPECT_THAT(run.err, HasSubstr("timeout_s: expected an integer, got a string (\"ten\") (line 3)"));
  // The admin's refusal: its field errors.
  run = Cli({"jobs", "create", "--group", std::to_string(group_),
             WriteFile("bad-cron.json", R"({"description": "bad cron", "schedule_type": "CRON",
                                           "schedule_conf": "61 * * * * ?"})")});
  EXPECT_EQ(run.code, 1);
  EXPECT_THAT(run.err, HasSubstr("HTTP 400"));
  EXPECT_THAT(run.err, HasSubstr("schedule_conf:"));
  run = Cli({"jobs", "show", "999999"});
  EXPECT_EQ(run.code, 1);
  EXPECT_THAT(run.err, HasSubstr("HTTP 404"));
  // A bad token.
  run = Cli({"groups", "list"}, {{"CRONWHEEL_API_TOKEN", "cwt_wrong"}});
  EXPECT_EQ(run.code, 1);
  EXPECT_THAT(run.err, HasSubstr("HTTP 401"));
  // Nothing listens there.
  run = Cli({"groups", "list", "--admin", fmt::format("http://127.0.0.1:{}", cwtest::FreeTcpPort())});
  EXPECT_EQ(run.code, 3);
  EXPECT_THAT(run.err, HasSubstr("cannot reach the admin"));
  // Usage: no token, an unknown option.
  run = Cli({"groups", "list"}, {{"CRONWHEEL_API_TOKEN", ""}});
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr("CRONWHEEL_API_TOKEN"));
  run = Cli({"jobs", "list", "--frobnicate"});
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr("--frobnicate"));
  run = Cli({"jobs", "delete", "1"});  // stdin is not a terminal
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr("--yes"));
}

TEST_F(CliE2E, TriggerThenTailFollowPrintsTheFiresOutputUntilItsResult) {
  const auto file = WriteFile("demo.toml",
                              "description = \"cli demo\"\nschedule_type = \"NONE\"\n"
                              "handler = \"demoJobHandler\"\n");
  auto run = Cli({"jobs", "create", "--group", std::to_string(group_), "--json", file});
  ASSERT_EQ(run.code, 0) << run.err;
  const auto job = std::to_string(json::parse(run.out).at("id").get<int>());

  run = Cli({"executors", "list", "--group", std::to_string(group_)});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr(cluster_->executor_address(0)));
  EXPECT_THAT(run.out, HasSubstr("registered"));
  run = Cli({"jobs", "list", "--group", std::to_string(group_)});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("cli demo"));

  // demoJobHandler with param 2: runs two seconds, one line a second.
  run = Cli({"jobs", "trigger", job, "--param", "2", "--json"});
  ASSERT_EQ(run.code, 0) << run.err;
  const auto log = std::to_string(json::parse(run.out).at("log_id").get<std::int64_t>());
  const auto started = std::chrono::steady_clock::now();
  run = Cli({"logs", "tail", log, "--follow", "--interval", "200"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("demoJobHandler: param '2'"));
  EXPECT_THAT(run.out, HasSubstr("demoJobHandler: beat 1"));
  EXPECT_THAT(run.err, HasSubstr(fmt::format("fire {}: SUCCESS (handle_code 200)", log)));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s);

  // The fire is in the job's list.
  run = Cli({"logs", "list", "--job", job});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("SUCCESS"));
  EXPECT_THAT(run.out, HasSubstr("MANUAL"));
}

}  // namespace

// Run once through the CLI on a real admin and executor: a request fires once, at its second, with its
// parameter; a cancelled one never fires.
TEST_F(CliE2E, RunOnceFiresOnceAtItsInstantWithItsParameterAndACancelledOneNever) {
  const auto file = WriteFile("once.toml",
                              "description = \"run once\"\nschedule_type = \"NONE\"\n"
                              "handler = \"demoJobHandler\"\n");
  auto run = Cli({"jobs", "create", "--group", std::to_string(group_), "--json", file});
  ASSERT_EQ(run.code, 0) << run.err;
  const auto job = std::to_string(json::parse(run.out).at("id").get<int>());

  run = Cli({"jobs", "run-once", job, "--in", "3s", "--param", "0", "--json"});
  ASSERT_EQ(run.code, 0) << run.err;
  const auto asked = json::parse(run.out);
  const std::int64_t fire_at = asked.at("fire_at_ms");
  EXPECT_EQ(fire_at % 1000, 0) << "a whole second";
  run = Cli({"jobs", "run-once", job, "--in", "4s", "--json"});
  ASSERT_EQ(run.code, 0) << run.err;
  const auto cancelled_id = std::to_string(json::parse(run.out).at("id").get<std::int64_t>());
  run = Cli({"jobs", "run-once-cancel", job, cancelled_id});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("cancelled"));

  // Wait (at most 30 s) for the first to be fired, then for its result.
  json listed;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    run = Cli({"jobs", "run-once-list", job, "--json"});
    ASSERT_EQ(run.code, 0) << run.err;
    listed = json::parse(run.out).at("items");
    if (listed.size() == 2 && listed[1].value("state", "") == "FIRED") break;
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_EQ(listed.size(), 2u) << listed.dump();
  EXPECT_EQ(listed[0].value("state", ""), "CANCELLED") << listed.dump();
  ASSERT_EQ(listed[1].value("state", ""), "FIRED") << listed.dump();
  const auto log = std::to_string(listed[1].at("log_id").get<std::int64_t>());
  run = Cli({"logs", "tail", log, "--follow", "--interval", "200"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("demoJobHandler: param '0'"));
  EXPECT_THAT(run.err, HasSubstr(fmt::format("fire {}: SUCCESS (handle_code 200)", log)));

  // After the cancelled one's instant has passed too: one fire in all, at its instant, sent at its second.
  const auto wall_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  std::this_thread::sleep_for(
      std::chrono::milliseconds(std::max<std::int64_t>(0, fire_at + 3000 - wall_ms())));
  run = Cli({"logs", "list", "--job", job, "--json"});
  ASSERT_EQ(run.code, 0) << run.err;
  const auto fires = json::parse(run.out).at("items");
  ASSERT_EQ(fires.size(), 1u) << fires.dump();
  EXPECT_EQ(fires[0].value("trigger_type", ""), "MANUAL");
  EXPECT_EQ(fires[0].at("scheduled_ms").get<std::int64_t>(), fire_at);
  EXPECT_GE(fires[0].at("trigger_ms").get<std::int64_t>(), fire_at - 1000) << "not sent a second early";
}

// Bulk through the CLI: a hundred running jobs stopped in one command, each answered; an id that is no job's
// makes the command exit 1 and is the only failure.
TEST_F(CliE2E, BulkStopOfAHundredRunningJobsStopsEachAndNamesTheOneThatFailed) {
  const int group = CreateGroup("cli-bulk");
  HttpCaller http(cluster_->admin_port(0));
  std::vector<std::string> args = {"jobs", "bulk", "stop"};
  for (int i = 0; i < 100; ++i) {
    const auto r = http.Send("POST", "/api/v1/jobs", cwtest::BearerHeaders(*token_),
                             json{{"group_id", group},
                                  {"description", fmt::format("bulk {}", i)},
                                  {"schedule_type", "CRON"},
                                  {"schedule_conf", "0 0 3 * * ?"},
                                  {"handler", "demoJobHandler"},
                                  {"enabled", true}}
                                 .dump());
    ASSERT_EQ(r.status, 201) << r.body;
    args.push_back(std::to_string(r.Json()->at("id").get<int>()));
  }
  const auto running = [&] {
    int n = 0;
    for (const auto& job : GroupJobs(group))
      n += job.value("enabled", false) ? 1 : 0;
    return n;
  };
  ASSERT_EQ(running(), 100);
  args.emplace_back("999999");
  const auto run = Cli(args);
  EXPECT_EQ(run.code, 1) << run.err;
  EXPECT_THAT(run.out, HasSubstr("999999     404  job 999999 not found"));
  EXPECT_THAT(run.err, HasSubstr("stop: 100 of 101 job(s) done, 1 failed"));
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 102) << "a header and a line per job";
  EXPECT_EQ(running(), 0);
}

// Issue 24, item 6: `cronwheel login` as a user runs it, with this test as the browser. The client prints the
// console's address and waits on its loopback port; the admin's session approves what the address asks for;
// the browser follows the answer to the client, which trades the code for a token, saves it (0600, with the
// admin's URL) and uses it for the next command, which has no other token. The code is good once; an API
// token cannot approve; the saved token is not sent to another admin; `logout` deletes it on the admin.
TEST_F(CliE2E, LoginThroughTheConsoleSavesATokenTheNextCommandsUseAndLogoutDeletesIt) {
  const auto admin = fmt::format("http://127.0.0.1:{}", cluster_->admin_port(0));
  const auto xdg = cluster_->dir() / "xdg";
  const auto out = cluster_->dir() / "login.out";
  const auto err = cluster_->dir() / "login.err";
  ChildProcess login(
      {.program = CRONWHEEL_CLI_BIN,
       .args = {"login", "--no-browser", "--scope", "admin", "--name", "e2e laptop", "--wait", "60"},
       .env = {{"CRONWHEEL_ADMIN_URL", admin}, {"XDG_CONFIG_HOME", xdg.string()}},
       .log_path = out.string(),
       .stderr_path = err.string(),
       .clean_env = true});
  // The address it prints: <admin>/#/cli-login?port=...&state=...&code_challenge=...&name=...&scope=...
  std::map<std::string, std::string> ask;
  ASSERT_TRUE(cwtest::Eventually(
      [&] {
        const auto text = ReadFile(err);
        const auto at = text.find(admin + "/#/cli-login?");
        if (at == std::string::npos) return false;
        const auto end = text.find('\n', at);
        std::stringstream query(text.substr(at + admin.size() + 13, end - at - admin.size() - 13));
        for (std::string kv; std::getline(query, kv, '&');)
          ask[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
        return true;
      },
      15s, 50ms))
      << ReadFile(err);
  EXPECT_EQ(ask["name"], "e2e%20laptop");
  EXPECT_EQ(ask["scope"], "admin");
  EXPECT_EQ(ask["code_challenge"].size(), 43u);
  const json approve{{"port", std::stoi(ask["port"])},
                     {"state", ask["state"]},
                     {"code_challenge", ask["code_challenge"]},
                     {"name", "e2e laptop"},
                     {"scope", ask["scope"]},
                     {"expires_in_days", std::stoi(ask["expires_in_days"])}};
  HttpCaller http(cluster_->admin_port(0));
  // An API token cannot approve a login: only the console's user, signed in.
  auto r = http.Send("POST", "/api/v1/auth/cli/authorize", cwtest::BearerHeaders(*token_), approve.dump());
  EXPECT_EQ(r.status, 403) << r.body;
  const auto session = cwtest::Login(http, "admin", kPassword);
  ASSERT_TRUE(session);
  r = http.Send("POST", "/api/v1/auth/cli/authorize", cwtest::SessionHeaders(*session), approve.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const auto redirect = r.Json()->at("redirect").get<std::string>();
  const auto prefix = fmt::format("http://127.0.0.1:{}", ask["port"]);
  ASSERT_TRUE(redirect.starts_with(prefix + "/callback?code=")) << redirect;
  // The browser follows the answer; a wrong state is turned away first.
  HttpCaller browser(std::stoi(ask["port"]));
  EXPECT_EQ(browser.Send("GET", "/callback?code=x&state=forged", {}, "", "").status, 400);
  r = browser.Send("GET", redirect.substr(prefix.size()), {}, "", "");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr("You may close this window"));
  const auto code = login.Wait(30s);
  ASSERT_TRUE(code.has_value()) << "cronwheel login did not end";
  EXPECT_EQ(*code, 0) << ReadFile(err);
  EXPECT_THAT(ReadFile(out), HasSubstr(fmt::format("Logged in to {} as admin (token ", admin)));
  const auto saved = xdg / "cronwheel" / "token";
  ASSERT_TRUE(std::filesystem::exists(saved));
  EXPECT_EQ(std::filesystem::status(saved).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const auto lines = ReadFile(saved);
  EXPECT_TRUE(lines.starts_with("cwt_")) << "the token, then the admin";
  EXPECT_THAT(lines, HasSubstr("\n" + admin + "\n"));
  // The code is used up.
  const auto used =
      redirect.substr(redirect.find("code=") + 5, redirect.find("&state") - redirect.find("code=") - 5);
  r = http.Send("POST", "/api/v1/auth/cli/token", {},
                json{{"code", used}, {"code_verifier", std::string(43, 'a')}}.dump());
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_THAT(r.body, HasSubstr("unknown, used or expired"));

  // The next command has no token but the saved login: it works, for this admin only.
  const std::map<std::string, std::string> env = {{"XDG_CONFIG_HOME", xdg.string()}};
  ChildProcess groups({.program = CRONWHEEL_CLI_BIN,
                       .args = {"groups", "list", "--admin", admin},
                       .env = env,
                       .log_path = (cluster_->dir() / "groups.out").string(),
                       .stderr_path = (cluster_->dir() / "groups.err").string(),
                       .clean_env = true});
  EXPECT_EQ(groups.Wait(30s).value_or(-1), 0) << ReadFile(cluster_->dir() / "groups.err");
  ChildProcess elsewhere({.program = CRONWHEEL_CLI_BIN,
                          .args = {"groups", "list", "--admin", "http://127.0.0.1:9"},
                          .env = env,
                          .log_path = (cluster_->dir() / "elsewhere.out").string(),
                          .stderr_path = (cluster_->dir() / "elsewhere.err").string(),
                          .clean_env = true});
  EXPECT_EQ(elsewhere.Wait(30s).value_or(-1), 2);
  EXPECT_THAT(ReadFile(cluster_->dir() / "elsewhere.err"), HasSubstr("the saved login is for " + admin));

  // Logout deletes the token on the admin and the file.
  const auto token_id = std::stoi(lines.substr(lines.rfind('\n', lines.size() - 2) + 1));
  ChildProcess logout({.program = CRONWHEEL_CLI_BIN,
                       .args = {"logout", "--admin", admin},
                       .env = env,
                       .log_path = (cluster_->dir() / "logout.out").string(),
                       .stderr_path = (cluster_->dir() / "logout.err").string(),
                       .clean_env = true});
  EXPECT_EQ(logout.Wait(30s).value_or(-1), 0) << ReadFile(cluster_->dir() / "logout.err");
  EXPECT_FALSE(std::filesystem::exists(saved));
  r = http.Send("GET", "/api/v1/tokens", cwtest::SessionHeaders(*session), "", "");
  ASSERT_EQ(r.status, 200);
  for (const auto& t : r.Json()->at("items"))
    EXPECT_NE(t.at("id").get<int>(), token_id) << "the login's token is deleted";
  std::printf(
      "[cli login] approved, traded and saved; token %d used by the next command, deleted by logout\n",
      token_id);
}

// A trade with a verifier that is not the challenge's is refused, and uses the code up; so is a denial.
TEST_F(CliE2E, ALoginTradedWithAnotherVerifierIsRefusedAndADeniedOneEndsTheClient) {
  HttpCaller http(cluster_->admin_port(0));
  const auto session = cwtest::Login(http, "admin", kPassword);
  ASSERT_TRUE(session);
  // The challenge of the verifier "a" x 43 (RFC 7636 S256), computed apart from the code under test.
  const std::string verifier(43, 'a');
  const std::string challenge = "ZtNPunH49FD35FWYhT5Tv8I7vRKQJ8uxMaL0_9eHjNA";
  const json approve{{"port", 9}, {"state", "s"}, {"code_challenge", challenge}, {"name", "x"}};
  auto r = http.Send("POST", "/api/v1/auth/cli/authorize", cwtest::SessionHeaders(*session), approve.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  auto redirect = r.Json()->at("redirect").get<std::string>();
  auto code =
      redirect.substr(redirect.find("code=") + 5, redirect.find("&state") - redirect.find("code=") - 5);
  r = http.Send("POST", "/api/v1/auth/cli/token", {},
                json{{"code", code}, {"code_verifier", std::string(43, 'b')}}.dump());
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_THAT(r.body, HasSubstr("code_verifier"));
  r = http.Send("POST", "/api/v1/auth/cli/token", {},
                json{{"code", code}, {"code_verifier", verifier}}.dump());
  EXPECT_EQ(r.status, 400) << "used up by the wrong trade: " << r.body;
  // The right verifier on a fresh approval: a token of scope read (the default), for 90 days.
  r = http.Send("POST", "/api/v1/auth/cli/authorize", cwtest::SessionHeaders(*session), approve.dump());
  redirect = r.Json()->at("redirect").get<std::string>();
  code = redirect.substr(redirect.find("code=") + 5, redirect.find("&state") - redirect.find("code=") - 5);
  r = http.Send("POST", "/api/v1/auth/cli/token", {},
                json{{"code", code}, {"code_verifier", verifier}}.dump());
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.Json()->at("scope"), "read");
  EXPECT_TRUE(r.Json()->at("token").get<std::string>().starts_with("cwt_"));

  // A denial in the console: the client ends with 1 and says so.
  const auto err = cluster_->dir() / "denied.err";
  ChildProcess login(
      {.program = CRONWHEEL_CLI_BIN,
       .args = {"login", "--no-browser", "--wait", "60"},
       .env = {{"CRONWHEEL_ADMIN_URL", fmt::format("http://127.0.0.1:{}", cluster_->admin_port(0))},
               {"XDG_CONFIG_HOME", (cluster_->dir() / "xdg-denied").string()}},
       .log_path = (cluster_->dir() / "denied.out").string(),
       .stderr_path = err.string(),
       .clean_env = true});
  std::string port;
  std::string state;
  ASSERT_TRUE(cwtest::Eventually(
      [&] {
        const auto text = ReadFile(err);
        const auto p = text.find("port=");
        const auto s = text.find("&state=");
        if (p == std::string::npos || s == std::string::npos) return false;
        port = text.substr(p + 5, text.find('&', p) - p - 5);
        state = text.substr(s + 7, text.find('&', s + 1) - s - 7);
        return true;
      },
      15s, 50ms));
  HttpCaller browser(std::stoi(port));
  EXPECT_EQ(browser.Send("GET", "/callback?error=access_denied&state=" + state, {}, "", "").status, 200);
  EXPECT_EQ(login.Wait(30s).value_or(-1), 1);
  EXPECT_THAT(ReadFile(err), HasSubstr("the login was denied in the console"));
  EXPECT_FALSE(std::filesystem::exists(cluster_->dir() / "xdg-denied" / "cronwheel" / "token"));
}
