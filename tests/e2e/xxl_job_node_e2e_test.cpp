// End-to-end against a real third-party executor: the npm package xxl-job 0.1.7 ("Provide xxl-job SDK for
// NodeJs", express 5 + axios, github.com/ikexing-cn/xxl-job-nodejs), run by tests/e2e/xxl_job_node/
// executor.mjs with BEAN handlers that append "<logId> <jobId> <receivedMs> ran <executorParams as JSON>" to
// a trace file (nodeTraceHandler; nodeEchoHandler also returns "echo:<executorParams>"). cronwheel's admin
// has no executor of its own here: 100 jobs every second for 30 s go to the Node executor, and every instant
// must run there exactly once, with no failed trigger and every callback recorded (handle code 200). Counts
// and the receive lag are printed (the slowest fire of each instant too), not asserted: the lag is the Node
// process working through 100 fires, about 2.5 ms of CPU each, on a box it shares with the debug-build admin
// and PostgreSQL (p99 410-680 ms on the development box, 2 Dec; docs/performance.md). A fire later than a
// second would meet its job's previous run and be refused (below), so scripts/test runs this test when
// nothing is built behind it. How close the run came to a refusal is printed too: the least time by which a
// job's previous fire had been called back when its next one arrived.
// A workflow run triggered over the REST API passes its parameter and a parent's handleMsg into the
// parameters the Node executor's handlers receive.
//
// What the package does that XXL-JOB's own executors do not, and how this test lives with it (the program's
// header has the details):
// - it registers "http://127.0.0.1:PORT/job" (its routes live under "/job"), an address with a path;
// - it refuses a /run (code 500, "There is already have a same job is running.") until the job's previous
//   fire has called back, instead of queueing it (XXL-JOB's SERIAL_EXECUTION): the handler is instant, so
//   each job's fire has called back long before the next second; a refusal would show as a failed trigger
//   and as a "refused" line in the trace;
// - a failed callback or registry request would end the process (an unhandled rejection): the program logs
//   and counts them instead, and its requests time out after 3 s.
//
// The admin's connection counters are printed too (its /metrics). Against this single-threaded server the
// admin's rule for thread-per-connection executors (admin/include/admin/dispatch/connection_policy.hpp: a
// new connection's first request unanswered after 20 ms makes the admin close one of its idle ones and cap
// its connections) holds the pool at about 4 connections. That costs no lag: with the rule switched off the
// admin opened 32 and the lag was the same (p99 589 and 649 ms against 570 and 666 ms, 2 Dec).
//
// node and the package are installed by `scripts/setup --web` (npm ci in tests/e2e/xxl_job_node); without
// them the test fails and says so.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>
#include <utility>

#include "cluster.hpp"
#include "cwtest/process.hpp"
#include "http_client.hpp"
#include "node_executor.hpp"
#include "ringwheel/schedule.hpp"

namespace {

using namespace std::chrono_literals;
using namespace cwtest;
namespace fs = std::filesystem;

constexpr const char* kCron = "* * * * * ?";
constexpr const char* kAppName = "xxl-job-node";
constexpr const char* kHandler = "nodeTraceHandler";
constexpr int kJobs = 100;
constexpr std::int64_t kSeconds = 30;

// One line of the Node executor's trace: a /run it ran (the handler's line) or refused.
struct Run {
  std::int64_t log_id = 0;
  int job_id = 0;
  std::int64_t received_ms = 0;
  std::string outcome;  // ran, refused
};

std::vector<Run> ReadTrace(const fs::path& trace) {
  std::vector<Run> out;
  std::ifstream in(trace);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    Run r;
    if (fields >> r.log_id >> r.job_id >> r.received_ms >> r.outcome) out.push_back(r);
  }
  return out;
}

std::int64_t Percentile(std::vector<std::int64_t> v, double p) {  // by value: sorts its copy
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

void SleepUntil(std::int64_t wall_ms) {
  const auto now = Cluster::NowMs();
  if (wall_ms > now) std::this_thread::sleep_for(std::chrono::milliseconds(wall_ms - now));
}

TEST(XxlJobNodeE2E, HundredJobsEverySecondFor30sRunExactlyOnceOnTheNpmXxlJobExecutor) {
  const auto test_start = Cluster::NowMs();
  const auto node = FindInPath("node");
  if (const auto missing = MissingPrerequisite(node); !missing.empty()) FAIL() << missing;

  Cluster c({.admins = 1, .executors = 0, .app_name = kAppName});
  const auto trace = c.dir() / "xxl-job-node.trace";
  auto started = StartNodeExecutor(c, node, kAppName, trace);
  ASSERT_TRUE(started.registered) << started.why;
  auto& executor = *started.process;

  const int group = c.AddGroup();
  const auto start = Cluster::NowMs() + 2000;
  std::vector<int> jobs;
  jobs.reserve(kJobs);
  for (int i = 0; i < kJobs; ++i)
    jobs.push_back(c.AddJob(group, kCron, "FIRST", "DO_NOTHING", kHandler, start));
  const auto first = ringwheel::Schedule::Parse("CRON", kCron, "UTC")->NextFireMs(start).value();
  const auto last = first + (kSeconds - 1) * 1000;  // kSeconds instants per job
  SleepUntil(last + 1500);
  c.Exec("UPDATE job SET enabled = false, updated_ms = updated_ms + 1");

  // Results: every fire of the window has its trigger result and, when sent, its callback.
  const auto window = fmt::format("trigger_type = 'CRON' AND scheduled_ms BETWEEN {} AND {}", first, last);
  const bool settled = Eventually(
      [&] {
        return c.Scalar(fmt::format("SELECT count(*) FROM job_log WHERE {} AND (trigger_code = 0 OR"
                                    " (trigger_code = 200 AND handle_code = 0))",
                                    window)) == 0;
      },
      15s, 200ms);
  EXPECT_TRUE(settled) << "fires of the window still without a trigger result or a callback after 15 s";
  executor.Stop(5s);
  const auto output = executor.Output();
  const auto connections_at = output.rfind("connections accepted: ");
  const int connections =
      connections_at == std::string::npos ? -1 : std::stoi(output.substr(connections_at + 22));
  const auto runs = ReadTrace(trace);

  std::map<std::int64_t, std::vector<std::int64_t>> ran;  // log id -> receive times
  int refused = 0;
  for (const auto& r : runs) {
    if (r.outcome == "ran") {
      ran[r.log_id].push_back(r.received_ms);
    } else {
      ++refused;
      ADD_FAILURE() << "the Node executor refused the /run of fire " << r.log_id << " (job " << r.job_id
                    << ")";
    }
  }

  struct Fire {
    std::int64_t log_id;
    int trigger_code;
    int handle_code;
    std::int64_t trigger_ms;  // the admin's trigger start
    std::int64_t handle_ms;   // when the admin recorded its callback
  };
  std::map<std::pair<int, std::int64_t>, Fire> fires;  // (job, instant) -> its fire
  std::set<std::int64_t> known_log_ids;                // every fire of these jobs, in the window or not
  for (const auto& row : c.Exec(
           fmt::format("SELECT job_id, scheduled_ms, id, trigger_code, handle_code, trigger_type, trigger_ms,"
                       " handle_ms FROM job_log WHERE group_id = {}",
                       group))) {
    known_log_ids.insert(row[2].as<std::int64_t>());
    const auto at = row[1].as<std::int64_t>();
    if (row[5].as<std::string>() != "CRON" || at < first || at > last) continue;
    fires[{row[0].as<int>(), at}] = {row[2].as<std::int64_t>(), row[3].as<int>(), row[4].as<int>(),
                                     row[6].as<std::int64_t>(), row[7].as<std::int64_t>()};
  }
  for (const auto& [log_id, times] : ran) {
    if (known_log_ids.count(log_id) == 0)
      ADD_FAILURE() << "the Node executor ran log id " << log_id << ", which is no fire of these jobs";
  }

  int expected = 0, once = 0, missed = 0, twice = 0, failed_triggers = 0, handled_ok = 0;
  std::vector<std::int64_t> lags_ms;                // received - scheduled
  std::vector<std::int64_t> to_send_ms;             // trigger start - scheduled
  std::vector<std::int64_t> on_wire_ms;             // received - trigger start
  std::map<std::int64_t, std::int64_t> slowest_ms;  // instant -> the largest lag of its fires
  // How long before a job's fire reached the executor its previous fire had been called back: the package
  // refuses the fire when this is negative (the callback is answered a moment after the admin records it).
  std::vector<std::int64_t> margins_ms;
  std::vector<std::int64_t> callback_ms;   // received -> its callback recorded by the admin
  std::vector<std::int64_t> lag_steps_ms;  // a job's lag less its lag at the instant before
  const auto schedule = ringwheel::Schedule::Parse("CRON", kCron, "UTC").value();
  for (int job : jobs) {
    // This job's callback time and lag at the instant before, when its fire ran there.
    std::int64_t last_handle_ms = 0;
    std::optional<std::int64_t> last_lag_ms;
    for (auto at = schedule.NextFireMs(first - 1); at && *at <= last; at = schedule.NextFireMs(*at)) {
      const auto previous_handle_ms = std::exchange(last_handle_ms, 0);
      const auto previous_lag_ms = std::exchange(last_lag_ms, std::nullopt);
      ++expected;
      const auto f = fires.find({job, *at});
      if (f == fires.end()) {
        ++missed;
        ADD_FAILURE() << "job " << job << " instant " << *at << ": no fire written";
        continue;
      }
      const auto& fire = f->second;
      if (fire.trigger_code != 200) {
        ++failed_triggers;
        ADD_FAILURE() << "job " << job << " instant " << *at << ": fire " << fire.log_id << " trigger code "
                      << fire.trigger_code;
      }
      if (fire.handle_code == 200) {
        ++handled_ok;
      } else {
        ADD_FAILURE() << "job " << job << " instant " << *at << ": fire " << fire.log_id << " handle code "
                      << fire.handle_code << " (200 expected from its callback)";
      }
      const auto got = ran.find(fire.log_id);
      const std::size_t n = got == ran.end() ? 0 : got->second.size();
      if (n == 0) {
        ++missed;
        ADD_FAILURE() << "job " << job << " instant " << *at << ": fire " << fire.log_id
                      << " never ran on the Node executor";
        continue;
      }
      lags_ms.push_back(got->second.front() - *at);
      slowest_ms[*at] = std::max(slowest_ms[*at], lags_ms.back());
      if (previous_handle_ms > 0) margins_ms.push_back(got->second.front() - previous_handle_ms);
      if (fire.handle_ms > 0) callback_ms.push_back(fire.handle_ms - got->second.front());
      if (previous_lag_ms) lag_steps_ms.push_back(lags_ms.back() - *previous_lag_ms);
      last_lag_ms = lags_ms.back();
      last_handle_ms = fire.handle_ms;
      to_send_ms.push_back(fire.trigger_ms - *at);
      on_wire_ms.push_back(got->second.front() - fire.trigger_ms);
      if (n == 1) {
        ++once;
      } else {
        ++twice;
        ADD_FAILURE() << "job " << job << " instant " << *at << ": fire " << fire.log_id << " ran " << n
                      << " times";
      }
    }
  }

  fmt::print(
      "[{} jobs every second, 1 admin, npm xxl-job 0.1.7 executor, {} s] instants {}: exactly once {}, ",
      kJobs, kSeconds, expected, once);
  fmt::print("missed {}, more than once {}; failed triggers {}; refused /run {}; ", missed, twice,
             failed_triggers, refused);
  fmt::print("callbacks with handle code 200 {}; ", handled_ok);
  fmt::print("lag p50 {} ms, p99 {} ms, max {} ms\n", Percentile(lags_ms, 0.5), Percentile(lags_ms, 0.99),
             Percentile(lags_ms, 1.0));
  std::string by_instant;
  for (const auto& [at, lag] : slowest_ms)
    by_instant += fmt::format("{}{}", by_instant.empty() ? "" : " ", lag);
  fmt::print("[lag] the slowest fire of each instant, ms: {}\n", by_instant);
  fmt::print(
      "[margin] a job's previous fire called back before its next reached the executor: min {} ms, "
      "p1 {} ms, p50 {} ms\n",
      Percentile(margins_ms, 0.0), Percentile(margins_ms, 0.01), Percentile(margins_ms, 0.5));
  fmt::print("[margin] received -> callback recorded p50 {} ms, p99 {} ms, max {} ms\n",
             Percentile(callback_ms, 0.5), Percentile(callback_ms, 0.99), Percentile(callback_ms, 1.0));
  fmt::print("[margin] a job's lag less its lag at the instant before: p1 {} ms, p50 {} ms, p99 {} ms\n",
             Percentile(lag_steps_ms, 0.01), Percentile(lag_steps_ms, 0.5), Percentile(lag_steps_ms, 0.99));
  fmt::print("[where] scheduled -> trigger start p50 {} ms, p99 {} ms; ", Percentile(to_send_ms, 0.5),
             Percentile(to_send_ms, 0.99));
  fmt::print("trigger start -> received p50 {} ms, p99 {} ms\n", Percentile(on_wire_ms, 0.5),
             Percentile(on_wire_ms, 0.99));
  // The admin's connections to the executor by event, from its /metrics (loopback may read it).
  std::string pool;
  {
    constexpr std::string_view kFamily = "cronwheel_executor_connections_total{event=\"";
    std::istringstream lines(HttpCaller(c.admin_port(0)).Send("GET", "/metrics", {}, "", "").body);
    for (std::string line; std::getline(lines, line);) {
      if (!line.starts_with(kFamily)) continue;
      const auto quote = line.find('"', kFamily.size());
      const auto space = line.rfind(' ');
      if (quote == std::string::npos || space == std::string::npos) continue;
      const auto event = line.substr(kFamily.size(), quote - kFamily.size());
      pool += fmt::format("{}{} {}", pool.empty() ? "" : ", ", event, line.substr(space + 1));
    }
  }
  fmt::print("[connections] the admin's pool: {}\n", pool);
  fmt::print("[connections] the Node executor accepted {} TCP connections for {} runs; the test took {} ms\n",
             connections, runs.size(), Cluster::NowMs() - test_start);
  EXPECT_EQ(expected, kJobs * kSeconds);
  EXPECT_EQ(once, expected);
  EXPECT_EQ(missed, 0);
  EXPECT_EQ(twice, 0);
  EXPECT_EQ(failed_triggers, 0);
  EXPECT_EQ(refused, 0);
  EXPECT_EQ(handled_ok, expected);
  EXPECT_EQ(output.find("request failed:"), std::string::npos)
      << "a registry or callback request of the Node executor failed:\n"
      << executor.LogTail();
}

// Data passing into an XXL-JOB-protocol executor: a workflow a -> b whose two nodes run on the Node executor,
// triggered over the REST API with a run parameter. a (nodeEchoHandler) has the parameter
// {{workflow.param}} and returns "echo:<what it received>", which the package sends back as its handleMsg
// (JSON.stringify of it, with the quotes); b (nodeTraceHandler) has the JSON parameter
// {"wf": "{{workflow.param}}", "a": "{{parents.a.handle_msg}}"}, into whose strings the values go as data
// (admin/model/parent_refs.hpp: quotes and braces of theirs escaped). The admin resolves both before it sends
// each /run: the Node executor's trace shows the values its handlers received.
TEST(XxlJobNodeE2E, AWorkflowPassesItsParamAndAParentsHandleMsgIntoTheNpmExecutorsParameter) {
  constexpr const char* kPassword = "xxl-job-node-e2e-password";
  const auto test_start = Cluster::NowMs();
  const auto node = FindInPath("node");
  if (const auto missing = MissingPrerequisite(node); !missing.empty()) FAIL() << missing;

  Cluster c({.admins = 1,
             .executors = 0,
             .app_name = kAppName,
             .admin_env = {{"CRONWHEEL_ADMIN_PASSWORD", kPassword}}});
  const auto trace = c.dir() / "xxl-job-node.trace";
  auto started = StartNodeExecutor(c, node, kAppName, trace);
  ASSERT_TRUE(started.registered) << started.why;
  auto& executor = *started.process;

  // An API token, as a client of the REST API would have.
  HttpCaller http(c.admin_port(0));
  const auto session = Login(http, "admin", kPassword);
  ASSERT_TRUE(session);
  const auto minted = http.Send("POST", "/api/v1/tokens", SessionHeaders(*session),
                                nlohmann::json{{"name", "xxl-job-node-e2e"}, {"scope", "write"}}.dump());
  ASSERT_EQ(minted.status, 201) << minted.body;
  const auto token = minted.Json()->at("token").get<std::string>();

  const int group = c.AddGroup();
  const auto add_job = [&](const char* handler) {
    return static_cast<int>(
        c.Scalar(fmt::format("INSERT INTO job (group_id, description, handler, route_strategy, schedule_type,"
                             " glue_updated_ms, created_ms, updated_ms) VALUES ({}, 'node', '{}', 'FIRST',"
                             " 'NONE', 1, 1, 1) RETURNING id",
                             group, handler)));
  };
  const int a = add_job("nodeEchoHandler");
  const int b = add_job(kHandler);
  const nlohmann::json nodes = {
      {{"key", "a"}, {"job_id", a}, {"param", "{{workflow.param}}"}},
      {{"key", "b"},
       {"job_id", b},
       {"param", R"({"wf": "{{workflow.param}}", "a": "{{parents.a.handle_msg}}"})"}}};
  const nlohmann::json edges = {{{"from", "a"}, {"to", "b"}}};
  const int wf = static_cast<int>(c.Scalar(
      fmt::format("INSERT INTO workflow (group_id, name, nodes, edges, created_ms, updated_ms) VALUES ({}, "
                  "'to node', '{}', '{}', 1, 1) RETURNING id",
                  group, nodes.dump(), edges.dump())));
  const std::string param = "p-42 {\"k\": [1, 2]} ü";
  const auto triggered = http.Send("POST", fmt::format("/api/v1/workflows/{}/trigger", wf),
                                   BearerHeaders(token), nlohmann::json{{"param", param}}.dump());
  ASSERT_EQ(triggered.status, 202) << triggered.body;
  const auto run = triggered.Json()->at("run_id").get<std::int64_t>();
  const bool ended = Eventually(
      [&] {
        return c.Scalar(fmt::format("SELECT count(*) FROM workflow_run WHERE id = {} AND state <> 'RUNNING'",
                                    run)) == 1;
      },
      30s, 200ms);
  executor.Stop(5s);
  ASSERT_TRUE(ended) << "run " << run << " did not end; the Node executor:\n" << executor.LogTail();
  const auto state =
      c.Exec(fmt::format("SELECT state, trigger_type, param, note FROM workflow_run WHERE id = {}", run));
  EXPECT_EQ(state[0][0].as<std::string>(), "SUCCESS") << state[0][3].c_str();
  EXPECT_EQ(state[0][1].as<std::string>(), "API");
  EXPECT_EQ(state[0][2].as<std::string>(), param);

  std::map<std::string, pqxx::row> fire;  // node -> its fire
  for (const auto& r :
       c.Exec(fmt::format("SELECT workflow_node, id, status, executor_param, handle_code, handle_msg,"
                          " trigger_type FROM job_log WHERE workflow_run_id = {}",
                          run)))
    fire.emplace(r[0].as<std::string>(), r);
  ASSERT_EQ(fire.size(), 2u);
  ASSERT_EQ(c.Scalar(fmt::format("SELECT count(*) FROM job_log WHERE workflow_run_id = {}", run)), 2);
  // What the handlers received, from the trace: log id -> the executorParams of each run.
  std::map<std::int64_t, std::vector<std::string>> received;
  {
    std::ifstream in(trace);
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      std::int64_t log_id = 0, job_id = 0, received_ms = 0;
      std::string outcome;
      if (!(fields >> log_id >> job_id >> received_ms >> outcome) || outcome != "ran") continue;
      std::string rest;
      std::getline(fields, rest);
      const auto j = nlohmann::json::parse(rest, nullptr, false);
      received[log_id].push_back(j.is_string() ? j.get<std::string>() : "<not traced: " + rest + ">");
    }
  }
  const auto got = [&](const std::string& key) {
    const auto it = received.find(fire.at(key)[1].as<std::int64_t>());
    return it == received.end() ? std::vector<std::string>{} : it->second;
  };
  const std::string a_msg = nlohmann::json("echo:" + param).dump();  // JSON.stringify("echo:" + param)
  const std::string b_param = nlohmann::ordered_json{{"wf", param}, {"a", a_msg}}.dump();
  for (const auto& [key, f] : fire) {
    EXPECT_EQ(f[2].as<std::string>(), "SUCCESS") << "node " << key;
    EXPECT_EQ(f[4].as<int>(), 200) << "node " << key;
    EXPECT_EQ(f[6].as<std::string>(), "WORKFLOW") << "node " << key;
  }
  EXPECT_EQ(fire.at("a")[3].as<std::string>(), param);
  EXPECT_EQ(fire.at("a")[5].as<std::string>(), a_msg) << "a's handleMsg as the package sent it";
  EXPECT_EQ(fire.at("b")[3].as<std::string>(), b_param);
  EXPECT_EQ(got("a"), std::vector<std::string>{param}) << "a ran once, with the run's parameter";
  EXPECT_EQ(got("b"), std::vector<std::string>{b_param})
      << "b ran once, with the run's parameter and a's handleMsg";
  const auto b_got = got("b");
  fmt::print(
      "[workflow -> npm xxl-job] run {} ({}), param '{}': a received '{}' and answered handleMsg {}; b "
      "received '{}'; the test took {} ms\n",
      run, state[0][0].c_str(), param, got("a").empty() ? "<nothing>" : got("a").front(),
      fire.at("a")[5].c_str(), b_got.empty() ? "<nothing>" : b_got.front(), Cluster::NowMs() - test_start);
}

}  // namespace
