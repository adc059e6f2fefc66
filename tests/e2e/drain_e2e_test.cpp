// Draining an executor (issue 25, item 5; docs/operations.md "Draining an executor"), with real processes:
//  * SIGTERM to an executor running a 20 s fire: it tells the admin it is gone, refuses every new fire
//    (which the admin sends to the other executor at once), lets the running fire finish, calls it back and
//    exits 0. Meanwhile an every-second job loses no instant and runs each once, none of them on the
//    draining executor after the signal. The group's addresses are configured (MANUAL), so the registry
//    never drops the draining executor: the admin meets its refusals and routes around it;
//  * a second signal stops a draining executor at once: the running fire is reported "executor is
//    stopping." and the executor's /metrics said it was draining;
//  * an administrator drains an executor through the admin (POST /api/v1/groups/{id}/drain): the executor
//    leaves the registry, lets its running fire finish and call back, and exits 0; an address that is not
//    one of the group's online executors is refused naming it, and nothing is sent to it.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <map>
#include <string>

#include "cluster.hpp"
#include "http_client.hpp"

namespace {

using namespace cwtest::e2e;
using cwtest::Cluster;
using cwtest::Eventually;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

// A cron expression for the one second `at_ms` (UTC, with its year): the job fires once.
std::string OnceAt(std::int64_t at_ms) {
  const auto t = static_cast<std::time_t>(at_ms / 1000);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  return fmt::format("{} {} {} {} {} ? {}", tm.tm_sec, tm.tm_min, tm.tm_hour, tm.tm_mday, tm.tm_mon + 1,
                     tm.tm_year + 1900);
}

// Adds a job running demoJobHandler for `seconds`, fired once about 3 s from now, and waits until an
// executor accepted that fire. Returns {job id, log id}.
std::pair<int, std::int64_t> StartLongFire(Cluster& c, int group, int seconds) {
  const auto at = (Cluster::NowMs() / 1000 + 3) * 1000;
  const int job = c.AddJob(group, OnceAt(at), "FIRST", "DO_NOTHING", "demoJobHandler", at - 1000,
                           fmt::format("param = '{}'", seconds));
  std::int64_t log = 0;
  EXPECT_TRUE(Eventually(
      [&] {
        log = c.Scalar(fmt::format(
            "SELECT coalesce(max(id), 0) FROM job_log WHERE job_id = {} AND trigger_code = 200", job));
        return log > 0;
      },
      30s, 100ms))
      << c.admin(0).LogTail();
  return {job, log};
}

int ExecutorOf(Cluster& c, std::int64_t log) {
  const auto address =
      c.Exec(fmt::format("SELECT executor_address FROM job_log WHERE id = {}", log))[0][0].as<std::string>();
  return address == c.executor_address(0) ? 0 : 1;
}

TEST(DrainE2E, ADrainingExecutorFinishesItsTwentySecondFireWhileEveryInstantRunsOnceElsewhere) {
  Cluster c({.admins = 1, .executors = 2});
  const int group = c.AddGroup();
  c.Exec(
      fmt::format("UPDATE job_group SET address_type = 'MANUAL', addresses = ARRAY['{}', '{}'] WHERE id = {}",
                  c.executor_address(0), c.executor_address(1), group));
  c.AwaitRegistered(0);
  c.AwaitRegistered(1);
  const auto [long_job, long_log] = StartLongFire(c, group, 20);
  ASSERT_GT(long_log, 0);
  const int draining = ExecutorOf(c, long_log);
  const std::string drained_address = c.executor_address(draining);
  // An every-second job on both executors (ROUND), from before the signal to after the exit.
  const auto every_from = (Cluster::NowMs() / 1000 + 1) * 1000;
  const int every_job =
      c.AddJob(group, "* * * * * ?", "ROUND", "DO_NOTHING", "noopJobHandler", every_from - 1);
  ASSERT_TRUE(Eventually(
      [&] {
        return c.Scalar(fmt::format("SELECT count(*) FROM job_log WHERE job_id = {} AND handle_code = 200",
                                    every_job)) >= 3;
      },
      30s, 100ms));

  const auto signalled_ms = Cluster::NowMs();
  c.executor(draining).Signal(SIGTERM);
  const auto exit_code = c.executor(draining).Wait(60s);
  const auto exited_ms = Cluster::NowMs();
  ASSERT_TRUE(exit_code.has_value()) << "still running 60 s after SIGTERM: "
                                     << c.executor(draining).LogTail();
  EXPECT_EQ(*exit_code, 0) << c.executor(draining).LogTail();
  EXPECT_THAT(c.executor(draining).Output(), HasSubstr("drained: every fire finished"));

  // The long fire ran to its end and was called back before the executor exited.
  const auto long_row = c.Exec(fmt::format(
      "SELECT handle_code, start_ms, handle_ms, executor_address FROM job_log WHERE id = {}", long_log));
  EXPECT_EQ(long_row[0][0].as<int>(), 200);
  EXPECT_GE(long_row[0][2].as<std::int64_t>() - long_row[0][1].as<std::int64_t>(), 19'000);
  EXPECT_LE(long_row[0][2].as<std::int64_t>(), exited_ms);
  EXPECT_GT(exited_ms - signalled_ms, 10'000) << "it waited for the fire";
  EXPECT_EQ(c.Scalar(fmt::format("SELECT count(*) FROM job_log WHERE job_id = {}", long_job)), 1);

  // Two more instants on the other executor alone, then the every-second job stops.
  ASSERT_TRUE(Eventually(
      [&] {
        return c.Scalar(
                   fmt::format("SELECT count(*) FROM job_log WHERE job_id = {} AND handle_code = 200 AND "
                               "scheduled_ms > {}",
                               every_job, exited_ms)) >= 2;
      },
      30s, 100ms));
  const auto until_ms = Cluster::NowMs() / 1000 * 1000;
  c.Exec(fmt::format("UPDATE job SET enabled = false WHERE id = {}", every_job));
  ASSERT_TRUE(Eventually(
      [&] {
        return c.Scalar(fmt::format("SELECT count(*) FROM job_log WHERE job_id = {} AND handle_code = 0",
                                    every_job)) == 0;
      },
      30s, 200ms));

  // Every instant from the first to the last whole second before the stop: one row, SUCCESS, run once.
  const auto executed = c.ExecutedLogIds();
  int instants = 0;
  int refused_by_the_draining = 0;
  for (const auto& row : c.Exec(fmt::format(
           "SELECT scheduled_ms, count(*), count(*) FILTER (WHERE handle_code = 200), max(id), "
           "bool_or(trigger_msg LIKE '%draining%') FROM job_log WHERE job_id = {} AND scheduled_ms < {} "
           "GROUP BY scheduled_ms ORDER BY scheduled_ms",
           every_job, until_ms))) {
    const auto instant = row[0].as<std::int64_t>();
    EXPECT_EQ(row[1].as<int>(), 1) << "instant " << instant;
    EXPECT_EQ(row[2].as<int>(), 1) << "instant " << instant;
    const auto it = executed.find(row[3].as<std::int64_t>());
    EXPECT_TRUE(it != executed.end() && it->second == 1) << "instant " << instant << " ran once";
    refused_by_the_draining += row[4].as<bool>() ? 1 : 0;
    ++instants;
  }
  EXPECT_EQ(instants, (until_ms - every_from) / 1000) << "no instant missing";
  EXPECT_GT(refused_by_the_draining, 0) << "ROUND sent fires to the draining executor, which refused them";
  // None ran on the draining executor once the drain had begun (a fire it accepted a moment before the
  // signal arrived may start just after; 500 ms covers the signal's delivery).
  EXPECT_EQ(c.Scalar(fmt::format("SELECT count(*) FROM job_log WHERE job_id = {} AND executor_address = '{}' "
                                 "AND start_ms > {}",
                                 every_job, drained_address, signalled_ms + 500)),
            0);
  std::printf(
      "drain: SIGTERM -> exit %lld ms (the 20 s fire finished and was called back); %d instants of the "
      "every-second job, each once; %d of them refused by the draining executor and sent to the other\n",
      static_cast<long long>(exited_ms - signalled_ms), instants, refused_by_the_draining);
}

TEST(DrainE2E, ASecondSignalStopsADrainingExecutorAtOnce) {
  Cluster c({.admins = 1, .executors = 1});
  const int group = c.AddGroup();
  c.AwaitRegistered(0);
  const std::int64_t log = StartLongFire(c, group, 120).second;
  ASSERT_GT(log, 0);
  c.executor(0).Signal(SIGTERM);
  HttpCaller metrics(c.executor_port(0));
  ASSERT_TRUE(Eventually(
      [&] {
        return metrics.Send("GET", "/metrics").body.find("cronwheel_executor_draining 1") !=
               std::string::npos;
      },
      10s, 100ms))
      << c.executor(0).LogTail();
  EXPECT_FALSE(c.executor(0).Wait(1s).has_value()) << "draining: the 120 s fire still runs";
  c.executor(0).Signal(SIGTERM);
  const auto exit_code = c.executor(0).Wait(15s);
  ASSERT_TRUE(exit_code.has_value()) << "a second signal stops at once: " << c.executor(0).LogTail();
  EXPECT_EQ(*exit_code, 0);
  ASSERT_TRUE(Eventually(
      [&] { return c.Scalar(fmt::format("SELECT handle_code FROM job_log WHERE id = {}", log)) != 0; }, 10s,
      100ms));
  const auto row = c.Exec(fmt::format("SELECT handle_code, handle_msg FROM job_log WHERE id = {}", log));
  EXPECT_EQ(row[0][0].as<int>(), 500);
  EXPECT_THAT(row[0][1].as<std::string>(), HasSubstr("executor is stopping."));
}

TEST(DrainE2E, AnAdministratorDrainsAnExecutorThroughTheAdminAndItExitsOnceItsFireIsCalledBack) {
  constexpr const char* kPassword = "drain-e2e-password";
  Cluster c({.admins = 1, .executors = 1, .admin_env = {{"CRONWHEEL_ADMIN_PASSWORD", kPassword}}});
  const int group = c.AddGroup();
  c.AwaitRegistered(0);
  const std::int64_t log = StartLongFire(c, group, 4).second;
  ASSERT_GT(log, 0);
  HttpCaller http(c.admin_port(0));
  const auto session = cwtest::Login(http, "admin", kPassword);
  ASSERT_TRUE(session.has_value());
  const auto as_admin = cwtest::SessionHeaders(*session);
  const auto path = fmt::format("/api/v1/groups/{}/drain", group);

  auto r = http.Send("POST", path, as_admin, R"({"address":"http://127.0.0.1:1/"})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_THAT(r.body, HasSubstr("is not an online executor of group"));
  EXPECT_THAT(r.body, HasSubstr(c.executor_address(0)));

  const auto asked_ms = Cluster::NowMs();
  r = http.Send("POST", path, as_admin, nlohmann::json{{"address", c.executor_address(0)}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr("drain started"));
  // It leaves the registry at once (registryRemove), and exits once the 4 s fire has finished.
  EXPECT_TRUE(Eventually(
      [&] {
        return c.Scalar(fmt::format("SELECT count(*) FROM executor_registry WHERE registry_value = '{}'",
                                    c.executor_address(0))) == 0;
      },
      10s, 100ms));
  const auto exit_code = c.executor(0).Wait(30s);
  const auto exited_ms = Cluster::NowMs();
  ASSERT_TRUE(exit_code.has_value()) << c.executor(0).LogTail();
  EXPECT_EQ(*exit_code, 0);
  const auto row = c.Exec(fmt::format("SELECT handle_code, handle_ms FROM job_log WHERE id = {}", log));
  EXPECT_EQ(row[0][0].as<int>(), 200) << "the running fire finished and was called back before the exit";
  EXPECT_GE(row[0][1].as<std::int64_t>(), asked_ms - 1000);
  std::printf("drain: asked through the admin -> exit %lld ms later, its fire called back SUCCESS\n",
              static_cast<long long>(exited_ms - asked_ms));
}

}  // namespace
