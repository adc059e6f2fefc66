#include "admin/dispatch/ahead_watch.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <unordered_set>

#include "cronwheel/mutex.hpp"
#include "xxljob/protocol.hpp"
#include "xxljob/vocabulary.hpp"

namespace cronwheel::admin {

AheadWatch::AheadWatch(Settings settings, ringwheel::Clock& clock, ExecutorClient& client, After after,
                       Lost lost, Withdrawn withdrawn)
    : settings_(settings),
      clock_(clock),
      client_(client),
      after_(std::move(after)),
      lost_(std::move(lost)),
      withdrawn_(std::move(withdrawn)) {}

void AheadWatch::Held(const Fire& fire, const std::string& address, const std::string& token) {
  const auto check_at = fire.scheduled_ms - settings_.check_before.count();
  const auto delay = check_at - clock_.NowMs();
  if (delay <= 0) return;  // too close to its instant for an answer to prove anything
  Key key{fire.scheduled_ms, address};
  {
    cronwheel::MutexLock lock(mu_);
    auto [it, first] = pending_.try_emplace(key);
    if (first) it->second.token = token;
    it->second.fires.push_back(fire);
    if (!first) return;
  }
  after_([this, key] { Check(key); }, std::chrono::milliseconds(delay));
}

void AheadWatch::Check(const Key& key) {
  Batch batch;
  {
    cronwheel::MutexLock lock(mu_);
    const auto it = pending_.find(key);
    if (it == pending_.end()) return;
    batch = std::move(it->second);
    pending_.erase(it);
  }
  CancelWithdrawn(key, batch);
  for (std::size_t from = 0; from < batch.fires.size(); from += xxljob::kMaxCancelLogIds) {
    const auto to = std::min(batch.fires.size(), from + xxljob::kMaxCancelLogIds);
    std::vector<Fire> fires(std::make_move_iterator(batch.fires.begin() + static_cast<std::ptrdiff_t>(from)),
                            std::make_move_iterator(batch.fires.begin() + static_cast<std::ptrdiff_t>(to)));
    xxljob::CancelParam param;
    param.log_ids.reserve(fires.size());
    for (const auto& f : fires)
      param.log_ids.push_back(f.log_id);
    {
      cronwheel::MutexLock lock(mu_);
      ++stats_.checks;
    }
    client_.AcceptedAsync(
        key.second, batch.token, param,
        [this, key, fires = std::move(fires)](const ExecutorClient::RunReply& reply) mutable {
          Answered(key, std::move(fires), reply);
        });
  }
}

void AheadWatch::CancelWithdrawn(const Key& key, Batch& batch) {
  if (!withdrawn_) return;
  std::vector<std::int64_t> gone;
  try {
    gone = withdrawn_(key.first);
  } catch (const std::exception& e) {
    spdlog::warn("could not read which fires for {} were withdrawn (checked as held): {}", key.first,
                 e.what());
    return;
  }
  if (gone.empty()) return;
  std::sort(gone.begin(), gone.end());
  // One request: a batch holds one address's fires for one instant, far below kMaxCancelLogIds.
  xxljob::CancelParam param;
  std::erase_if(batch.fires, [&](const Fire& f) {
    if (!std::binary_search(gone.begin(), gone.end(), f.log_id)) return false;
    param.log_ids.push_back(f.log_id);
    return true;
  });
  if (param.log_ids.empty()) return;
  {
    cronwheel::MutexLock lock(mu_);
    stats_.withdrawn += param.log_ids.size();
  }
  const auto answer = client_.Cancel(key.second, batch.token, param);
  if (answer.code == xxljob::kCodeSuccess) {
    spdlog::info(
        "{} fire(s) for {} withdrawn on their way to {} (their job was stopped or changed): "
        "cancelled there",
        param.log_ids.size(), key.first, key.second);
  } else {
    spdlog::warn("{} fire(s) for {} withdrawn on their way to {} could not be cancelled there ({}): they run",
                 param.log_ids.size(), key.first, key.second, answer.msg.value_or(""));
  }
}

void AheadWatch::Answered(const Key& key, std::vector<Fire> fires, const ExecutorClient::RunReply& reply) {
  if (stopped_) return;
  const auto& [instant_ms, address] = key;
  const auto now = clock_.NowMs();
  const bool in_time = now < instant_ms;
  std::vector<Fire> lost;
  std::string why;
  bool refused = false;
  if (in_time && reply.delivery == ExecutorClient::Delivery::kNotSent && reply.refused) {
    refused = true;
    lost = std::move(fires);
    why = fmt::format(
        "the executor at {} that held it refused a connection {} ms before its instant (it is "
        "gone): routed again",
        address, instant_ms - now);
  } else if (const auto& env = reply.envelope;
             in_time && reply.delivery == ExecutorClient::Delivery::kAnswered &&
             env.code == xxljob::kCodeSuccess && env.content.is_object() &&
             env.content.contains(xxljob::kAcceptedField) && env.content[xxljob::kAcceptedField].is_array()) {
    std::unordered_set<std::int64_t> accepted;
    for (const auto& id : env.content[xxljob::kAcceptedField]) {
      if (id.is_number_integer()) accepted.insert(id.get<std::int64_t>());
    }
    for (auto& f : fires) {
      if (!accepted.contains(f.log_id)) lost.push_back(std::move(f));
    }
    why = fmt::format(
        "the executor at {} that held it no longer had it {} ms before its instant (it "
        "restarted): routed again",
        address, instant_ms - now);
  } else {
    cronwheel::MutexLock lock(mu_);
    ++stats_.unanswered;
    spdlog::debug("the check of {} fire(s) held by {} for {} proved nothing ({}): left to their callbacks",
                  fires.size(), address, instant_ms,
                  in_time ? reply.envelope.msg.value_or("no message") : "answered at or after the instant");
    return;
  }
  if (lost.empty()) return;
  {
    cronwheel::MutexLock lock(mu_);
    stats_.lost += lost.size();
  }
  spdlog::warn("{} fire(s) for {} held by {} were lost there ({}); routing them again", lost.size(),
               instant_ms, address, refused ? "connection refused" : "not accepted there any more");
  for (auto& f : lost)
    lost_(std::move(f), address, refused, why);
}

void AheadWatch::Stop() {
  stopped_ = true;
}

AheadWatch::Stats AheadWatch::stats() const {
  cronwheel::MutexLock lock(mu_);
  return stats_;
}

}  // namespace cronwheel::admin
