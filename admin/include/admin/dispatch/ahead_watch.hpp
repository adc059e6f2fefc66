#pragma once
// Finds the fires sent ahead of their instant that their executor lost (docs/architecture.md, "Ahead-of-time
// dispatch", "An executor that dies within the lead").
//
// A fire sent ahead lives in its executor's memory until its instant. If that executor dies or restarts
// within the lead, nothing would start the fire, and without this watch only the lost-result check would
// notice, ten minutes later. So `check_before` ahead of each instant, the watch asks every executor holding
// fires for that instant which of them it has accepted: POST /accepted {"logIds": [...]}, one request per
// executor and instant (cronwheel's extension, docs/xxl-job-protocol.md). A fire is *lost* when
//   * the connection was refused (nothing listens at the address: the process is gone), or
//   * the executor answered without it (a new process at the same address),
// and the answer came before the instant. Then no executor can have started it: a cronwheel-executor starts
// a held fire at runAtMs = instant + its clock's offset + the offset's error, which is never before the
// instant on the admin's clock. Each lost fire goes to `lost`, which routes it again by its job's route
// strategy (TriggerService::RouteAgain); so it runs once, elsewhere or on the new process.
//
// Anything else (no answer in time, a timeout, an answer after the instant, an executor that does not know
// /accepted) proves nothing and changes nothing: the fire's callback or the lost-result check settles it.
// An executor killed after its check and before the instant also loses the fire to that check; the window
// is `check_before` per lead (the default 100 ms against a lead of 1 s).
//
// Thread-safety: Held() from any thread (the executor client's); checks run on the `after` timer's thread and
// their answers on the client's. Memory: one entry per fire held and not yet checked.
// Complexity: Held O(log pending instants and addresses); a check O(fires held at that address for it).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "admin/dispatch/executor_client.hpp"
#include "admin/model/fire.hpp"
#include "cronwheel/mutex.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class AheadWatch final {
 public:
  struct Settings {
    // Each instant's check is sent this long before it (admin's clock). A fire sent ahead later than that
    // is not watched.
    std::chrono::milliseconds check_before{100};
  };
  // Runs `task` once after `delay` (the admin's hashed wheel timer).
  using After = std::function<void(std::function<void()> task, std::chrono::milliseconds delay)>;
  // A fire the executor at `address` lost, before its instant. `refused`: the address refused the
  // connection. `why`: a line for the fire's trigger message.
  using Lost = std::function<void(Fire fire, const std::string& address, bool refused, std::string why)>;
  // The fires of instant `instant_ms` withdrawn after their claim (SchedulerStore::WithdrawnAt): a stop,
  // change or delete of their job committed while they were on their way. May throw (then nothing is
  // withdrawn by this check).
  using Withdrawn = std::function<std::vector<std::int64_t>(std::int64_t instant_ms)>;

  struct Stats {
    std::uint64_t checks = 0;      // /accepted requests sent
    std::uint64_t lost = 0;        // fires handed to `lost`
    std::uint64_t unanswered = 0;  // checks that proved nothing (no answer before the instant, or a refusal
                                   // of the request itself)
    std::uint64_t withdrawn = 0;   // fires withdrawn while on their way, cancelled at their executor
  };

  // `withdrawn` (may be empty): asked at each check. A fire sent ahead whose /run was on its way when a stop
  // of its job committed had no recorded acceptance for the stop's cancel to find, and the stop deleted its
  // row: the check cancels it at the executor holding it (POST /cancel), instead of asking whether it is
  // still there. The question and the cancel run on the timer's thread, and only the cancel when there is
  // something to cancel (after a stop, rare).
  AheadWatch(Settings settings, ringwheel::Clock& clock, ExecutorClient& client, After after, Lost lost,
             Withdrawn withdrawn = {});
  AheadWatch(const AheadWatch&) = delete;
  AheadWatch& operator=(const AheadWatch&) = delete;

  // `fire` was sent ahead to `address` (with `token`) and accepted there: checks it before its instant.
  void Held(const Fire& fire, const std::string& address, const std::string& token);

  [[nodiscard]] Stats stats() const;

  // Shutdown: checks answered from now on change nothing (the admin stops; its peers recover what it owned).
  void Stop();

 private:
  struct Batch {
    std::string token;
    std::vector<Fire> fires;
  };
  using Key = std::pair<std::int64_t, std::string>;  // the instant (epoch ms), the address

  void Check(const Key& key);
  // Takes the fires `withdrawn_` names out of `batch` and cancels them at the key's address.
  void CancelWithdrawn(const Key& key, Batch& batch);
  void Answered(const Key& key, std::vector<Fire> fires, const ExecutorClient::RunReply& reply);

  Settings settings_;
  ringwheel::Clock& clock_;
  ExecutorClient& client_;
  After after_;
  Lost lost_;
  Withdrawn withdrawn_;
  std::atomic<bool> stopped_{false};
  mutable cronwheel::Mutex mu_;  // guards pending_ and stats_
  std::map<Key, Batch> pending_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cronwheel::admin
