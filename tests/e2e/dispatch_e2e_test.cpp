// End-to-end dispatch on loopback: one admin, three executors (the third runs scripts). ROUND spreads
// evenly; FAILOVER routes around a killed executor on the next trigger; SHARDING_BROADCAST reaches all
// three with indexes 0..2; a failing job is retried retry_count times with back-off and then alarmed to a
// local webhook receiver; a child job fires after its parent succeeds. Each test prints what it measured.
#include <date/date.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "cluster.hpp"
#include "cwtest/loopback_server.hpp"

namespace {

using namespace std::chrono_literals;
using cwtest::Cluster;
using nlohmann::json;

void SleepUntil(std::int64_t wall_ms) {
  const auto now = Cluster::NowMs();
  if (wall_ms > now) std::this_thread::sleep_for(std::chrono::milliseconds(wall_ms - now));
}

// A cron expression firing exactly once, at the whole UTC second `at_ms`.
std::string Once(std::int64_t at_ms) {
  const date::sys_seconds t{std::chrono::seconds(at_ms / 1000)};
  const auto day = date::floor<date::days>(t);
  const date::year_month_day ymd{day};
  const date::hh_mm_ss hms{t - day};
  return fmt::format("{} {} {} {} {} ? {}", hms.seconds().count(), hms.minutes().count(), hms.hours().count(),
                     static_cast<unsigned>(ymd.day()), static_cast<unsigned>(ymd.month()),
                     static_cast<int>(ymd.year()));
}

std::int64_t NextWholeSecond(std::int64_t after_ms) {
  return (after_ms / 1000 + 1) * 1000;
}

// Receives alarm webhooks.
class WebhookReceiver {
 public:
  WebhookReceiver() {
    server_.Post("/alarm", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      bodies_.push_back(json::parse(req.body));
      res.set_content("{}", "application/json");
    });
    loopback_ = std::make_unique<cwtest::LoopbackServer>(server_);
  }
  int port() const { return loopback_->port(); }
  std::vector<json> bodies() {
    std::lock_guard lock(mu_);
    return bodies_;
  }

 private:
  httplib::Server server_;
  std::mutex mu_;
  std::vector<json> bodies_;
  std::unique_ptr<cwtest::LoopbackServer> loopback_;  // last: stops the server first
};

class DispatchE2E : public ::testing::Test {
 protected:
  std::map<std::string, int> AddressCounts(Cluster& c, int job) {
    std::map<std::string, int> out;
    for (const auto& r :
         c.Exec(fmt::format("SELECT executor_address, count(*) FROM job_log WHERE job_id = {} AND"
                            " status = 'SUCCESS' GROUP BY 1",
                            job))) {
      out[r[0].as<std::string>()] = r[1].as<int>();
    }
    return out;
  }
  bool AwaitCount(Cluster& c, const std::string& sql, std::int64_t want,
                  std::chrono::milliseconds timeout = 30s) {
    return cwtest::Eventually([&] { return c.Scalar(sql) >= want; }, timeout, 200ms);
  }
  // A job that only its workflow fires (schedule NONE), with `handler`, `param` and ROUND routing.
  static int AddNodeJob(Cluster& c, int group, const std::string& handler, const std::string& param = "") {
    return static_cast<int>(c.Scalar(fmt::format(
        "INSERT INTO job (group_id, description, handler, param, route_strategy, schedule_type, "
        "glue_updated_ms,"
        " created_ms, updated_ms) VALUES ({}, 'node', '{}', '{}', 'ROUND', 'NONE', 1, 1, 1) RETURNING id",
        group, handler, param)));
  }
  // A workflow scheduled once, at the whole second `at_ms`, over `nodes` and `edges` (their JSON), saved by
  // the admin user (its scheduled runs fire for whoever saved it last: admin/model/workflow_access.hpp).
  static int AddWorkflowOnce(Cluster& c, int group, const json& nodes, const json& edges,
                             std::int64_t at_ms) {
    return static_cast<int>(c.Scalar(fmt::format(
        "INSERT INTO workflow (group_id, name, nodes, edges, schedule_type, schedule_conf, enabled, "
        "next_fire_ms, created_ms, updated_ms, run_as_user_id) VALUES ({}, 'wf', '{}', '{}', 'CRON', '{}', "
        "true, {}, 1, 1, (SELECT id FROM app_user WHERE username = 'admin')) RETURNING id",
        group, nodes.dump(), edges.dump(), Once(at_ms), at_ms)));
  }
};

TEST_F(DispatchE2E, RoundSpreadsEvenly) {
  Cluster c({.admins = 1, .executors = 3});
  const int g = c.AddGroup();
  const auto start = NextWholeSecond(Cluster::NowMs() + 1000);
  const int job = c.AddJob(g, "* * * * * ?", "ROUND", "DO_NOTHING", "noopJobHandler", start - 1);
  SleepUntil(start + 11'500);
  c.Exec(fmt::format("UPDATE job SET enabled = false, updated_ms = 2 WHERE id = {}", job));
  ASSERT_TRUE(AwaitCount(c,
                         fmt::format("SELECT count(*) FROM job_log WHERE job_id = {} AND status = 'SUCCESS'"
                                     " AND scheduled_ms < {}",
                                     job, start + 12'000),
                         12));
  // The first 12 fires: ROUND walks the three addresses, so each gets exactly 4.
  std::map<std::string, int> counts;
  for (const auto& r :
       c.Exec(fmt::format("SELECT executor_address FROM job_log WHERE job_id = {} AND scheduled_ms < {}"
                          " ORDER BY scheduled_ms",
                          job, start + 12'000))) {
    ++counts[r[0].as<std::string>()];
  }
  std::printf("[ROUND] 12 fires over 3 executors:");
  for (const auto& [a, n] : counts)
    std::printf(" %s=%d", a.c_str(), n);
  std::printf("\n");
  ASSERT_EQ(counts.size(), 3u);
  for (const auto& [a, n] : counts)
    EXPECT_EQ(n, 4) << a;
}

TEST_F(DispatchE2E, FailoverRoutesAroundAKilledExecutorOnTheNextTrigger) {
  Cluster c({.admins = 1, .executors = 3});
  const int g = c.AddGroup();
  const auto start = NextWholeSecond(Cluster::NowMs() + 1000);
  const int job = c.AddJob(g, "* * * * * ?", "FAILOVER", "DO_NOTHING", "noopJobHandler", start - 1);
  ASSERT_TRUE(AwaitCount(
      c, fmt::format("SELECT count(*) FROM job_log WHERE job_id = {} AND status = 'SUCCESS'", job), 3));
  // FAILOVER sends to the first address (sorted) whose /beat answers.
  const auto first =
      c.Exec(fmt::format("SELECT executor_address FROM job_log WHERE job_id = {} AND status = 'SUCCESS'"
                         " ORDER BY scheduled_ms LIMIT 1",
                         job))[0][0]
          .as<std::string>();
  int victim = -1;
  for (int i = 0; i < 3; ++i) {
    if (c.executor_address(i) == first) victim = i;
  }
  ASSERT_GE(victim, 0);
  c.executor(victim).Kill();
  const auto killed_at = Cluster::NowMs();
  const auto next = NextWholeSecond(killed_at);
  // The next trigger after the kill already goes elsewhere (the dead executor is still registered).
  ASSERT_TRUE(AwaitCount(c,
                         fmt::format("SELECT count(*) FROM job_log WHERE job_id = {} AND scheduled_ms >= {}"
                                     " AND status IN ('SUCCESS', 'FAILED')",
                                     job, next),
                         3));
  c.Exec(fmt::format("UPDATE job SET enabled = false, updated_ms = 2 WHERE id = {}", job));
  int after = 0;
  for (const auto& r :
       c.Exec(fmt::format("SELECT executor_address, status, trigger_msg FROM job_log WHERE job_id = {}"
                          " AND scheduled_ms >= {} AND status IN ('SUCCESS', 'FAILED')",
                          job, next))) {
    ++after;
    EXPECT_NE(r[0].as<std::string>(), first);
    EXPECT_EQ(r[1].as<std::string>(), "SUCCESS") << r[2].as<std::string>();
  }
  std::printf("[FAILOVER] killed %s; %d fire(s) after the kill all succeeded elsewhere\n", first.c_str(),
              after);
  EXPECT_GE(after, 3);
}

// ... and its child job runs once, after all three shards (the callback of the last one writes it).
TEST_F(DispatchE2E, ShardingBroadcastReachesAllThreeWithIndexesZeroToTwo) {
  Cluster c({.admins = 1, .executors = 3});
  const int g = c.AddGroup();
  const auto at = NextWholeSecond(Cluster::NowMs() + 6000);
  const int child = c.AddJob(g, "0 0 0 1 1 ? 2099");
  const int job = c.AddJob(g, Once(at), "SHARDING_BROADCAST", "DO_NOTHING", "shardingJobHandler", at - 1000,
                           fmt::format("child_job_ids = '{{{}}}'", child));
  ASSERT_TRUE(AwaitCount(
      c, fmt::format("SELECT count(*) FROM job_log WHERE job_id = {} AND status = 'SUCCESS'", job), 3));
  EXPECT_EQ(c.Scalar(fmt::format("SELECT count(*) FROM job_log WHERE job_id = {}", child)), 1)
      << "one child fire, written with the last shard's result";
  ASSERT_TRUE(AwaitCount(
      c, fmt::format("SELECT count(*) FROM job_log WHERE job_id = {} AND status = 'SUCCESS'", child), 1));
  std::set<int> indexes;
  std::set<std::string> addresses;
  for (const auto& r :
       c.Exec(fmt::format("SELECT shard_index, shard_total, executor_address, scheduled_ms FROM job_log"
                          " WHERE job_id = {}",
                          job))) {
    indexes.insert(r[0].as<int>());
    EXPECT_EQ(r[1].as<int>(), 3);
    addresses.insert(r[2].as<std::string>());
    EXPECT_EQ(r[3].as<std::int64_t>(), at);
  }
  std::printf("[SHARDING_BROADCAST] 1 fire -> %zu rows, shard indexes %zu distinct, executors %zu distinct\n",
              indexes.size(), indexes.size(), addresses.size());
  EXPECT_EQ(indexes, (std::set<int>{0, 1, 2}));
  EXPECT_EQ(addresses.size(), 3u);
}

// Data passing: cronwheel's executor returns demoJobHandler's output ({"param", "slept_ms"}) with its
// callback; the child job's parameter names the parent's param in it, and the executor running the child
// receives the value: the child's handler sleeps the parent's 0.3 s.
TEST_F(DispatchE2E, AChildJobReceivesItsParentsOutputInItsParameter) {
  Cluster c({.admins = 1, .executors = 1});
  const int g = c.AddGroup();
  const auto at = NextWholeSecond(Cluster::NowMs() + 6000);
  const int child = c.AddJob(g, "0 0 0 1 1 ? 2099", "FIRST", "DO_NOTHING", "demoJobHandler", 0,
                             "param = '{{parent.output.param}}'");
  const int parent = c.AddJob(g, Once(at), "FIRST", "DO_NOTHING", "demoJobHandler", at - 1000,
                              fmt::format("param = '0.3', child_job_ids = '{{{}}}'", child));
  ASSERT_TRUE(AwaitCount(
      c, fmt::format("SELECT count(*) FROM job_log WHERE job_id = {} AND status = 'SUCCESS'", child), 1));
  const auto row = c.Exec(fmt::format(
      "SELECT l.executor_param, l.handle_msg, p.output::text FROM job_log l JOIN job_log p ON p.id = "
      "l.parent_log_id WHERE l.job_id = {} AND p.job_id = {}",
      child, parent));
  ASSERT_EQ(row.size(), 1u);
  std::printf("[data passing] parent output %s -> child param '%s', child result '%s'\n", row[0][2].c_str(),
              row[0][0].c_str(), row[0][1].c_str());
  EXPECT_EQ(nlohmann::json::parse(row[0][2].as<std::string>()),
            (nlohmann::json{{"param", "0.3"}, {"slept_ms", 300}}));
  EXPECT_EQ(row[0][0].as<std::string>(), "0.3");
  EXPECT_EQ(row[0][1].as<std::string>(), "slept 300 ms")
      << "the executor ran the child with the parent's value";
}

TEST_F(DispatchE2E, AFailingJobIsRetriedWithBackoffThenAlarmedToAWebhook) {
  WebhookReceiver receiver;
  const auto allow = fmt::format("http://127.0.0.1:{}/", receiver.port());
  Cluster c({.admins = 1, .executors = 3, .admin_args = {"--alarm-webhook-allow", allow}});
  const int g = c.AddGroup();
  const auto at = NextWholeSecond(Cluster::NowMs() + 6000);
  // A handler no executor has: every attempt fails at the trigger ("job handler [...] not found.").
  const int job =
      c.AddJob(g, Once(at), "FIRST", "DO_NOTHING", "noSuchHandler", at - 1000,
               fmt::format("retry_count = 2, retry_backoff_s = 1, alarm_webhook = '{}alarm'", allow));
  ASSERT_TRUE(cwtest::Eventually([&] { return !receiver.bodies().empty(); }, 40s, 200ms))
      << "no alarm arrived";
  const auto rows =
      c.Exec(fmt::format("SELECT id, trigger_type, retry_count, trigger_ms, parent_log_id, alarm_status"
                         " FROM job_log WHERE job_id = {} ORDER BY id",
                         job));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0][1].as<std::string>(), "CRON");
  EXPECT_EQ(rows[1][1].as<std::string>(), "RETRY");
  EXPECT_EQ(rows[2][1].as<std::string>(), "RETRY");
  EXPECT_EQ(rows[1][4].as<std::int64_t>(), rows[0][0].as<std::int64_t>());
  EXPECT_EQ(rows[2][4].as<std::int64_t>(), rows[1][0].as<std::int64_t>());
  EXPECT_EQ(rows[2][2].as<int>(), 0);
  const auto gap1 = rows[1][3].as<std::int64_t>() - rows[0][3].as<std::int64_t>();
  const auto gap2 = rows[2][3].as<std::int64_t>() - rows[1][3].as<std::int64_t>();
  std::printf(
      "[RETRY] 1 fire + 2 retries, gaps %lld ms and %lld ms (back-off 1 s, 2 s); %zu webhook alarm(s)\n",
      static_cast<long long>(gap1), static_cast<long long>(gap2), receiver.bodies().size());
  EXPECT_GE(gap1, 1000);
  EXPECT_GE(gap2, 2000);
  EXPECT_GT(gap2, gap1);
  std::this_thread::sleep_for(2s);  // no further alarm may come
  const auto bodies = receiver.bodies();
  ASSERT_EQ(bodies.size(), 1u) << "only the final failure is alarmed";
  EXPECT_EQ(bodies[0].at("log_id"), rows[2][0].as<std::int64_t>());
  EXPECT_EQ(bodies[0].at("job_id"), job);
  EXPECT_EQ(
      c.Scalar(fmt::format("SELECT alarm_status FROM job_log WHERE id = {}", rows[2][0].as<std::int64_t>())),
      2);
}

TEST_F(DispatchE2E, AChildJobFiresAfterItsParentSucceeds) {
  Cluster c({.admins = 1, .executors = 3});
  const int g = c.AddGroup();
  const int child = static_cast<int>(
      c.Scalar(fmt::format("INSERT INTO job (group_id, description, handler, schedule_type, glue_updated_ms, "
                           "created_ms, updated_ms)"
                           " VALUES ({}, 'child', 'noopJobHandler', 'NONE', 1, 1, 1) RETURNING id",
                           g)));
  const auto at = NextWholeSecond(Cluster::NowMs() + 6000);
  const int parent = c.AddJob(g, Once(at), "FIRST", "DO_NOTHING", "noopJobHandler", at - 1000,
                              fmt::format("child_job_ids = '{{{}}}'", child));
  // The trigger result is written in batches (every 20 ms) and the executor's callback may be recorded first:
  // wait for both.
  ASSERT_TRUE(AwaitCount(
      c,
      fmt::format("SELECT count(*) FROM job_log WHERE job_id = {} AND status = 'SUCCESS' AND trigger_ms > 0",
                  child),
      1));
  const auto row =
      c.Exec(fmt::format("SELECT l.trigger_type, p.job_id, l.trigger_ms - p.handle_ms FROM job_log l JOIN"
                         " job_log p ON p.id = l.parent_log_id WHERE l.job_id = {}",
                         child));
  ASSERT_EQ(row.size(), 1u);
  EXPECT_EQ(row[0][0].as<std::string>(), "PARENT");
  EXPECT_EQ(row[0][1].as<int>(), parent);
  std::printf("[CHILD] child fired %lld ms after the parent's result arrived\n",
              static_cast<long long>(row[0][2].as<std::int64_t>()));
  EXPECT_GE(row[0][2].as<std::int64_t>(), 0);
}

// A diamond workflow (a -> b, a -> c, b -> d, c -> d) on its schedule, over three executors: each node runs
// once, d only after both b and c have ended, and d's parameter holds b's output (demoJobHandler returns its
// param): the executor running d sleeps b's 0.2 s.
TEST_F(DispatchE2E, ADiamondWorkflowRunsEachNodeOnceAfterAllItsParentsWithAParentsOutput) {
  Cluster c({.admins = 1, .executors = 3});
  const int g = c.AddGroup();
  const int a = AddNodeJob(c, g, "noopJobHandler");
  const int b = AddNodeJob(c, g, "demoJobHandler", "0.2");
  const int cc = AddNodeJob(c, g, "demoJobHandler", "0.1");
  const int d = AddNodeJob(c, g, "demoJobHandler");
  const json nodes = {{{"key", "a"}, {"job_id", a}},
                      {{"key", "b"}, {"job_id", b}},
                      {{"key", "c"}, {"job_id", cc}},
                      {{"key", "d"}, {"job_id", d}, {"param", "{{parents.b.output.param}}"}}};
  const json edges = {{{"from", "a"}, {"to", "b"}},
                      {{"from", "a"}, {"to", "c"}},
                      {{"from", "b"}, {"to", "d"}},
                      {{"from", "c"}, {"to", "d"}, {"condition", "SUCCESS"}}};
  const auto at = NextWholeSecond(Cluster::NowMs() + 6000);
  const int wf = AddWorkflowOnce(c, g, nodes, edges, at);
  ASSERT_TRUE(AwaitCount(
      c, fmt::format("SELECT count(*) FROM workflow_run WHERE workflow_id = {} AND state = 'SUCCESS'", wf),
      1));
  EXPECT_EQ(c.Scalar(fmt::format("SELECT count(*) FROM workflow_run WHERE workflow_id = {}", wf)), 1);
  const auto run = c.Scalar(fmt::format("SELECT id FROM workflow_run WHERE workflow_id = {}", wf));
  // Each node one fire, each fire run once by an executor.
  const auto fires = c.Exec(fmt::format(
      "SELECT workflow_node, id, status, trigger_ms, handle_ms, executor_param, handle_msg FROM job_log"
      " WHERE workflow_run_id = {} ORDER BY workflow_node",
      run));
  ASSERT_EQ(fires.size(), 4u);
  std::map<std::string, pqxx::row> by_node;
  for (const auto& f : fires) {
    EXPECT_EQ(f[2].as<std::string>(), "SUCCESS") << f[0].as<std::string>();
    by_node.emplace(f[0].as<std::string>(), f);
  }
  const auto executed = c.ExecutedLogIds();
  for (const auto& [key, f] : by_node)
    EXPECT_EQ(executed.count(f[1].as<std::int64_t>()), 1u) << "node " << key << " ran once";
  // d was sent after both its parents' results.
  const auto d_sent = by_node.at("d")[3].as<std::int64_t>();
  EXPECT_GE(d_sent, by_node.at("b")[4].as<std::int64_t>());
  EXPECT_GE(d_sent, by_node.at("c")[4].as<std::int64_t>());
  EXPECT_EQ(by_node.at("d")[5].as<std::string>(), "0.2");
  EXPECT_EQ(by_node.at("d")[6].as<std::string>(), "slept 200 ms");
  std::printf("[workflow] diamond: d sent %lld ms after its last parent's result; run took %lld ms\n",
              static_cast<long long>(d_sent - std::max(by_node.at("b")[4].as<std::int64_t>(),
                                                       by_node.at("c")[4].as<std::int64_t>())),
              static_cast<long long>(
                  c.Scalar(fmt::format("SELECT end_ms - start_ms FROM workflow_run WHERE id = {}", run))));
}

// A 100-node workflow of noop handlers, fan-out 10 and fan-in 10 (root, then nine layers of ten nodes
// each followed by a join): every node runs exactly once, and the run's edges' latency (a parent's result
// to its child's /run answered) and overhead over the critical path are printed.
TEST_F(DispatchE2E, AHundredNodeWorkflowRunsEachNodeExactlyOnce) {
  Cluster c({.admins = 1, .executors = 3});
  const int g = c.AddGroup();
  const int job = AddNodeJob(c, g, "noopJobHandler");
  json nodes = {{{"key", "root"}, {"job_id", job}}};
  json edges = json::array();
  std::string join = "root";
  for (int layer = 0; layer < 9; ++layer) {
    const auto next = fmt::format("join{}", layer);
    for (int i = 0; i < 10; ++i) {
      const auto key = fmt::format("n{}_{}", layer, i);
      nodes.push_back({{"key", key}, {"job_id", job}});
      edges.push_back({{"from", join}, {"to", key}});
      edges.push_back({{"from", key}, {"to", next}});
    }
    nodes.push_back({{"key", next}, {"job_id", job}});
    join = next;
  }
  ASSERT_EQ(nodes.size(), 100u);
  const auto at = NextWholeSecond(Cluster::NowMs() + 6000);
  const int wf = AddWorkflowOnce(c, g, nodes, edges, at);
  ASSERT_TRUE(AwaitCount(
      c, fmt::format("SELECT count(*) FROM workflow_run WHERE workflow_id = {} AND state <> 'RUNNING'", wf),
      1, 90s));
  const auto run = c.Scalar(fmt::format("SELECT id FROM workflow_run WHERE workflow_id = {}", wf));
  EXPECT_EQ(c.Exec(fmt::format("SELECT state FROM workflow_run WHERE id = {}", run))[0][0].as<std::string>(),
            "SUCCESS");
  EXPECT_EQ(c.Scalar(fmt::format("SELECT count(*) FROM job_log WHERE workflow_run_id = {}", run)), 100);
  EXPECT_EQ(c.Scalar(fmt::format("SELECT count(DISTINCT workflow_node) FROM job_log WHERE workflow_run_id = "
                                 "{} AND status = 'SUCCESS'",
                                 run)),
            100);
  const auto executed = c.ExecutedLogIds();
  std::size_t ran_once = 0;
  for (const auto& r : c.Exec(fmt::format("SELECT id FROM job_log WHERE workflow_run_id = {}", run)))
    ran_once += executed.count(r[0].as<std::int64_t>()) == 1 ? 1 : 0;
  EXPECT_EQ(ran_once, 100u);
  // Each edge: the child's /run answered minus its parent's result (the last parent's, for a join).
  std::vector<std::int64_t> lag;
  for (const auto& r : c.Exec(fmt::format(R"sql(
         SELECT ch.trigger_ms - max(p.handle_ms)
           FROM job_log ch
           JOIN workflow_run r ON r.id = ch.workflow_run_id
           CROSS JOIN LATERAL jsonb_array_elements(r.graph->'edges') e
           JOIN job_log p ON p.workflow_run_id = r.id AND p.workflow_node = e->>'from'
          WHERE r.id = {} AND e->>'to' = ch.workflow_node
          GROUP BY ch.id, ch.trigger_ms)sql",
                                          run)))
    lag.push_back(r[0].as<std::int64_t>());
  ASSERT_EQ(lag.size(), 99u);
  std::sort(lag.begin(), lag.end());
  // The critical path is root and 9 x (a layer node, a join): 19 nodes in sequence, whose noop handlers take
  // about nothing, so the run's duration is its overhead over that path.
  const auto took = c.Scalar(fmt::format("SELECT end_ms - start_ms FROM workflow_run WHERE id = {}", run));
  std::printf(
      "[workflow] 100 nodes: parent result -> child /run p50 %lld ms, p99 %lld ms, max %lld ms; run %lld ms "
      "over a critical path of 19 noop nodes (%lld ms a step)\n",
      static_cast<long long>(lag[lag.size() / 2]), static_cast<long long>(lag[lag.size() * 99 / 100]),
      static_cast<long long>(lag.back()), static_cast<long long>(took), static_cast<long long>(took / 19));
}

// A broadcast node fans in: a -> b -> c, where b's job is SHARDING_BROADCAST over three executors
// (demoJobHandler: each shard returns {"param", "slept_ms"}) and c's parameter is {{parents.b.output}}.
// b makes three shard fires, each run once by a different executor; c fires once, written by the callback
// that completes the broadcast, and the executor receives the array of the three shards' outputs (in
// shard order).
TEST_F(DispatchE2E, ABroadcastNodeOverThreeExecutorsFansInToOneChildWithTheArrayOfItsShardsOutputs) {
  Cluster c({.admins = 1, .executors = 3});
  for (int i = 0; i < 3; ++i)
    c.AwaitRegistered(i);
  const int g = c.AddGroup();
  const int a = AddNodeJob(c, g, "noopJobHandler");
  const int b = AddNodeJob(c, g, "demoJobHandler", "0.2");
  c.Exec(fmt::format("UPDATE job SET route_strategy = 'SHARDING_BROADCAST' WHERE id = {}", b));
  const int cc = AddNodeJob(c, g, "demoJobHandler");
  const json nodes = {{{"key", "a"}, {"job_id", a}},
                      {{"key", "b"}, {"job_id", b}},
                      {{"key", "c"}, {"job_id", cc}, {"param", "{{parents.b.output}}"}}};
  const json edges = {{{"from", "a"}, {"to", "b"}}, {{"from", "b"}, {"to", "c"}}};
  const auto at = NextWholeSecond(Cluster::NowMs() + 6000);
  const int wf = AddWorkflowOnce(c, g, nodes, edges, at);
  ASSERT_TRUE(AwaitCount(
      c, fmt::format("SELECT count(*) FROM workflow_run WHERE workflow_id = {} AND state <> 'RUNNING'", wf),
      1))
      << "the run did not end";
  ASSERT_EQ(c.Scalar(fmt::format("SELECT count(*) FROM workflow_run WHERE workflow_id = {}", wf)), 1);
  const auto run = c.Scalar(fmt::format("SELECT id FROM workflow_run WHERE workflow_id = {}", wf));
  const auto state = c.Exec(fmt::format("SELECT state, note FROM workflow_run WHERE id = {}", run));
  EXPECT_EQ(state[0][0].as<std::string>(), "SUCCESS") << state[0][1].c_str();

  const auto fires = c.Exec(fmt::format(
      "SELECT workflow_node, id, status, shard_index, shard_total, executor_address, created_ms, handle_ms,"
      " executor_param, broadcast_log_id FROM job_log WHERE workflow_run_id = {} ORDER BY workflow_node,"
      " shard_index",
      run));
  std::map<std::string, std::vector<pqxx::row>> by_node;
  for (const auto& f : fires)
    by_node[f[0].as<std::string>()].push_back(f);
  ASSERT_EQ(by_node["a"].size(), 1u);
  ASSERT_EQ(by_node["b"].size(), 3u) << "b: one fire per executor";
  ASSERT_EQ(by_node["c"].size(), 1u) << "c: one fire, after all of b's shards";
  const auto executed = c.ExecutedLogIds();
  std::set<int> indexes;
  std::set<std::string> addresses;
  std::set<std::int64_t> broadcast_ids;
  std::int64_t last_shard_result = 0;
  for (const auto& f : fires) {
    const auto id = f[1].as<std::int64_t>();
    EXPECT_EQ(f[2].as<std::string>(), "SUCCESS") << "node " << f[0].c_str() << " fire " << id;
    const auto ran = executed.find(id);
    EXPECT_EQ(ran == executed.end() ? 0 : ran->second, 1)
        << "node " << f[0].c_str() << " fire " << id << " ran once";
  }
  for (const auto& f : by_node["b"]) {
    indexes.insert(f[3].as<int>());
    EXPECT_EQ(f[4].as<int>(), 3);
    addresses.insert(f[5].as<std::string>());
    broadcast_ids.insert(f[9].as<std::int64_t>());
    last_shard_result = std::max(last_shard_result, f[7].as<std::int64_t>());
  }
  EXPECT_EQ(indexes, (std::set<int>{0, 1, 2}));
  EXPECT_EQ(addresses.size(), 3u) << "each shard on a different executor";
  EXPECT_EQ(broadcast_ids.size(), 1u) << "the three shards are one broadcast";
  // On each executor exactly one of the run's b fires.
  for (int e = 0; e < 3; ++e) {
    const auto mine = c.ExecutedLogIds(e);
    int shards = 0;
    for (const auto& f : by_node["b"])
      shards += mine.count(f[1].as<std::int64_t>()) != 0 ? 1 : 0;
    EXPECT_EQ(shards, 1) << "executor " << e + 1;
  }
  // c was written by the transaction of one shard's callback: its instant is that callback's. (Which shard's
  // is whichever committed last; the callbacks read their clocks before their transactions, so that one's
  // instant need not be the latest.) That every shard's result was recorded before c was written shows in
  // c's parameter below: it holds all three outputs.
  const auto& child = by_node["c"][0];
  const auto c_written = child[6].as<std::int64_t>();
  std::set<std::int64_t> shard_results;
  for (const auto& f : by_node["b"])
    shard_results.insert(f[7].as<std::int64_t>());
  EXPECT_TRUE(shard_results.contains(c_written)) << "c written at " << c_written;
  const auto param = json::parse(child[8].as<std::string>(), nullptr, false);
  const json one = {{"param", "0.2"}, {"slept_ms", 200}};
  EXPECT_EQ(param, json::array({one, one, one})) << child[8].c_str();
  const auto nodes_state = c.Exec(fmt::format(
      "SELECT key, state, cardinality(log_ids) FROM workflow_run_node WHERE run_id = {} ORDER BY key", run));
  std::string summary;
  for (const auto& n : nodes_state) {
    summary += fmt::format(" {}={} ({} fire id(s))", n[0].c_str(), n[1].c_str(), n[2].c_str());
    EXPECT_EQ(n[1].as<std::string>(), "SUCCESS") << "node " << n[0].c_str();
  }
  std::printf(
      "[workflow] broadcast b: %zu shard fires on %zu executors (indexes %zu distinct); c fires %zu, "
      "written %lld ms after the latest shard result; c's parameter '%s'; nodes:%s; run %s in %lld ms\n",
      by_node["b"].size(), addresses.size(), indexes.size(), by_node["c"].size(),
      static_cast<long long>(c_written - last_shard_result), child[8].c_str(), summary.c_str(),
      state[0][0].c_str(),
      static_cast<long long>(
          c.Scalar(fmt::format("SELECT end_ms - start_ms FROM workflow_run WHERE id = {}", run))));
}

}  // namespace
