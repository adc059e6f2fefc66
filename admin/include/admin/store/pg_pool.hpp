#pragma once
// A fixed-size pool of PostgreSQL connections (libpqxx 6.4). A pqxx::connection is not thread-safe, so
// each thread borrows one through a Lease for the span of its work and gives it back.
//
// Connections open lazily and reopen after a failure: a Lease whose user saw pqxx::broken_connection
// (or that finds the connection closed) is discarded instead of returned, so the pool heals itself
// when PostgreSQL comes back after an outage.
//
// Failover (docs/architecture.md, "When the primary dies"). The DSN may name several hosts
// (postgresql://u:p@h1:5432,h2:5432,h3:5432/db?target_session_attrs=read-write): libpq tries them in turn
// and keeps the first that accepts writes, so a new connection reaches whichever server is the primary now.
// An idle connection is checked before it is lent: one whose server has closed it (a primary that died or
// was demoted: PostgreSQL's backends exit and the socket reads end-of-file) is dropped, not lent, so a
// failover costs no failed statement on connections that were idle. A connection that meets a read-only
// server (SQLSTATE 25006: a standby, or a primary turned read-only) or a server shutting down (class 57P) is
// discarded by WithConnection (store/pg_util.hpp) like a broken one.
//
// Thread-safety: Acquire() may be called from any thread. A Lease belongs to the thread that holds it.
// Lifetime: the pool must outlive every Lease.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <pqxx/pqxx>
#include <stdexcept>
#include <string>
#include <vector>

#include "admin/model/result.hpp"
#include "cronwheel/mutex.hpp"

namespace cronwheel::admin {

// Acquire() waited longer than PgPool::Settings::acquire_timeout.
class PoolExhausted : public DatabaseUnavailable {
 public:
  using DatabaseUnavailable::DatabaseUnavailable;
};

class PgPool final {
 public:
  struct Settings {
    std::string dsn;                                    // libpq URI or key=value string
    int size = 16;                                      // maximum open connections
    std::chrono::milliseconds acquire_timeout{10'000};  // how long Acquire() may wait for a free one
    // Run on every new connection. The default makes PostgreSQL (14+) check every second that the client
    // is still there, even while a statement waits for a lock: a killed admin's transaction then releases
    // its row locks within a second instead of when its lock wait ends. It also turns JIT compilation off:
    // the admin's statements are short, and one whose estimated cost passes jit_above_cost (the alert
    // recovery claim, planned against an empty, never analysed alert_state) spent 76 ms compiling and
    // 0.1 ms running, once a second (docs/performance.md, "Four costs found by profiling").
    std::string session_setup = kDefaultSessionSetup;
  };
  static constexpr const char* kDefaultSessionSetup =
      "SET client_connection_check_interval = 1000; SET jit = off; SET application_name = 'cronwheel-admin'";

  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();
    pqxx::connection& operator*() const { return *conn_; }
    pqxx::connection* operator->() const { return conn_.get(); }
    // Close the connection instead of returning it (call after a broken_connection error).
    void Discard() { discard_ = true; }

   private:
    friend class PgPool;
    Lease(PgPool* pool, std::unique_ptr<pqxx::connection> conn) : pool_(pool), conn_(std::move(conn)) {}
    PgPool* pool_;
    std::unique_ptr<pqxx::connection> conn_;
    bool discard_ = false;
  };

  explicit PgPool(Settings settings);
  PgPool(const PgPool&) = delete;
  PgPool& operator=(const PgPool&) = delete;
  ~PgPool();

  // Borrows a connection, opening one if none is idle and fewer than `size` are open.
  // Throws pqxx::broken_connection when PostgreSQL cannot be reached, PoolExhausted after the timeout.
  Lease Acquire();

  [[nodiscard]] const std::string& dsn() const { return settings_.dsn; }

  // Counters since the pool was made, and the connections now (for metrics; app/metrics.hpp).
  struct Stats {
    int size = 0;  // the maximum
    int open = 0;  // idle + leased
    int idle = 0;
    std::uint64_t acquired = 0;        // Acquire() calls that returned a connection
    std::uint64_t waits = 0;           // ... of which had to wait for one to be given back
    std::uint64_t wait_ns = 0;         // time those spent waiting
    std::uint64_t exhausted = 0;       // Acquire() gave up after acquire_timeout (PoolExhausted)
    std::uint64_t connect_errors = 0;  // a new connection could not be opened
    std::uint64_t discarded = 0;       // connections closed after a failure (broken, closed behind our back)
    std::uint64_t stale = 0;           // ... of which were idle and found closed by the server before a lend
    std::uint64_t commits_in_doubt = 0;  // COMMITs whose connection was lost before the outcome came back
  };
  [[nodiscard]] Stats stats() const;

  // Counts a commit whose outcome is unknown (WithConnection, on pqxx::in_doubt_error). The scheduler
  // resolves its fires when the count moves (SchedulerStore::CommitsInDoubt).
  void NoteCommitInDoubt();

 private:
  void Return(std::unique_ptr<pqxx::connection> conn, bool discard);

  Settings settings_;
  mutable cronwheel::Mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_ ABSL_GUARDED_BY(mu_);
  int open_ ABSL_GUARDED_BY(mu_) = 0;  // idle + leased
  // Guarded by mu_.
  std::uint64_t acquired_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t waits_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t wait_ns_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t exhausted_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t connect_errors_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t discarded_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t stale_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t commits_in_doubt_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace cronwheel::admin
