#pragma once
// A migrated test database with a pool, plus helpers to insert groups and jobs directly.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "admin/store/migrations.hpp"
#include "admin/store/pg_pool.hpp"
#include "cwtest/test_database.hpp"

namespace cwtest {

class PgFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    pool_ = std::make_unique<cronwheel::admin::PgPool>(
        cronwheel::admin::PgPool::Settings{.dsn = db_.dsn(), .size = 8});
    auto conn = pool_->Acquire();
    cronwheel::admin::ApplyMigrations(*conn, cronwheel::admin::BuiltInMigrations(), 1);
  }

  pqxx::result Exec(const std::string& sql) {
    auto conn = pool_->Acquire();
    pqxx::work tx(*conn);
    auto r = tx.exec(sql);
    tx.commit();
    return r;
  }
  int Count(const std::string& sql) { return Exec(sql)[0][0].as<int>(); }
  // The log ids of fires (anything with a log_id), in their order.
  template <class Fires>
  static std::vector<std::int64_t> LogIds(const Fires& fires) {
    std::vector<std::int64_t> ids;
    ids.reserve(fires.size());
    for (const auto& f : fires)
      ids.push_back(f.log_id);
    return ids;
  }

  int AddGroup(const std::string& app = "sample-app", const std::string& extra_cols = "",
               const std::string& extra_vals = "") {
    return Exec("INSERT INTO job_group (app_name, title, created_ms, updated_ms" + extra_cols +
                ") VALUES ('" + app + "', 'T', 1, 1" + extra_vals + ") RETURNING id")[0][0]
        .as<int>();
  }
  // A CRON job, enabled, next fire as given.
  int AddJob(int group, const std::string& cron, std::int64_t next_ms,
             const std::string& misfire = "DO_NOTHING", const std::string& type = "CRON") {
    const int id = Exec(
                       "INSERT INTO job (group_id, description, handler, schedule_type, schedule_conf, "
                       "misfire_strategy, enabled, glue_updated_ms, created_ms, updated_ms) VALUES (" +
                       std::to_string(group) + ", 'job', 'demoJobHandler', '" + type + "', '" + cron +
                       "', '" + misfire + "', true, 1, 1, 1) RETURNING id")[0][0]
                       .as<int>();
    SetNextFire(id, next_ms);
    return id;
  }
  // Job `id`'s next fire (its job_schedule row, sql/025_job_schedule.sql), written or replaced.
  void SetNextFire(int id, std::int64_t next_ms) {
    Exec("INSERT INTO job_schedule (job_id, next_fire_ms) VALUES (" + std::to_string(id) + ", " +
         std::to_string(next_ms) +
         ") ON CONFLICT (job_id) DO UPDATE SET next_fire_ms = EXCLUDED.next_fire_ms");
  }
  // Job `id`'s next fire as job_schedule holds it.
  std::int64_t NextFire(int id) {
    return Exec("SELECT next_fire_ms FROM job_schedule WHERE job_id = " + std::to_string(id))[0][0]
        .as<std::int64_t>();
  }

  // A fire written directly, in the state given, with what the admin keeps beside it: open (fire_open) while
  // it has no result and no failed trigger, queued for the failure monitor (fire_alarm) when it failed.
  std::int64_t AddFire(int job, int group, const std::string& type, std::int64_t scheduled, int trigger_code,
                       int handle_code, int retry_count = 0, const std::string& address = "",
                       std::int64_t trigger_ms = 0, const std::string& owner = "") {
    const auto triggered = trigger_ms ? trigger_ms : (trigger_code ? scheduled : 0);
    const auto id =
        Exec(fmt::format("INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, trigger_code,"
                         " handle_code, retry_count, executor_address, trigger_ms, owner_node, created_ms)"
                         " VALUES ({}, {}, '{}', {}, {}, {}, {}, '{}', {}, {}, {}) RETURNING id",
                         job, group, type, scheduled, trigger_code, handle_code, retry_count, address,
                         triggered, owner.empty() ? "NULL" : "'" + owner + "'", scheduled))[0][0]
            .as<std::int64_t>();
    const bool failed =
        (trigger_code != 0 && trigger_code != 200) || (handle_code != 0 && handle_code != 200);
    if (handle_code == 0 && !failed) {
      Exec(fmt::format(
          "INSERT INTO fire_open (log_id, scheduled_ms, job_id, group_id, trigger_type, owner_node,"
          " trigger_ms, executor_address) VALUES ({}, {}, {}, {}, '{}', {}, {}, '{}')",
          id, scheduled, job, group, type, owner.empty() ? "NULL" : "'" + owner + "'",
          trigger_code == 200 ? triggered : 0, address));
    }
    if (failed)
      Exec(fmt::format("INSERT INTO fire_alarm (log_id, scheduled_ms) VALUES ({}, {})", id, scheduled));
    return id;
  }

  TestDatabase db_;
  std::unique_ptr<cronwheel::admin::PgPool> pool_;
};

}  // namespace cwtest
