#pragma once
// A migrated test database with a pool, plus helpers to insert groups and jobs directly.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <pqxx/pqxx>
#include <string>

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

  int AddGroup(const std::string& app = "sample-app", const std::string& extra_cols = "",
               const std::string& extra_vals = "") {
    return Exec("INSERT INTO job_group (app_name, title, created_ms, updated_ms" + extra_cols +
                ") VALUES ('" + app + "', 'T', 1, 1" + extra_vals + ") RETURNING id")[0][0]
        .as<int>();
  }
  // A CRON job, enabled, next fire as given.
  int AddJob(int group, const std::string& cron, std::int64_t next_ms,
             const std::string& misfire = "DO_NOTHING", const std::string& type = "CRON") {
    return Exec(
               "INSERT INTO job (group_id, description, handler, schedule_type, schedule_conf, "
               "misfire_strategy,"
               " enabled, next_fire_ms, glue_updated_ms, created_ms, updated_ms) VALUES (" +
               std::to_string(group) + ", 'job', 'demoJobHandler', '" + type + "', '" + cron + "', '" +
               misfire + "', true, " + std::to_string(next_ms) + ", 1, 1, 1) RETURNING id")[0][0]
        .as<int>();
  }

  TestDatabase db_;
  std::unique_ptr<cronwheel::admin::PgPool> pool_;
};

}  // namespace cwtest
