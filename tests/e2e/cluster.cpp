#include "cluster.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "ringwheel/schedule.hpp"

namespace cwtest {

namespace fs = std::filesystem;

Cluster::Cluster(Options options)
    : options_(std::move(options)),
      db_(options_.server_database_as_is
              ? TestDatabase(options_.server_dsn, TestDatabase::AsIs{})
              : TestDatabase(options_.server_dsn.empty() ? TestDatabase::ServerDsn() : options_.server_dsn)) {
  std::random_device rd;
  dir_ = fs::temp_directory_path() / fmt::format("cronwheel-e2e-{}-{:08x}", ::getpid(), rd());
  fs::create_directories(dir_);
  token_ = fmt::format("e2e-{:08x}{:08x}{:08x}", rd(), rd(), rd());
  conn_ = std::make_unique<pqxx::connection>(db_.dsn());
  const int at_start = options_.admins_at_start < 0 ? options_.admins : options_.admins_at_start;
  for (int i = 0; i < options_.admins; ++i) {
    admin_ports_.push_back(i == 0 && options_.first_admin_port > 0 ? options_.first_admin_port
                                                                   : FreeTcpPort());
    if (i < at_start) StartAdmin(i);
  }
  for (int i = 0; i < at_start; ++i)
    AwaitAdmin(i);
  for (int i = 0; i < options_.executors; ++i) {
    executor_ports_.push_back(FreeTcpPort());
    StartExecutor(i);
  }
  for (int i = 0; i < options_.executors; ++i)
    AwaitRegistered(i);
}

Cluster::~Cluster() {
  for (auto& e : executors_)
    e->Stop(std::chrono::seconds(5));
  for (auto& a : admins_)
    a->Stop(std::chrono::seconds(10));
  conn_.reset();
  if (!::testing::Test::HasFailure()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  } else {
    std::fprintf(stderr, "e2e: logs kept in %s\n", dir_.c_str());
  }
}

std::int64_t Cluster::NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Cluster::executor_address(int i) const {
  return fmt::format("http://127.0.0.1:{}/", executor_port(i));
}

void Cluster::StartLateAdmin(int i) {
  StartAdmin(i);
  AwaitAdmin(i);
}

void Cluster::StartAdmin(int i) {
  ChildProcess::Options o;
  const auto program = options_.admin_program.find(i);
  o.program = program == options_.admin_program.end() || program->second.empty() ? CRONWHEEL_ADMIN_BIN
                                                                                 : program->second;
  o.args = {"--dsn",
            db_.dsn(),
            "--listen",
            fmt::format("127.0.0.1:{}", admin_ports_[static_cast<std::size_t>(i)]),
            "--access-token",
            token_,
            "--node-id",
            fmt::format("admin-{}", i + 1),
            "--mode",
            "production",
            "--fast-pool-threads",
            "16",
            "--slow-pool-threads",
            "4",
            "--db-pool-size",
            "8",
            "--http-threads",
            "8"};
  o.args.insert(o.args.end(), options_.admin_args.begin(), options_.admin_args.end());
  o.env = options_.admin_env;
  o.log_path = (dir_ / fmt::format("admin-{}.log", i + 1)).string();
  if (static_cast<std::size_t>(i) < admins_.size()) {
    admins_[static_cast<std::size_t>(i)] = std::make_unique<ChildProcess>(o);
  } else {
    admins_.push_back(std::make_unique<ChildProcess>(o));
  }
}

void Cluster::StartExecutor(int i) {
  ChildProcess::Options o;
  o.program = CRONWHEEL_EXECUTOR_BIN;
  std::string admins;
  for (int a = 0; a < options_.admins; ++a) {
    admins += fmt::format("{}http://127.0.0.1:{}", a ? "," : "", admin_ports_[static_cast<std::size_t>(a)]);
  }
  const auto log_dir = dir_ / fmt::format("executor-{}", i + 1);
  o.args = {"--app-name",
            options_.app_name,
            "--admin-addresses",
            admins,
            "--listen",
            fmt::format("127.0.0.1:{}", executor_ports_[static_cast<std::size_t>(i)]),
            "--access-token",
            token_,
            "--log-dir",
            log_dir.string(),
            "--heartbeat-interval-s",
            "2",
            "--mode",
            "production"};
  if (options_.scripts_on_last_executor && i == options_.executors - 1) {
    o.args.insert(o.args.end(), {"--enable-scripts", "true"});
  }
  o.args.insert(o.args.end(), options_.executor_args.begin(), options_.executor_args.end());
  o.env = options_.executor_env;
  o.log_path = (dir_ / fmt::format("executor-{}.log", i + 1)).string();
  if (static_cast<std::size_t>(i) < executors_.size()) {
    executors_[static_cast<std::size_t>(i)] = std::make_unique<ChildProcess>(o);
  } else {
    executors_.push_back(std::make_unique<ChildProcess>(o));
  }
}

void Cluster::AwaitAdmin(int i, std::chrono::milliseconds timeout) {
  if (!WaitForHttp(admin_port(i), "/api/v1/health", timeout, 200, "\"ok\"")) {
    throw std::runtime_error(fmt::format("admin {} did not become healthy:\n{}", i + 1, admin(i).LogTail()));
  }
}

void Cluster::AwaitRegistered(int i, std::chrono::milliseconds timeout) {
  const auto address = executor_address(i);
  const bool ok = Eventually(
      [&] {
        return Scalar(fmt::format("SELECT count(*) FROM executor_registry WHERE registry_value = '{}'",
                                  address)) > 0;
      },
      timeout);
  if (!ok)
    throw std::runtime_error(fmt::format("executor {} did not register:\n{}", i + 1, executor(i).LogTail()));
  // The admins read the registry every second.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
}

void Cluster::RestartAdmin(int i) {
  admin(i).Restart();
  AwaitAdmin(i);
}

void Cluster::RestartExecutor(int i) {
  executor(i).Restart();
  if (!WaitForTcp(executor_port(i), std::chrono::seconds(30))) {
    throw std::runtime_error(fmt::format("executor {} did not come back:\n{}", i + 1, executor(i).LogTail()));
  }
}

pqxx::result Cluster::Exec(const std::string& sql) {
  // The test's own connection reconnects after a database outage (the fault test stops PostgreSQL).
  for (int attempt = 0;; ++attempt) {
    try {
      if (!conn_ || !conn_->is_open()) conn_ = std::make_unique<pqxx::connection>(db_.dsn());
      pqxx::work tx(*conn_);
      auto r = tx.exec(sql);
      tx.commit();
      return r;
    } catch (const pqxx::broken_connection&) {
      conn_.reset();
      if (attempt >= 50) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
}

std::int64_t Cluster::Scalar(const std::string& sql) {
  return Exec(sql)[0][0].as<std::int64_t>();
}

int Cluster::AddGroup() {
  return static_cast<int>(
      Scalar(fmt::format("INSERT INTO job_group (app_name, title, address_type, created_ms, updated_ms) "
                         "VALUES ('{}', 'e2e', 'AUTO', 1, 1)"
                         " RETURNING id",
                         options_.app_name)));
}

int Cluster::AddJob(int group_id, const std::string& cron, const std::string& route,
                    const std::string& misfire, const std::string& handler, std::int64_t first_after_ms,
                    const std::string& extra_sets) {
  const auto schedule = ringwheel::Schedule::Parse("CRON", cron, "UTC");
  if (!schedule.ok()) throw std::invalid_argument("bad cron in test: " + cron);
  const auto from = first_after_ms ? first_after_ms : NowMs() + 5000;
  const auto next = schedule->NextFireMs(from).value();
  const int id = static_cast<int>(Scalar(fmt::format(
      "INSERT INTO job (group_id, description, handler, schedule_type, schedule_conf, route_strategy,"
      " misfire_strategy, enabled, glue_updated_ms, created_ms, updated_ms)"
      " VALUES ({}, 'e2e job', '{}', 'CRON', '{}', '{}', '{}', true, 1, 1, 1) RETURNING id",
      group_id, handler, cron, route, misfire)));
  Exec(fmt::format("INSERT INTO job_schedule (job_id, next_fire_ms) VALUES ({}, {})", id, next));
  if (!extra_sets.empty()) Exec(fmt::format("UPDATE job SET {} WHERE id = {}", extra_sets, id));
  return id;
}

namespace {

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// "job execute start" lines in `text`: one per run of a fire.
int Starts(std::string_view text) {
  int runs = 0;
  for (auto at = text.find("job execute start"); at != std::string_view::npos;
       at = text.find("job execute start", at + 1))
    ++runs;
  return runs;
}

// Adds the runs in one day folder of an executor's log dir. A log is its own file <logId>.log when that
// exists, else its records in the day's segments (fires-NNNNNN.seg: "#cwlog <logId> <length>\n" and then
// <length> bytes of lines), read here independently of the executor's code.
void AddDayRuns(const fs::path& day, std::map<std::int64_t, int>& out) {
  std::set<std::int64_t> own_files;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(day, ec)) {
    if (f.path().extension() != ".log") continue;
    const auto stem = f.path().stem().string();
    std::int64_t id = 0;
    if (std::from_chars(stem.data(), stem.data() + stem.size(), id).ec != std::errc{}) continue;
    own_files.insert(id);
    out[id] += Starts(ReadFile(f.path()));
  }
  for (const auto& f : fs::directory_iterator(day, ec)) {
    if (f.path().extension() != ".seg") continue;
    const std::string data = ReadFile(f.path());
    std::size_t pos = 0;
    while (pos < data.size()) {
      std::int64_t id = 0;
      std::size_t length = 0;
      const auto eol = data.find('\n', pos);
      if (eol == std::string::npos ||
          std::sscanf(data.c_str() + pos, "#cwlog %" SCNd64 " %zu", &id, &length) != 2)
        break;
      const std::string_view text(data.data() + eol + 1, std::min(length, data.size() - eol - 1));
      if (own_files.count(id) == 0) out[id] += Starts(text);
      pos = eol + 1 + length;
    }
  }
}

}  // namespace

std::map<std::int64_t, int> Cluster::ExecutedLogIds(std::optional<int> only) const {
  std::map<std::int64_t, int> out;
  for (int i = 0; i < options_.executors; ++i) {
    if (only && *only != i) continue;
    const auto log_dir = dir_ / fmt::format("executor-{}", i + 1);
    std::error_code ec;
    if (!fs::exists(log_dir, ec)) continue;
    for (const auto& day : fs::directory_iterator(log_dir, ec)) {
      // Date folders only (yyyy-mm-dd): not gluesource/ or callbacklogs/.
      const auto name = day.path().filename().string();
      if (!day.is_directory() || name.size() != 10 || name[4] != '-') continue;
      AddDayRuns(day.path(), out);
    }
  }
  return out;
}

}  // namespace cwtest
