#pragma once
// The log ids an executor has accepted, for JobDispatcher (job_dispatcher.hpp): those active (held, queued
// or running) and those finished within the redelivery window. An admin may send a fire again after a crash
// or a lost answer; a log id still active is refused as a repeat trigger (XXL-JOB's "repeat trigger job"),
// and one finished within the window is answered 200 without running again (cronwheel's improvement,
// docs/xxl-job-protocol.md §15). A finished id is forgotten `window` after it finished, or earlier when more
// than `capacity` finished ids are remembered (oldest first), so memory stays bounded at any rate.
//
// Time: steady instants passed in by the caller (its Clock), never read here. Thread-safety: none (the
// dispatcher's mutex). Complexity: O(1) amortised per call; memory O(active + min(capacity, finished within
// the window)).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <utility>

#include "ringwheel/clock.hpp"

namespace cronwheel::executor {

class RedeliveryWindow {
 public:
  enum class Seen {
    kNever,     // not accepted here, or forgotten
    kActive,    // held, queued or running: a repeat trigger
    kFinished,  // reported within the window: a redelivery, not run again
  };

  RedeliveryWindow(std::chrono::steady_clock::duration window, std::size_t capacity)
      : window_(window), capacity_(capacity) {}

  // What is known of `log_id` at `now` (forgets what expired first).
  Seen Find(std::int64_t log_id, ringwheel::SteadyTime now);
  // Whether `log_id` is active or finished and not yet forgotten (no pruning: a read-only answer).
  [[nodiscard]] bool Knows(std::int64_t log_id) const { return ids_.contains(log_id); }
  // `log_id` was accepted (held or queued).
  void Activate(std::int64_t log_id) { ids_[log_id] = State{}; }
  // `log_id` was reported (run, killed, refused at its instant, cancelled) at `now`: remembered until
  // now + window, or until `capacity` later finishes push it out.
  void Finish(std::int64_t log_id, ringwheel::SteadyTime now);
  // Forgets the finished ids whose window has passed at `now`, and the oldest beyond `capacity`.
  void Prune(ringwheel::SteadyTime now);
  // Ids remembered (active and finished).
  [[nodiscard]] std::size_t size() const { return ids_.size(); }

 private:
  struct State {
    bool active = true;
    ringwheel::SteadyTime expires{};
  };
  std::chrono::steady_clock::duration window_;
  std::size_t capacity_;
  std::unordered_map<std::int64_t, State> ids_;
  std::deque<std::pair<ringwheel::SteadyTime, std::int64_t>> finished_;  // in finishing order
};

}  // namespace cronwheel::executor
