#include "admin/dispatch/run_batcher.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cronwheel/mutex.hpp"

namespace cronwheel::admin {

RunBatcher::RunBatcher(Settings settings, Post post) : settings_(settings), post_(std::move(post)) {
  settings_.max_in_flight = std::max<std::size_t>(settings_.max_in_flight, 1);
  settings_.max_batch = std::clamp<std::size_t>(settings_.max_batch, 1, xxljob::kMaxBatchRuns);
}

void RunBatcher::Add(const std::string& address, const std::string& token, const xxljob::TriggerParam& param,
                     std::int64_t send_by_ms, ExecutorClient::RunDone done) {
  Key key{address, token};
  std::vector<Run> batch;
  {
    cronwheel::MutexLock lock(mu_);
    auto& q = queues_[key];
    q.waiting.push_back(Run{param, send_by_ms, std::move(done)});
    batch = TakeBatchLocked(key, q);
  }
  if (!batch.empty()) Send(key, std::move(batch));
}

std::vector<RunBatcher::Run> RunBatcher::TakeBatchLocked(const Key& key, Queue& q) {
  std::vector<Run> batch;
  if (q.in_flight >= settings_.max_in_flight || q.waiting.empty()) {
    if (q.in_flight == 0 && q.waiting.empty()) queues_.erase(key);
    return batch;
  }
  const auto n = std::min(q.waiting.size(), settings_.max_batch);
  batch.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    batch.push_back(std::move(q.waiting.front()));
    q.waiting.pop_front();
  }
  ++q.in_flight;
  ++stats_.batches;
  stats_.runs += n;
  return batch;
}

void RunBatcher::Send(const Key& key, std::vector<Run> batch) {
  std::vector<xxljob::TriggerParam> params;
  params.reserve(batch.size());
  std::int64_t send_by_ms = 0;
  for (const auto& r : batch) {
    params.push_back(r.param);
    if (r.send_by_ms > 0 && (send_by_ms == 0 || r.send_by_ms < send_by_ms)) send_by_ms = r.send_by_ms;
  }
  auto body = xxljob::ToJson(std::span<const xxljob::TriggerParam>(params)).dump();
  post_(key.first, key.second, std::move(body), send_by_ms,
        [this, key, batch = std::move(batch)](const ExecutorClient::RunReply& reply) mutable {
          Answered(key, std::move(batch), reply);
        });
}

void RunBatcher::Answered(const Key& key, std::vector<Run> batch, const ExecutorClient::RunReply& reply) {
  const auto& env = reply.envelope;
  const nlohmann::json* answers = nullptr;
  if (reply.delivery == ExecutorClient::Delivery::kAnswered && env.code == xxljob::kCodeSuccess &&
      env.content.is_object()) {
    const auto it = env.content.find(xxljob::kBatchAnswersField);
    if (it != env.content.end() && it->is_array() && it->size() == batch.size()) answers = &*it;
  }
  for (std::size_t i = 0; i < batch.size(); ++i) {
    ExecutorClient::RunReply own;
    if (answers != nullptr) {
      const auto& a = (*answers)[i];
      const auto c = a.is_object() ? a.find("code") : a.end();
      const auto m = a.is_object() ? a.find("msg") : a.end();
      const int code = c != a.end() && c->is_number_integer() ? c->get<int>() : 0;
      const std::string msg = m != a.end() && m->is_string() ? m->get<std::string>() : std::string();
      own.envelope = code != 0 ? xxljob::Envelope{code, msg, nullptr}
                               : xxljob::Envelope::Fail(fmt::format(
                                     "the executor's answer to run {} of a batch was not understood", i));
    } else if (reply.delivery == ExecutorClient::Delivery::kAnswered && env.code == xxljob::kCodeSuccess) {
      own.envelope = xxljob::Envelope::Fail(
          fmt::format("the executor answered a batch of {} runs without an answer for each", batch.size()));
    } else {
      own = reply;  // the batch failed as a whole: so did each run in it
    }
    const auto done = std::move(batch[i].done);
    if (done) done(std::move(own));
  }
  std::vector<Run> next;
  {
    cronwheel::MutexLock lock(mu_);
    const auto it = queues_.find(key);
    if (it != queues_.end()) {
      --it->second.in_flight;
      next = TakeBatchLocked(key, it->second);
    }
  }
  if (!next.empty()) Send(key, std::move(next));
}

RunBatcher::Stats RunBatcher::stats() const {
  cronwheel::MutexLock lock(mu_);
  return stats_;
}

}  // namespace cronwheel::admin
