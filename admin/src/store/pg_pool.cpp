#include "admin/store/pg_pool.hpp"

#include <poll.h>

#include "cronwheel/mutex.hpp"

namespace cronwheel::admin {
namespace {

// Whether an idle connection may be lent. Nothing should arrive on one: the pool's connections listen for no
// notification, and a notice only answers a statement. Anything to read (a server that closed it, or sent its
// FATAL message first, as a dying or demoted primary's backends do) means it is of no further use; a rare
// asynchronous message (a parameter's new value after a reload) costs a reconnection. One poll(2), no wait.
bool StillOpen(const pqxx::connection& conn) {
  if (!conn.is_open()) return false;
  pollfd p{.fd = conn.sock(), .events = POLLIN, .revents = 0};
  return p.fd >= 0 && poll(&p, 1, 0) == 0;
}

}  // namespace

PgPool::PgPool(Settings settings) : settings_(std::move(settings)) {}

PgPool::~PgPool() = default;

PgPool::Lease::Lease(Lease&& other) noexcept
    : pool_(other.pool_), conn_(std::move(other.conn_)), discard_(other.discard_) {
  other.pool_ = nullptr;
}

PgPool::Lease::~Lease() {
  if (pool_ != nullptr && conn_) pool_->Return(std::move(conn_), discard_);
}

PgPool::Lease PgPool::Acquire() {
  cronwheel::MutexLock lock(mu_);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + settings_.acquire_timeout;
  bool waited = false;
  const auto got = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    ++acquired_;
    if (waited) {
      ++waits_;
      wait_ns_ += static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
              .count());
    }
  };
  for (;;) {
    while (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      if (StillOpen(*conn)) {
        got();
        return {this, std::move(conn)};
      }
      --open_;  // closed behind our back (a server that died or was demoted): drop it and try the next
      ++discarded_;
      ++stale_;
    }
    if (open_ < settings_.size) {
      ++open_;
      got();
      lock.Unlock();
      try {
        auto conn = std::make_unique<pqxx::connection>(settings_.dsn);
        if (!settings_.session_setup.empty()) {
          pqxx::nontransaction tx(*conn);
          tx.exec(settings_.session_setup);
        }
        return {this, std::move(conn)};
      } catch (...) {
        lock.Lock();
        --open_;
        --acquired_;
        ++connect_errors_;
        cv_.notify_one();
        throw;
      }
    }
    waited = true;
    if (cv_.wait_until(lock.native(), deadline) == std::cv_status::timeout && idle_.empty() &&
        open_ >= settings_.size) {
      ++exhausted_;
      throw PoolExhausted("no PostgreSQL connection free after " +
                          std::to_string(settings_.acquire_timeout.count()) + " ms (pool size " +
                          std::to_string(settings_.size) + ")");
    }
  }
}

void PgPool::Return(std::unique_ptr<pqxx::connection> conn, bool discard) {
  std::unique_ptr<pqxx::connection> doomed;
  {
    cronwheel::MutexLock lock(mu_);
    if (discard || !conn->is_open()) {
      doomed = std::move(conn);
      --open_;
      ++discarded_;
    } else {
      idle_.push_back(std::move(conn));
    }
  }
  cv_.notify_one();
  // `doomed` closes here, outside the lock.
}

PgPool::Stats PgPool::stats() const {
  cronwheel::MutexLock lock(mu_);
  return {.size = settings_.size,
          .open = open_,
          .idle = static_cast<int>(idle_.size()),
          .acquired = acquired_,
          .waits = waits_,
          .wait_ns = wait_ns_,
          .exhausted = exhausted_,
          .connect_errors = connect_errors_,
          .discarded = discarded_,
          .stale = stale_,
          .commits_in_doubt = commits_in_doubt_};
}

void PgPool::NoteCommitInDoubt() {
  cronwheel::MutexLock lock(mu_);
  ++commits_in_doubt_;
}

}  // namespace cronwheel::admin
