// A fire held for the admin's own congestion (docs/architecture.md, "Delivery to executors"): when every one
// of the admin's connections to an executor is busy, a fire waits for one until its misfire threshold. Its
// row stays PENDING and owned meanwhile (a crash leaves it to recovery), and only at the threshold is it
// recorded as a failed trigger, saying why. The real parts: PostgreSQL's fire tables, the scan, the trigger
// service, the batched result writer and the HTTP executor client against an executor on loopback whose one
// connection is held by a slow /run.
#include <gtest/gtest.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "admin/dispatch/executor_client.hpp"
#include "admin/dispatch/job_catalog.hpp"
#include "admin/dispatch/route_strategies.hpp"
#include "admin/dispatch/trigger_service.hpp"
#include "admin/schedule/scan_planner.hpp"
#include "admin/store/pg_catalog_source.hpp"
#include "admin/store/pg_scheduler_store.hpp"
#include "admin/store/trigger_result_writer.hpp"
#include "cwtest/fake_clock.hpp"
#include "cwtest/loopback_server.hpp"
#include "cwtest/process.hpp"
#include "pg_fixture.hpp"

namespace {

using namespace cronwheel::admin;
using std::chrono::milliseconds;
constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z
constexpr milliseconds kThreshold{1500};     // the misfire threshold: how long a held fire may wait

// An executor whose /run answers only once the test lets it (the first fire holds its connection).
class HeldExecutor {
 public:
  HeldExecutor() {
    server_.Post("/run", [this](const httplib::Request&, httplib::Response& res) {
      std::unique_lock lock(mu_);
      ++received_;
      cv_.wait(lock, [this] { return released_; });
      res.set_content(R"({"code":200,"msg":null})", "application/json");
    });
    loopback_ = std::make_unique<cwtest::LoopbackServer>(server_);
  }
  ~HeldExecutor() {
    Release();
    loopback_.reset();
  }
  HeldExecutor(const HeldExecutor&) = delete;
  HeldExecutor& operator=(const HeldExecutor&) = delete;

  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  int received() {
    std::lock_guard lock(mu_);
    return received_;
  }
  std::string address() const { return loopback_->address(); }

 private:
  httplib::Server server_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  int received_ = 0;
  std::unique_ptr<cwtest::LoopbackServer> loopback_;
};

class HeldFirePg : public cwtest::PgFixture {
 protected:
  // The row's status, trigger code and owner, as one string ("PENDING 0 node-a").
  std::string RowState(std::int64_t log_id) {
    return Exec(
               fmt::format("SELECT status || ' ' || trigger_code || ' ' || coalesce(owner_node, '-') "
                           "FROM job_log WHERE id = {}",
                           log_id))[0][0]
        .as<std::string>();
  }
  std::string TriggerMsg(std::int64_t log_id) {
    return Exec(fmt::format("SELECT trigger_msg FROM job_log WHERE id = {}", log_id))[0][0].as<std::string>();
  }
  bool FireOpen(std::int64_t log_id) {
    return Count(fmt::format("SELECT count(*) FROM fire_open WHERE log_id = {}", log_id)) == 1;
  }

  cwtest::FakeClock clock_{kT0};
};

TEST_F(HeldFirePg, AFireHeldForTheAdminsBusyConnectionsStaysPendingAndFailsAtItsMisfireThreshold) {
  HeldExecutor executor;
  const int group = AddGroup("held-app", ", address_type, addresses",
                             fmt::format(", 'MANUAL', ARRAY['{}']", executor.address()));
  AddJob(group, "* * * * * ?", kT0 + 1000);
  AddJob(group, "* * * * * ?", kT0 + 1000);

  PgSchedulerStore store(*pool_);
  ScanPlanner planner;
  const auto scanned = store.Scan("node-a", 100, clock_, planner).fires;
  std::vector<Fire> due;  // the two jobs' fires of the first instant
  for (const auto& f : scanned)
    if (f.scheduled_ms == kT0 + 1000) due.push_back(FireFromCommitted(f));
  ASSERT_EQ(due.size(), 2u);
  clock_.AdvanceToWallMs(
      kT0 + 1000);  // their instant: each may wait for a connection until kT0 + 1000 + kThreshold

  PgCatalogSource source(*pool_);
  JobCatalog catalog({}, clock_, source);
  TriggerResultWriter writer({}, clock_, *pool_);
  // One connection to the executor: the first fire's /run holds it.
  HttpExecutorClient client({.connect_timeout = milliseconds(10'000),
                             .read_timeout = milliseconds(30'000),
                             .max_connections_per_origin = 1,
                             .threads = 1},
                            clock_);
  RouterSet routers(client);
  TriggerService trigger(
      {.node_id = "node-a", .misfire_threshold = kThreshold}, clock_, catalog, client, writer,
      [&routers](RouteStrategy s) -> Router& { return routers.For(s); }, store, nullptr);
  const auto sent = due[0].log_id;
  const auto held = due[1].log_id;
  trigger.Trigger(due[0], nullptr);
  ASSERT_TRUE(cwtest::Eventually([&] { return executor.received() == 1; }, milliseconds(20'000)));
  trigger.Trigger(due[1], nullptr);

  // While it waits for the connection: PENDING, no trigger result, still owned by this admin and open
  // (recovery's to take).
  ASSERT_TRUE(cwtest::Eventually([&] { return client.Stats(executor.address()).waiting == 1; },
                                 milliseconds(20'000)));
  writer.Flush();
  EXPECT_EQ(RowState(held), "PENDING 0 node-a");
  EXPECT_TRUE(FireOpen(held));
  EXPECT_EQ(RowState(sent), "PENDING 0 node-a") << "its /run has not been answered yet";

  // At the threshold (real time on the client's thread: kThreshold after it began to wait), failed with
  // the reason, and never sent: the executor saw one /run only.
  ASSERT_TRUE(cwtest::Eventually(
      [&] {
        writer.Flush();
        return RowState(held) != "PENDING 0 node-a";
      },
      milliseconds(30'000)));
  EXPECT_EQ(RowState(held), "FAILED 500 node-a");
  EXPECT_FALSE(FireOpen(held)) << "a failed trigger is finished";
  const auto msg = TriggerMsg(held);
  EXPECT_NE(msg.find("stayed busy"), std::string::npos) << msg;
  EXPECT_NE(msg.find("until the fire's misfire threshold"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not sent within the misfire threshold (1500 ms after its instant)"), std::string::npos)
      << msg;
  EXPECT_EQ(executor.received(), 1);

  // The held connection's own fire is recorded as sent once the executor answers it.
  executor.Release();
  ASSERT_TRUE(cwtest::Eventually(
      [&] {
        writer.Flush();
        return RowState(sent) != "PENDING 0 node-a";
      },
      milliseconds(30'000)));
  EXPECT_EQ(RowState(sent), "RUNNING 200 node-a");
  EXPECT_EQ(executor.received(), 1);
}

}  // namespace
