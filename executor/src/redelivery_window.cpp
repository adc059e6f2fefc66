#include "redelivery_window.hpp"

namespace cronwheel::executor {

RedeliveryWindow::Seen RedeliveryWindow::Find(std::int64_t log_id, ringwheel::SteadyTime now) {
  Prune(now);
  const auto it = ids_.find(log_id);
  if (it == ids_.end()) return Seen::kNever;
  return it->second.active ? Seen::kActive : Seen::kFinished;
}

void RedeliveryWindow::Finish(std::int64_t log_id, ringwheel::SteadyTime now) {
  const auto expires = now + window_;
  ids_[log_id] = State{false, expires};
  finished_.emplace_back(expires, log_id);
  Prune(now);
}

void RedeliveryWindow::Prune(ringwheel::SteadyTime now) {
  while (!finished_.empty() && (finished_.front().first <= now || finished_.size() > capacity_)) {
    const auto [expires, id] = finished_.front();
    finished_.pop_front();
    // Only the entry this record made: an id finished again later has a later expiry.
    const auto it = ids_.find(id);
    if (it != ids_.end() && !it->second.active && it->second.expires == expires) ids_.erase(it);
  }
}

}  // namespace cronwheel::executor
