// End-to-end against xxl-stub (tests/support/xxl_stub), the project's own stand-in for the small
// XXL-JOB-protocol executors users run (the npm `xxl-job` executor, which the project did not write, has a
// test of its own): it behaves like them — cpp-httplib's listen backlog of 5, 8 server threads, a 2 s
// keep-alive timeout, and no log-id de-duplication, so a fire the admin sends twice runs twice. Every
// instant must reach it exactly once and on time, and no trigger may fail because of how the admin opens
// and reuses connections (docs/architecture.md, "Delivery to executors"). Counts are printed.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <thread>

#include "cluster.hpp"
#include "ringwheel/schedule.hpp"
#include "xxl_stub_process.hpp"

namespace {

using namespace std::chrono_literals;
using namespace cwtest;

constexpr const char* kCron = "*/2 * * * * ?";
constexpr const char* kEverySecond = "* * * * * ?";

void SleepUntil(std::int64_t wall_ms) {
  const auto now = Cluster::NowMs();
  if (wall_ms > now) std::this_thread::sleep_for(std::chrono::milliseconds(wall_ms - now));
}

struct Tally {
  int expected = 0;
  int once = 0;
  int missed = 0;
  int twice = 0;  // an instant received more than once (over all stubs)
  int failed_triggers = 0;
  std::vector<std::int64_t> lags_ms;     // received - scheduled, for instants received at least once
  std::vector<std::int64_t> to_send_ms;  // the admin's trigger start (trigger_ms) - scheduled
  std::vector<std::int64_t> on_wire_ms;  // received - trigger start
  static std::int64_t Percentile(std::vector<std::int64_t>& v, double p) {
    if (v.empty()) return -1;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
  }
  std::int64_t Percentile(double p) { return Percentile(lags_ms, p); }
};

// Every instant of `jobs` in [first, last] against the fires in job_log and the /run calls the stubs saw.
Tally Check(Cluster& c, const std::vector<int>& jobs, std::int64_t first, std::int64_t last,
            const std::vector<std::vector<XxlStub::Run>>& traces, const char* cron = kCron) {
  std::map<std::int64_t, std::vector<std::int64_t>> received;  // log id -> receive times
  for (const auto& trace : traces) {
    for (const auto& r : trace) {
      if (r.outcome == "accepted") received[r.log_id].push_back(r.received_ms);
    }
  }
  Tally t;
  const auto schedule = ringwheel::Schedule::Parse("CRON", cron, "UTC").value();
  for (int job : jobs) {
    std::map<std::int64_t, std::int64_t> fire;        // instant -> log id
    std::map<std::int64_t, std::int64_t> trigger_ms;  // log id -> trigger start
    for (const auto& r : c.Exec(fmt::format(
             "SELECT scheduled_ms, id, trigger_code, trigger_ms FROM job_log WHERE job_id = {} AND"
             " trigger_type = 'CRON' AND scheduled_ms BETWEEN {} AND {}",
             job, first, last))) {
      fire[r[0].as<std::int64_t>()] = r[1].as<std::int64_t>();
      trigger_ms[r[1].as<std::int64_t>()] = r[3].as<std::int64_t>();
      if (r[2].as<int>() != 200) ++t.failed_triggers;
    }
    for (auto at = schedule.NextFireMs(first - 1); at && *at <= last; at = schedule.NextFireMs(*at)) {
      ++t.expected;
      const auto f = fire.find(*at);
      const auto got = f == fire.end() ? received.end() : received.find(f->second);
      const auto n = got == received.end() ? 0 : got->second.size();
      if (n == 0) {
        ++t.missed;
        ADD_FAILURE() << "job " << job << " instant " << *at << ": never reached an executor"
                      << (f == fire.end() ? " (no fire written)" : fmt::format(" (fire {})", f->second));
        continue;
      }
      t.lags_ms.push_back(got->second.front() - *at);
      t.to_send_ms.push_back(trigger_ms[f->second] - *at);
      t.on_wire_ms.push_back(got->second.front() - trigger_ms[f->second]);
      if (n == 1) {
        ++t.once;
      } else {
        ++t.twice;
        ADD_FAILURE() << "job " << job << " instant " << *at << ": fire " << f->second << " received " << n
                      << " times";
      }
    }
  }
  return t;
}

void Print(const char* name, Tally& t) {
  std::printf(
      "[%s] instants %d: exactly once %d, missed %d, more than once %d; failed triggers %d; lag p50 %lld ms, "
      "p99 %lld ms, max %lld ms\n",
      name, t.expected, t.once, t.missed, t.twice, t.failed_triggers,
      static_cast<long long>(t.Percentile(0.5)), static_cast<long long>(t.Percentile(0.99)),
      static_cast<long long>(t.Percentile(1.0)));
  std::printf(
      "[%s] where: scheduled -> trigger start p50 %lld ms, p99 %lld ms; trigger start -> received p50 %lld "
      "ms, "
      "p99 %lld ms\n",
      name, static_cast<long long>(Tally::Percentile(t.to_send_ms, 0.5)),
      static_cast<long long>(Tally::Percentile(t.to_send_ms, 0.99)),
      static_cast<long long>(Tally::Percentile(t.on_wire_ms, 0.5)),
      static_cast<long long>(Tally::Percentile(t.on_wire_ms, 0.99)));
}

std::vector<int> AddJobs(Cluster& c, int n, const std::string& route, std::int64_t start_ms,
                         const char* cron = kCron) {
  const int group = c.AddGroup();
  std::vector<int> jobs;
  jobs.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    jobs.push_back(c.AddJob(group, cron, route, "DO_NOTHING", "stubHandler", start_ms));
  return jobs;
}

// An executor that closes each connection after `answers` answers (cpp-httplib's default is 5; an HTTP/1.0
// server, Python's http.server among them, closes after one) needs a new connection every `answers` fires.
// The admin opens them as fast as the executor accepts (ConnectionPolicy): 1,000 jobs every second for 10 s
// each reach it exactly once, and no trigger fails for want of a connection. (Before the policy, a fixed
// pace of 400 connection attempts a second lost most of the fires of the one-answer case.)
void EveryInstantReachesAClosingExecutor(int answers) {
  Cluster c({.admins = 1, .executors = 0});
  XxlStub stub(c, "stub", {.keep_alive_max_count = answers});
  const auto start = Cluster::NowMs() + 5000;
  const auto jobs = AddJobs(c, 1000, "FIRST", start, kEverySecond);
  const auto first = ringwheel::Schedule::Parse("CRON", kEverySecond, "UTC")->NextFireMs(start).value();
  const auto last = first + 10'000;
  SleepUntil(last + 3000);
  c.Exec("UPDATE job SET enabled = false, updated_ms = updated_ms + 1");
  const int connections = stub.StopAndCountConnections();
  auto t = Check(c, jobs, first, last, {stub.Runs()}, kEverySecond);
  const auto name = fmt::format("1000 jobs every second, executor closing after {} answer(s), 10 s", answers);
  Print(name.c_str(), t);
  std::printf("[connections] the executor accepted %d TCP connections for %d fires\n", connections,
              t.expected);
  EXPECT_EQ(t.expected, 1000 * 11);
  EXPECT_EQ(t.once, t.expected);
  EXPECT_EQ(t.failed_triggers, 0);
  // It did close them: far more connections than the 32 a kept pool holds (the stub tells connections
  // apart by the client's port, which the kernel reuses, so this is a lower bound).
  EXPECT_GT(connections, 1000);
}

TEST(XxlStubE2E, ThirtyJobsEveryTwoSecondsReachABacklogFiveExecutorOnceAndOnTime) {
  Cluster c({.admins = 1, .executors = 0});
  XxlStub stub(c, "stub", {});
  const auto start = Cluster::NowMs() + 2000;
  const auto jobs = AddJobs(c, 30, "FIRST", start);
  const auto first = ringwheel::Schedule::Parse("CRON", kCron, "UTC")->NextFireMs(start).value();
  const auto last = first + 30'000;
  SleepUntil(last + 1500);
  c.Exec("UPDATE job SET enabled = false, updated_ms = updated_ms + 1");
  const int connections = stub.StopAndCountConnections();
  auto t = Check(c, jobs, first, last, {stub.Runs()});
  Print("30 jobs every 2 s, 1 admin, backlog-5 executor, 30 s", t);
  std::printf("[connections] the executor accepted %d TCP connections for %d fires\n", connections,
              t.expected);
  EXPECT_EQ(t.expected, 30 * 16);
  EXPECT_EQ(t.once, t.expected);
  EXPECT_EQ(t.failed_triggers, 0);
  // On time: under the 1 s a dropped SYN waits for its first retransmission (a backlog of 5 overflowed by
  // connections opened at once), with room for a loaded machine (116 ms was seen with a compile beside it;
  // the lag itself is a benchmark's figure, bench/fire_lag.sh, not this test's).
  EXPECT_LT(t.Percentile(0.99), 800);
}

TEST(XxlStubE2E, AThousandJobsEverySecondReachAnExecutorClosingEachConnectionAfterOneAnswer) {
  EveryInstantReachesAClosingExecutor(1);
}

TEST(XxlStubE2E, AThousandJobsEverySecondReachAnExecutorClosingEachConnectionAfterFiveAnswers) {
  EveryInstantReachesAClosingExecutor(5);
}

TEST(XxlStubE2E, FailoverAroundAKilledForeignExecutorDeliversEveryInstantOnceToTheLiveOne) {
  Cluster c({.admins = 1, .executors = 0});
  XxlStub a(c, "stub-a", {});
  XxlStub b(c, "stub-b", {});
  const auto start = Cluster::NowMs() + 2000;
  const auto jobs = AddJobs(c, 10, "FAILOVER", start);
  const auto first = ringwheel::Schedule::Parse("CRON", kCron, "UTC")->NextFireMs(start).value();
  const auto kill_at = first + 10'000 + 1000;  // between two instants
  const auto last = first + 24'000;
  SleepUntil(kill_at);
  // FAILOVER sends every fire to the first executor that answers a beat: kill that one.
  const bool a_serves = a.Runs().size() >= b.Runs().size();
  XxlStub& victim = a_serves ? a : b;
  XxlStub& survivor = a_serves ? b : a;
  const auto victim_runs = victim.Runs();  // what it received before the kill (flushed every 100 ms)
  victim.process().Kill();                 // SIGKILL; it stays in the registry, as a crashed executor does
  SleepUntil(last + 1500);
  c.Exec("UPDATE job SET enabled = false, updated_ms = updated_ms + 1");
  survivor.StopAndCountConnections();
  const auto survivor_runs = survivor.Runs();
  auto t = Check(c, jobs, first, last, {victim_runs, survivor_runs});
  Print("10 FAILOVER jobs every 2 s over two backlog-5 executors, one killed", t);
  int after_kill_on_survivor = 0;
  for (const auto& r : survivor_runs) {
    if (r.received_ms > kill_at) ++after_kill_on_survivor;
  }
  std::printf("[failover] before the kill: %zu on the executor then killed; after it: %d on the live one\n",
              victim_runs.size(), after_kill_on_survivor);
  EXPECT_GE(victim_runs.size(), 10u * 5);  // it served the instants before the kill
  EXPECT_EQ(t.expected, 10 * 13);
  EXPECT_EQ(t.once, t.expected);
  EXPECT_EQ(t.failed_triggers, 0);
  EXPECT_EQ(after_kill_on_survivor, 10 * 7);  // the 7 instants after the kill, all on the live executor
}

}  // namespace
