#include "admin/store/migrations.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <pqxx/pqxx>

#include "admin/store/log_partitions.hpp"
#include "cwtest/test_database.hpp"

namespace {

using cronwheel::admin::ApplyMigrations;
using cronwheel::admin::BuiltInMigrations;

TEST(Migrations, BuiltInFilesAreOrderedAndNamed) {
  const auto migrations = BuiltInMigrations();
  ASSERT_FALSE(migrations.empty());
  EXPECT_EQ(migrations.front().version, 1);
  EXPECT_EQ(migrations.front().name, "001_schema.sql");
}

TEST(Migrations, ApplyToEmptyDatabaseThenSecondRunIsANoOp) {
  cwtest::TestDatabase db;
  pqxx::connection conn(db.dsn());
  const auto migrations = BuiltInMigrations();
  const auto first = ApplyMigrations(conn, migrations, 1000);
  EXPECT_EQ(first.applied, static_cast<int>(migrations.size()));
  EXPECT_EQ(first.schema_version, migrations.back().version);
  const auto second = ApplyMigrations(conn, migrations, 2000);
  EXPECT_EQ(second.applied, 0);
  EXPECT_EQ(second.schema_version, first.schema_version);
  pqxx::read_transaction tx(conn);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM schema_migrations")[0].as<int>(),
            static_cast<int>(migrations.size()));
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_lock WHERE lock_name = 'schedule_lock'")[0].as<int>(), 1);
}

TEST(Migrations, ThreeAdminsStartingTogetherApplyEachMigrationOnce) {
  cwtest::TestDatabase db;
  const auto migrations = BuiltInMigrations();
  std::vector<std::future<int>> admins;
  admins.reserve(3);
  for (int i = 0; i < 3; ++i) {
    admins.push_back(std::async(std::launch::async, [&] {
      pqxx::connection conn(db.dsn());
      return ApplyMigrations(conn, migrations, 1000).applied;
    }));
  }
  int total = 0;
  for (auto& a : admins)
    total += a.get();
  EXPECT_EQ(total, static_cast<int>(migrations.size()));
}

TEST(Migrations, ChangedAppliedMigrationIsRefused) {
  cwtest::TestDatabase db;
  pqxx::connection conn(db.dsn());
  auto migrations = BuiltInMigrations();
  ApplyMigrations(conn, migrations, 1000);
  const std::string edited = std::string(migrations.front().sql) + "\n-- edited\n";
  migrations.front().sql = edited;
  EXPECT_THROW(ApplyMigrations(conn, migrations, 2000), cronwheel::admin::MigrationError);
}

// Upgrades (docs/operations.md): a migration whose first line says it stops every admin is not applied while
// another admin's lease runs, and the message names the migration and the live admins; once their leases have
// ended, it is applied. An ordinary migration is applied beside live admins (a rolling upgrade).
TEST(Migrations, AMigrationThatStopsEveryAdminWaitsUntilNoOtherAdminIsAlive) {
  cwtest::TestDatabase db;
  pqxx::connection conn(db.dsn());
  auto migrations = BuiltInMigrations();
  ApplyMigrations(conn, migrations, 1000);
  {
    pqxx::work tx(conn);
    tx.exec(
        "INSERT INTO admin_node (node_id, lock_key, address, started_ms, heartbeat_ms, lease_until_ms) "
        "VALUES "
        "('old-a', 1, '', 1000, 50000, 60000), ('old-b', 2, '', 1000, 50000, 60000)");
    tx.commit();
  }
  const std::string additive = "-- adds a table\nCREATE TABLE upgrade_probe_a (x int);\n";
  const std::string rewrite = "-- cronwheel: stop every admin\nCREATE TABLE upgrade_probe_b (x int);\n";
  migrations.push_back({.version = 900, .name = "900_additive.sql", .sql = additive});
  EXPECT_FALSE(migrations.back().StopsEveryAdmin());
  EXPECT_EQ(ApplyMigrations(conn, migrations, 55'000).applied, 1) << "beside live admins";
  migrations.push_back({.version = 901, .name = "901_rewrite.sql", .sql = rewrite});
  EXPECT_TRUE(migrations.back().StopsEveryAdmin());
  try {
    ApplyMigrations(conn, migrations, 55'000);
    ADD_FAILURE() << "applied while old-a and old-b were alive";
  } catch (const cronwheel::admin::MigrationError& e) {
    EXPECT_NE(std::string(e.what()).find("'901_rewrite.sql'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("old-a, old-b"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ApplyMigrations(conn, migrations, 60'001).applied, 1) << "once their leases ended";
}

// An admin older than its database does not start, and says how to go back.
TEST(Migrations, AnAdminOlderThanItsDatabaseRefusesToStartAndSaysWhatToDo) {
  cwtest::TestDatabase db;
  pqxx::connection conn(db.dsn());
  auto migrations = BuiltInMigrations();
  const std::string newer = "CREATE TABLE upgrade_probe_c (x int);";
  migrations.push_back({.version = 902, .name = "902_newer.sql", .sql = newer});
  ApplyMigrations(conn, migrations, 1000);
  migrations.pop_back();
  try {
    ApplyMigrations(conn, migrations, 2000);
    ADD_FAILURE() << "an older admin started";
  } catch (const cronwheel::admin::MigrationError& e) {
    EXPECT_NE(std::string(e.what()).find("restore the backup taken before the upgrade"), std::string::npos)
        << e.what();
  }
}

// Security review (issue 21), finding 5: API tokens get an expiry (sql/007_token_expiry.sql). A token made
// before it expires 90 days after the upgrade, not at once (the scripts using it keep working meanwhile), and
// none is revoked; a new token cannot expire before it was made.
TEST(Migrations, TokensFromBeforeTheExpiryLastNinetyDaysFromTheUpgrade) {
  cwtest::TestDatabase db;
  pqxx::connection conn(db.dsn());
  const auto all = BuiltInMigrations();
  const auto seven = std::find_if(all.begin(), all.end(), [](const auto& m) { return m.version == 7; });
  ASSERT_NE(seven, all.end()) << "sql/007_token_expiry.sql";
  ApplyMigrations(conn, {all.begin(), seven}, 1000);
  {
    pqxx::work tx(conn);
    tx.exec(
        "INSERT INTO app_user (id, username, password_hash, created_ms, updated_ms) VALUES (1, 'someone', "
        "'$argon2id$x', 1, 1);"
        "INSERT INTO api_token (user_id, name, token_hash, created_ms) VALUES (1, 'old', 'h1', 1)");
    tx.commit();
  }
  ApplyMigrations(conn, all, 2000);
  pqxx::work tx(conn);
  const auto r = tx.exec1(
      "SELECT expires_ms - (extract(epoch FROM now()) * 1000)::bigint, revoked_ms, revoked_reason FROM "
      "api_token");
  EXPECT_NEAR(r[0].as<double>(), 90.0 * 86'400'000, 60'000.0);
  EXPECT_EQ(r[1].as<std::int64_t>(), 0);
  EXPECT_EQ(r[2].as<std::string>(), "");
  try {
    tx.exec(
        "INSERT INTO api_token (user_id, name, token_hash, created_ms, expires_ms) VALUES (1, 'n', 'h2', 5, "
        "5)");
    ADD_FAILURE() << "a token that expires when it is made was stored";
  } catch (const pqxx::check_violation&) {
  }
}

// Issue 24, item 5: tokens get a scope (sql/017_token_scopes.sql). A token made before it could do all its
// user could and keeps that (admin), so the scripts using it keep working; a new row is read unless it names
// a scope, and no other name is stored.
TEST(Migrations, TokensFromBeforeTheScopesKeepWhatTheyCouldDo) {
  cwtest::TestDatabase db;
  pqxx::connection conn(db.dsn());
  const auto all = BuiltInMigrations();
  const auto seventeen = std::find_if(all.begin(), all.end(), [](const auto& m) { return m.version == 17; });
  ASSERT_NE(seventeen, all.end()) << "sql/017_token_scopes.sql";
  ApplyMigrations(conn, {all.begin(), seventeen}, 1000);
  {
    pqxx::work tx(conn);
    tx.exec(
        "INSERT INTO app_user (id, username, password_hash, created_ms, updated_ms) VALUES (1, 'someone', "
        "'$argon2id$x', 1, 1);"
        "INSERT INTO api_token (user_id, name, token_hash, created_ms, expires_ms) VALUES (1, 'old', 'h1', "
        "1, 9)");
    tx.commit();
  }
  ApplyMigrations(conn, all, 2000);
  pqxx::work tx(conn);
  EXPECT_EQ(tx.exec1("SELECT scope FROM api_token WHERE name = 'old'")[0].as<std::string>(), "admin");
  tx.exec(
      "INSERT INTO api_token (user_id, name, token_hash, created_ms, expires_ms) VALUES (1, 'new', 'h2', 1, "
      "9)");
  EXPECT_EQ(tx.exec1("SELECT scope FROM api_token WHERE name = 'new'")[0].as<std::string>(), "read");
  try {
    tx.exec(
        "INSERT INTO api_token (user_id, name, token_hash, created_ms, expires_ms, scope) VALUES (1, 'n', "
        "'h3', "
        "1, 9, 'root')");
    ADD_FAILURE() << "a token of scope 'root' was stored";
  } catch (const pqxx::check_violation&) {
  }
}

// Migrates `conn` to just before migration `version`, writes `rows` (SQL) there, and migrates to the end.
void MigrateAcross(pqxx::connection& conn, int version, const std::string& rows) {
  const auto all = BuiltInMigrations();
  const auto at = std::find_if(all.begin(), all.end(), [&](const auto& m) { return m.version == version; });
  ASSERT_NE(at, all.end()) << "no migration " << version;
  ApplyMigrations(conn, {all.begin(), at}, 1000);
  {
    pqxx::work tx(conn);
    tx.exec(rows);
    tx.commit();
  }
  ApplyMigrations(conn, all, 2000);
}

// sql/025_job_schedule.sql: each job's place in its schedule moves to job_schedule. A started job keeps its
// next and last fire; a stopped one gets next 0 (the due index holds started jobs only), and the columns
// and index in job are gone.
TEST(Migrations, JobsFromBeforeTheScheduleTableKeepTheirNextFire) {
  cwtest::TestDatabase db;
  pqxx::connection conn(db.dsn());
  MigrateAcross(
      conn, 25,
      "INSERT INTO job_group (id, app_name, title, created_ms, updated_ms) VALUES (1, 'sample-app', 'T',"
      " 1, 1);"
      "INSERT INTO job (id, group_id, description, handler, schedule_type, schedule_conf, enabled,"
      " next_fire_ms, last_fire_ms, glue_updated_ms, created_ms, updated_ms) VALUES"
      " (1, 1, 'started', 'h', 'CRON', '* * * * * ?', true, 7000, 6000, 1, 1, 1),"
      " (2, 1, 'stopped', 'h', 'CRON', '* * * * * ?', false, 9000, 8000, 1, 1, 1)");
  pqxx::work tx(conn);
  const auto rows = tx.exec("SELECT job_id, next_fire_ms, last_fire_ms FROM job_schedule ORDER BY job_id");
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0][1].as<std::int64_t>(), 7000);
  EXPECT_EQ(rows[0][2].as<std::int64_t>(), 6000);
  EXPECT_EQ(rows[1][1].as<std::int64_t>(), 0) << "a stopped job is not in the due index";
  EXPECT_EQ(rows[1][2].as<std::int64_t>(), 8000);
  EXPECT_EQ(
      tx.exec1("SELECT count(*) FROM information_schema.columns WHERE table_name = 'job' AND column_name"
               " IN ('next_fire_ms', 'last_fire_ms')")[0]
          .as<int>(),
      0);
  tx.exec("DELETE FROM job WHERE id = 1");
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_schedule")[0].as<int>(), 1) << "a job's row goes with it";
}

// sql/026_job_log_fillfactor.sql: the partitions of job_log made before it (a day's and the default) leave
// 70% of each new page to the versions of a fire's updates, as the partitions the admin creates from now on.
TEST(Migrations, PartitionsOfFiresFromBeforeLeaveRoomForTheirUpdatesAsNewOnesDo) {
  cwtest::TestDatabase db;
  pqxx::connection conn(db.dsn());
  MigrateAcross(conn, 26,
                "CREATE TABLE job_log_p20260101 PARTITION OF job_log FOR VALUES FROM (1767225600000)"
                " TO (1767312000000) WITH (fillfactor = 50)");
  cronwheel::admin::log_partitions::Ensure(conn, 1'767'312'000'000, 0);  // creates job_log_p20260102
  pqxx::work tx(conn);
  const auto rows = tx.exec(
      "SELECT c.relname, array_to_string(c.reloptions, ',') FROM pg_inherits i JOIN pg_class c ON c.oid ="
      " i.inhrelid WHERE i.inhparent = 'job_log'::regclass ORDER BY c.relname");
  ASSERT_EQ(rows.size(), 3U);
  for (const auto& r : rows) {
    EXPECT_EQ(r[1].as<std::string>(),
              "fillfactor=" + std::to_string(cronwheel::admin::log_partitions::kFillfactor))
        << r[0].as<std::string>();
  }
}

// sql/019_group_roles.sql: a USER of an earlier version could do everything in its groups but manage them,
// so it becomes their DEVELOPER; a group id that no longer exists is dropped, an ADMIN gets no rows (it
// holds every group), and a group deleted later takes its rows with it.
TEST(Migrations, UsersFromBeforeTheRolesBecomeDevelopersOfTheirGroups) {
  cwtest::TestDatabase db;
  pqxx::connection conn(db.dsn());
  const auto all = BuiltInMigrations();
  const auto nineteen = std::find_if(all.begin(), all.end(), [](const auto& m) { return m.version == 19; });
  ASSERT_NE(nineteen, all.end()) << "sql/019_group_roles.sql";
  ApplyMigrations(conn, {all.begin(), nineteen}, 1000);
  {
    pqxx::work tx(conn);
    tx.exec(
        "INSERT INTO job_group (id, app_name, title, created_ms, updated_ms) VALUES (1, 'one-app', 'One', 1, "
        "1),"
        " (2, 'two-app', 'Two', 1, 1);"
        "INSERT INTO app_user (id, username, password_hash, role, permitted_group_ids, created_ms, "
        "updated_ms)"
        " VALUES (1, 'alice', '$argon2id$x', 'USER', '{2,1,99}', 1, 1),"
        " (2, 'root', '$argon2id$x', 'ADMIN', '{1}', 1, 1),"
        " (3, 'nobody', '$argon2id$x', 'USER', '{}', 1, 1)");
    tx.commit();
  }
  ApplyMigrations(conn, all, 2000);
  pqxx::work tx(conn);
  const auto grants = [&tx] {
    std::vector<std::string> out;
    for (const auto& r :
         tx.exec("SELECT user_id || ':' || group_id || ':' || role FROM app_user_group ORDER BY 1"))
      out.push_back(r[0].as<std::string>());
    return out;
  };
  EXPECT_EQ(grants(), (std::vector<std::string>{"1:1:DEVELOPER", "1:2:DEVELOPER"}));
  EXPECT_TRUE(tx.exec("SELECT 1 FROM information_schema.columns WHERE table_name = 'app_user' AND "
                      "column_name = 'permitted_group_ids'")
                  .empty());
  tx.exec("DELETE FROM job_group WHERE id = 2");
  EXPECT_EQ(grants(), (std::vector<std::string>{"1:1:DEVELOPER"}));
  try {
    tx.exec("INSERT INTO app_user_group (user_id, group_id, role) VALUES (3, 1, 'ROOT')");
    ADD_FAILURE() << "a role 'ROOT' was stored";
  } catch (const pqxx::check_violation&) {
  }
}

// sql/021_single_sign_on.sql: the users of earlier versions are local, keep their passwords and sign in as
// before; single sign-on is not required; a user of a source has a subject and no password, a local one no
// subject, and one subject of a source is one user.
TEST(Migrations, UsersFromBeforeSingleSignOnStayLocal) {
  cwtest::TestDatabase db;
  pqxx::connection conn(db.dsn());
  const auto all = BuiltInMigrations();
  const auto twenty_one = std::find_if(all.begin(), all.end(), [](const auto& m) { return m.version == 21; });
  ASSERT_NE(twenty_one, all.end()) << "sql/021_single_sign_on.sql";
  ApplyMigrations(conn, {all.begin(), twenty_one}, 1000);
  {
    pqxx::work tx(conn);
    tx.exec(
        "INSERT INTO app_user (username, password_hash, created_ms, updated_ms) VALUES ('alice', "
        "'$argon2id$x', 1, 1)");
    tx.commit();
  }
  ApplyMigrations(conn, all, 2000);
  pqxx::work tx(conn);
  EXPECT_EQ(tx.exec1("SELECT login_source || ' ' || password_hash || ' ' || (external_subject IS NULL) FROM "
                     "app_user WHERE username = 'alice'")[0]
                .as<std::string>(),
            "local $argon2id$x true");
  EXPECT_FALSE(tx.exec1("SELECT require_sso FROM auth_policy")[0].as<bool>());
  tx.exec(
      "INSERT INTO app_user (username, password_hash, login_source, external_subject, created_ms, updated_ms)"
      " VALUES ('bob@example.org', '!', 'oidc:kc', 'sub-1', 1, 1)");
  const auto refused = [&tx](const std::string& sql) {
    pqxx::subtransaction sub(tx);
    try {
      sub.exec(sql);
    } catch (const pqxx::sql_error&) {
      return true;
    }
    return false;
  };
  EXPECT_TRUE(
      refused("INSERT INTO app_user (username, password_hash, login_source, external_subject, created_ms, "
              "updated_ms) VALUES ('bob2', '!', 'oidc:kc', 'sub-1', 1, 1)"))
      << "one subject, two users";
  EXPECT_TRUE(
      refused("INSERT INTO app_user (username, password_hash, login_source, created_ms, updated_ms) "
              "VALUES ('carol', '!', 'ldap', 1, 1)"))
      << "a source's user without a subject";
  EXPECT_TRUE(
      refused("INSERT INTO app_user (username, password_hash, created_ms, updated_ms) VALUES ('dave', "
              "'plain-text', 1, 1)"))
      << "a password that is not argon2id";
  EXPECT_TRUE(
      refused("INSERT INTO app_user (username, password_hash, login_source, external_subject, created_ms, "
              "updated_ms) VALUES ('erin', '!', 'saml', 'x', 1, 1)"))
      << "an unknown source";
  EXPECT_TRUE(refused("INSERT INTO auth_policy (id) VALUES (2)")) << "a second policy";
}

class Schema : public ::testing::Test {
 protected:
  void SetUp() override {
    conn_ = std::make_unique<pqxx::connection>(db_.dsn());
    ApplyMigrations(*conn_, BuiltInMigrations(), 1000);
    pqxx::work tx(*conn_);
    tx.exec(
        "INSERT INTO job_group (id, app_name, title, created_ms, updated_ms) VALUES (1, 'sample-app', "
        "'Sample', 1, 1);"
        "INSERT INTO job (id, group_id, description, handler, schedule_type, schedule_conf, glue_updated_ms,"
        " created_ms, updated_ms) VALUES (1, 1, 'j', 'demoJobHandler', 'CRON', '* * * * * ?', 1, 1, 1)");
    tx.commit();
  }
  // Runs one statement; returns the SQLSTATE it failed with, or "" when it succeeded (rolled back).
  std::string Violation(const std::string& sql) {
    pqxx::work tx(*conn_);
    try {
      tx.exec(sql);
    } catch (const pqxx::sql_error& e) {
      return e.sqlstate();
    }
    return "";
  }
  cwtest::TestDatabase db_;
  std::unique_ptr<pqxx::connection> conn_;
};

TEST_F(Schema, CheckConstraintsRejectInvalidRows) {
  constexpr auto kCheck = "23514";
  EXPECT_EQ(Violation("UPDATE job SET schedule_type = 'SOMETIMES' WHERE id = 1"), kCheck);
  EXPECT_EQ(Violation("UPDATE job SET misfire_strategy = 'FIRE_TWICE' WHERE id = 1"), kCheck);
  EXPECT_EQ(Violation("UPDATE job SET route_strategy = 'NEAREST' WHERE id = 1"), kCheck);
  EXPECT_EQ(Violation("UPDATE job SET block_strategy = 'PARALLEL' WHERE id = 1"), kCheck);
  EXPECT_EQ(Violation("UPDATE job SET timeout_s = -1 WHERE id = 1"), kCheck);
  EXPECT_EQ(Violation("UPDATE job SET enabled = true, schedule_type = 'NONE' WHERE id = 1"), kCheck);
  EXPECT_EQ(Violation("UPDATE job SET handler = '' WHERE id = 1"), kCheck);
  EXPECT_EQ(Violation("UPDATE job_group SET address_type = 'DNS' WHERE id = 1"), kCheck);
  EXPECT_EQ(Violation("UPDATE job_group SET app_name = 'ab' WHERE id = 1"), kCheck);
  EXPECT_EQ(
      Violation("INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, shard_index, shard_total,"
                " created_ms) VALUES (1, 1, 'CRON', 1000, 3, 3, 1)"),
      kCheck);
  EXPECT_EQ(Violation("INSERT INTO app_user (username, password_hash, created_ms, updated_ms)"
                      " VALUES ('someone', 'e10adc3949ba59abbe56e057f20f883e', 1, 1)"),
            kCheck);
  EXPECT_EQ(Violation("UPDATE job SET description = NULL WHERE id = 1"), "23502");  // not null
  EXPECT_EQ(Violation("UPDATE job SET handler = 'other' WHERE id = 1"), "");        // a valid change passes
}

TEST_F(Schema, AScheduledInstantCanBeWrittenOnlyOnce) {
  const std::string insert =
      "INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, created_ms) VALUES (1, 1, '{}', "
      "5000, 1)";
  {
    pqxx::work tx(*conn_);
    tx.exec(
        "INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, created_ms) VALUES (1, 1, "
        "'CRON', 5000, 1)");
    tx.commit();
  }
  EXPECT_EQ(Violation("INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, created_ms)"
                      " VALUES (1, 1, 'CRON', 5000, 2)"),
            "23505");
  EXPECT_EQ(Violation("INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, created_ms)"
                      " VALUES (1, 1, 'MISFIRE', 5000, 2)"),
            "23505");
  // Manual triggers and a different shard of the same instant are separate fires.
  EXPECT_EQ(Violation("INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, created_ms)"
                      " VALUES (1, 1, 'MANUAL', 5000, 2)"),
            "");
  EXPECT_EQ(
      Violation("INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, shard_index, shard_total,"
                " created_ms) VALUES (1, 1, 'CRON', 5000, 1, 2, 2)"),
      "");
}

TEST_F(Schema, LogStatusIsDerivedFromTheCodes) {
  pqxx::work tx(*conn_);
  auto status = [&](int trigger, int handle) {
    return tx
        .exec_params1(
            "INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, trigger_code, handle_code, "
            "created_ms)"
            " VALUES (1, 1, 'MANUAL', 1, $1, $2, 1) RETURNING status",
            trigger, handle)[0]
        .as<std::string>();
  };
  EXPECT_EQ(status(0, 0), "PENDING");
  EXPECT_EQ(status(200, 0), "RUNNING");
  EXPECT_EQ(status(200, 200), "SUCCESS");
  EXPECT_EQ(status(200, 500), "FAILED");
  EXPECT_EQ(status(200, 502), "FAILED");
  EXPECT_EQ(status(500, 0), "FAILED");
}

}  // namespace
