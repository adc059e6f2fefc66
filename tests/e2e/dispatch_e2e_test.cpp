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

}  // namespace
