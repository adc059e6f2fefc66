#include "admin/log_writer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "pg_util.hpp"

namespace cronwheel::admin {

PgLogWriter::PgLogWriter(Settings settings, ringwheel::Clock& clock, PgPool& pool)
    : settings_(settings), clock_(clock), pool_(pool) {
  thread_ = std::jthread([this](const std::stop_token& st) { Loop(st); });
}

PgLogWriter::~PgLogWriter() {
  Stop();
}

void PgLogWriter::Stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
    Flush();
  }
}

void PgLogWriter::Record(TriggerResult result) {
  std::lock_guard lock(mu_);
  if (pending_.size() >= settings_.max_pending) {
    spdlog::error(
        "trigger results are not being written (database unavailable?): dropping the result of fire {}",
        pending_.front().log_id);
    pending_.erase(pending_.begin());
  }
  pending_.push_back(std::move(result));
}

std::size_t PgLogWriter::pending() const {
  std::lock_guard lock(mu_);
  return pending_.size();
}

void PgLogWriter::Loop(const std::stop_token& stop) {
  while (clock_.WaitFor(settings_.flush_interval, stop))
    Flush();
}

bool PgLogWriter::Flush() {
  std::lock_guard flush_lock(flush_mu_);
  std::vector<TriggerResult> batch;
  {
    std::lock_guard lock(mu_);
    batch.swap(pending_);
  }
  std::size_t done = 0;
  while (done < batch.size()) {
    const auto n = std::min(settings_.max_batch, batch.size() - done);
    std::vector<TriggerResult> part(
        std::make_move_iterator(batch.begin() + static_cast<std::ptrdiff_t>(done)),
        std::make_move_iterator(batch.begin() + static_cast<std::ptrdiff_t>(done + n)));
    if (!WriteBatch(part)) {
      // Put back what was not written, ahead of anything recorded meanwhile.
      std::lock_guard lock(mu_);
      std::vector<TriggerResult> rest(std::make_move_iterator(part.begin()),
                                      std::make_move_iterator(part.end()));
      for (auto i = done + n; i < batch.size(); ++i)
        rest.push_back(std::move(batch[i]));
      std::move(pending_.begin(), pending_.end(), std::back_inserter(rest));
      pending_.swap(rest);
      return false;
    }
    done += n;
  }
  return true;
}

bool PgLogWriter::WriteBatch(const std::vector<TriggerResult>& batch) {
  // In id order: every batched writer of job_log (this one, callbacks) locks rows in the same order, so
  // they never deadlock (a deadlock would stall both for deadlock_timeout).
  std::vector<const TriggerResult*> sorted;
  sorted.reserve(batch.size());
  for (const auto& r : batch)
    sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->log_id < b->log_id; });
  nlohmann::json rows = nlohmann::json::array();
  for (const auto* p : sorted) {
    const auto& r = *p;
    rows.push_back({{"i", r.log_id},
                    {"t", r.trigger_ms},
                    {"c", r.trigger_code},
                    {"m", r.trigger_msg},
                    {"a", r.executor_address},
                    {"h", r.executor_handler},
                    {"p", r.executor_param},
                    {"si", r.shard_index},
                    {"st", r.shard_total},
                    {"r", r.retry_count}});
  }
  try {
    WithConnection(pool_, [&](pqxx::connection& conn) {
      pqxx::work tx(conn);
      tx.exec_params(
          "UPDATE job_log l SET trigger_ms = v.t, trigger_code = v.c,"
          " trigger_msg = CASE WHEN l.trigger_msg = '' THEN v.m ELSE l.trigger_msg || E'\\n' || v.m END,"
          " executor_address = v.a, executor_handler = v.h, executor_param = v.p,"
          " shard_index = v.si, shard_total = v.st, retry_count = v.r"
          " FROM json_to_recordset($1::json) AS v(i bigint, t bigint, c int, m text, a text, h text, p text,"
          " si int, st int, r int)"
          " WHERE l.id = v.i",
          rows.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      tx.commit();
    });
    failures_ = 0;
    return true;
  } catch (const std::exception& e) {
    if (failures_++ % 100 == 0)
      spdlog::error("writing {} trigger result(s) failed, will retry: {}", batch.size(), e.what());
    return false;
  }
}

}  // namespace cronwheel::admin
