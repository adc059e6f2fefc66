#include "admin/store/trigger_result_writer.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <pqxx/pqxx>

#include "admin/store/fire_log.hpp"
#include "cronwheel/mutex.hpp"
#include "store/pg_util.hpp"

namespace cronwheel::admin {
namespace {

// SQLSTATE of a lock_timeout that ran out.
constexpr const char* kLockNotAvailable = "55P03";

}  // namespace

TriggerResultWriter::TriggerResultWriter(Settings settings, ringwheel::Clock& clock, PgPool& pool)
    : settings_(settings), clock_(clock), pool_(pool) {
  thread_ = std::jthread([this](const std::stop_token& st) { Loop(st); });
}

TriggerResultWriter::~TriggerResultWriter() {
  Stop();
}

void TriggerResultWriter::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
  // The last flush, tried again while a callback holds some of its rows (callbacks are short transactions);
  // a database failure is not retried here.
  const auto attempts = std::max<std::int64_t>(
      settings_.stop_wait / std::max(settings_.lock_wait, std::chrono::milliseconds(1)), 1);
  for (std::int64_t i = 0; i < attempts; ++i) {
    const auto gave_way_before = gave_way_.load();
    if (Flush() || gave_way_.load() == gave_way_before) return;
  }
  spdlog::error("stopping: {} trigger result(s) not written: rows stayed locked for {} ms", pending(),
                settings_.stop_wait.count());
}

void TriggerResultWriter::Record(TriggerResult result) {
  cronwheel::MutexLock lock(mu_);
  // A second result of a fire kept back (routed again, replaced): the first goes ahead of it.
  ReleaseLocked(result.log_id);
  if (pending_.size() + held_.size() >= settings_.max_pending) {
    if (pending_.empty() && !release_.empty()) ReleaseLocked(release_.begin()->second);
    spdlog::error(
        "trigger results are not being written (database unavailable?): dropping the result of fire {}",
        pending_.front().log_id);
    pending_.pop_front();
  }
  if (result.sent_ahead && result.trigger_code == 200 && settings_.hold_for_callback.count() > 0 &&
      result.scheduled_ms > 0) {
    const auto log_id = result.log_id;
    const auto at = release_.emplace(result.scheduled_ms + settings_.hold_for_callback.count(), log_id);
    held_.emplace(log_id, Held{std::move(result), at});
    return;
  }
  pending_.push_back(std::move(result));
}

void TriggerResultWriter::ReleaseLocked(std::int64_t log_id) {
  const auto it = held_.find(log_id);
  if (it == held_.end()) return;
  release_.erase(it->second.release);
  pending_.push_back(std::move(it->second.result));
  held_.erase(it);
}

std::vector<TriggerResult> TriggerResultWriter::TakeHeld(std::span<const std::int64_t> log_ids) {
  std::vector<TriggerResult> out;
  cronwheel::MutexLock lock(mu_);
  if (held_.empty()) return out;
  for (const auto id : log_ids) {
    const auto it = held_.find(id);
    if (it == held_.end()) continue;
    release_.erase(it->second.release);
    out.push_back(std::move(it->second.result));
    held_.erase(it);
  }
  taken_ += out.size();
  return out;
}

void TriggerResultWriter::GiveBack(std::vector<TriggerResult> results) {
  if (results.empty()) return;
  cronwheel::MutexLock lock(mu_);
  taken_ -= std::min<std::uint64_t>(taken_, results.size());
  pending_.insert(pending_.begin(), std::make_move_iterator(results.begin()),
                  std::make_move_iterator(results.end()));
}

std::size_t TriggerResultWriter::held() const {
  cronwheel::MutexLock lock(mu_);
  return held_.size();
}

std::uint64_t TriggerResultWriter::taken() const {
  cronwheel::MutexLock lock(mu_);
  return taken_;
}

std::uint64_t TriggerResultWriter::gave_way() const {
  return gave_way_.load();
}

std::size_t TriggerResultWriter::pending() const {
  cronwheel::MutexLock lock(mu_);
  return pending_.size() + held_.size();
}

void TriggerResultWriter::Loop(const std::stop_token& stop) {
  while (clock_.WaitFor(settings_.flush_interval, stop))
    FlushUntil(clock_.NowMs());
}

bool TriggerResultWriter::Flush() {
  return FlushUntil(std::numeric_limits<std::int64_t>::max());
}

bool TriggerResultWriter::FlushUntil(std::int64_t release_by_ms) {
  cronwheel::MutexLock flush_lock(flush_mu_);
  std::deque<TriggerResult> taken;
  {
    cronwheel::MutexLock lock(mu_);
    while (!release_.empty() && release_.begin()->first <= release_by_ms)
      ReleaseLocked(release_.begin()->second);
    taken.swap(pending_);
  }
  std::vector<TriggerResult> batch(std::make_move_iterator(taken.begin()),
                                   std::make_move_iterator(taken.end()));
  std::size_t done = 0;
  while (done < batch.size()) {
    const auto n = std::min(settings_.max_batch, batch.size() - done);
    if (!WriteBatch(std::span<const TriggerResult>(batch).subspan(done, n))) {
      // Put back what was not written, ahead of anything recorded meanwhile.
      cronwheel::MutexLock lock(mu_);
      pending_.insert(pending_.begin(),
                      std::make_move_iterator(batch.begin() + static_cast<std::ptrdiff_t>(done)),
                      std::make_move_iterator(batch.end()));
      return false;
    }
    done += n;
  }
  return true;
}

bool TriggerResultWriter::WriteBatch(std::span<const TriggerResult> batch) {
  try {
    WithConnection(pool_, [&](pqxx::connection& conn) {
      pqxx::work tx(conn);
      tx.exec(fmt::format("SET LOCAL lock_timeout = {}", settings_.lock_wait.count()));
      fire_log::RecordTriggerResults(tx, batch);
      tx.commit();
    });
    failures_.Success();
    return true;
  } catch (const std::exception& e) {
    if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e);
        sql && sql->sqlstate() == kLockNotAvailable) {
      ++gave_way_;  // a callback holds some of these rows: written again at the next flush
      return false;
    }
    if (const auto n = failures_.Failure(clock_.SteadyNow())) {
      spdlog::error("writing {} trigger result(s) failed ({} time(s) in a row), will retry: {}", batch.size(),
                    *n, e.what());
    }
    return false;
  }
}

}  // namespace cronwheel::admin
