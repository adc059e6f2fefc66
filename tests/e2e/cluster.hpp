#pragma once
// A cronwheel cluster of real processes on loopback for end-to-end tests: a fresh database on the test
// PostgreSQL (CRONWHEEL_TEST_DSN), N cronwheel-admin processes and M cronwheel-executor processes, each
// on a free port with its own log file and log directory under a temporary folder. Jobs are written with
// SQL (as any client of the database could), so these tests do not depend on the console's login.
//
// What executors ran is read from their job-log files (<log dir>/<date>/<logId>.log): each run writes an
// "execute start" line, so a fire run twice, on one executor or on two, counts twice.
//
// Everything started is stopped by the destructor, even when a test fails.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "cwtest/process.hpp"
#include "cwtest/test_database.hpp"

namespace cwtest {

class Cluster {
 public:
  struct Options {
    int admins = 1;
    int executors = 1;
    std::string app_name = "e2e-app";
    std::vector<std::string> admin_args;              // extra flags for every admin
    std::map<std::string, std::string> admin_env;     // extra environment of every admin
    std::vector<std::string> executor_args;           // extra flags for every executor
    std::map<std::string, std::string> executor_env;  // extra environment of every executor
    bool scripts_on_last_executor = false;
    std::string server_dsn;              // PostgreSQL to create the database on; "" = CRONWHEEL_TEST_DSN's
    bool server_database_as_is = false;  // use server_dsn's own database instead of creating one
    std::map<int, std::string> admin_program;  // admin i's binary (0-based); others: this build's
    int admins_at_start = -1;  // admins the constructor starts (-1 = all); StartLateAdmin starts the rest
    int first_admin_port =
        0;  // admin 1 listens here (a URL naming it was configured before); 0 = a free port
  };

  explicit Cluster(Options options);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  ChildProcess& admin(int i) { return *admins_.at(static_cast<std::size_t>(i)); }
  ChildProcess& executor(int i) { return *executors_.at(static_cast<std::size_t>(i)); }
  int admin_port(int i) const { return admin_ports_.at(static_cast<std::size_t>(i)); }
  int admin_count() const { return static_cast<int>(admin_ports_.size()); }
  int executor_port(int i) const { return executor_ports_.at(static_cast<std::size_t>(i)); }
  std::string executor_address(int i) const;
  const std::string& token() const { return token_; }
  const std::string& dsn() const { return db_.dsn(); }
  const std::filesystem::path& dir() const { return dir_; }

  // Waits until admin i answers /api/v1/health.
  void AwaitAdmin(int i, std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // Waits until executor i is in the registry (and so routable within a second).
  void AwaitRegistered(int i, std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // Starts admin i, one of those the constructor left (Options::admins_at_start), and waits for it. In order.
  void StartLateAdmin(int i);
  // Restarts a killed or stopped admin / executor with the same settings and waits for it.
  void RestartAdmin(int i);
  void RestartExecutor(int i);

  // SQL helpers on the cluster's database.
  pqxx::result Exec(const std::string& sql);
  std::int64_t Scalar(const std::string& sql);
  // An AUTO group for the executors' app name; returns its id.
  int AddGroup();
  // An enabled job whose first fire is the schedule's first instant after `first_after_ms`.
  int AddJob(int group_id, const std::string& cron, const std::string& route = "FIRST",
             const std::string& misfire = "DO_NOTHING", const std::string& handler = "noopJobHandler",
             std::int64_t first_after_ms = 0, const std::string& extra_sets = "");

  // log id -> number of times executors ran it, read from every executor's log directory (or from
  // executor `only`'s alone, 0-based).
  std::map<std::int64_t, int> ExecutedLogIds(std::optional<int> only = std::nullopt) const;

  static std::int64_t NowMs();

 private:
  void StartAdmin(int i);
  void StartExecutor(int i);

  Options options_;
  TestDatabase db_;
  std::filesystem::path dir_;
  std::string token_;
  std::vector<int> admin_ports_;
  std::vector<int> executor_ports_;
  std::vector<std::unique_ptr<ChildProcess>> admins_;
  std::vector<std::unique_ptr<ChildProcess>> executors_;
  std::unique_ptr<pqxx::connection> conn_;
};

}  // namespace cwtest
