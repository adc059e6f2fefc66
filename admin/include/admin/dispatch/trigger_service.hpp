#pragma once
// Sends one fire to an executor (docs/xxl-job-protocol.md §7, the trigger procedure): load the job and its
// group (cached, JobCatalog), take the group's addresses (registry or configured), pick one with the
// job's route strategy, POST /run with the fire's log id and the access token, and record the outcome on
// the fire's row (batched, TriggerRecorder). Every outcome is recorded, failures included, with a
// message saying what happened: the job is gone, no executor is online, the route failed, the executor
// refused or did not answer.
//
// The admin sends only to addresses registered for or configured on the job's group: a caller-given
// address (manual trigger) is used only if it is one of them.
//
// SHARDING_BROADCAST (§7 steps 3 and 4c): one fire becomes one row per address
// (SchedulerStore::CreateShards), shard i going to address i with broadcastIndex/Total = i/n; a re-sent shard
// row (recovered after a crash) goes to address i again, or the first address if the list has shrunk, as
// XXL-JOB does.
//
// A /run that could not reach the executor (ExecutorClient::Delivery::kNotSent: the connection was refused or
// timed out, no connection was free) is sent again, routed afresh (another executor where the route strategy
// picks one), after 100 ms, 200 ms, 400 ms ... (at most 1 s) for as long as it can still arrive within the
// misfire threshold of its instant (`misfire_threshold`, the threshold the scan and the claim use); only then
// is it recorded as a failed trigger, with every attempt in the message. Nothing is recorded meanwhile: the
// row stays claimed by this admin, so a crash leaves it to recovery. A /run that may have reached the
// executor (kUnknown) is never sent again here: it is recorded as failed and the job's retry rules apply.
//
// A draining (or stopping) cronwheel-executor answers /run with code 500 and xxljob::kDrainingMsg: it did
// not run the fire. The fire is then sent again at once, routed afresh, and that address is left out of
// every route for `draining_hold` (renewed by each such answer), which covers the second or so until the
// registry drops the executor (it sends registryRemove when it starts draining) and, for a group with
// configured addresses, which never drop it, the rest of the drain. A fire whose group has no other address
// is recorded as failed, saying so.
//
// Ahead-of-time dispatch (docs/architecture.md): a fire handed on before its instant (the ring's run_ahead)
// goes ahead only to an executor that announced runAt and whose clock, as it measured it at its last
// heartbeat, is within `max_clock_offset` of the admin's (|offset| + error): its /run carries runAtMs = the
// instant on the executor's clock at its latest (instant + offset + error), and the executor starts it then:
// never before the instant, at most twice the measurement's error after it. Any other fire is given back to
// wait for its instant (`defer`, the scheduler's Defer), before routing when no address of the group can take
// it ahead, else with the address its route chose (Fire::routed_address), which it goes to at the instant
// while the group still has it. So an XXL-JOB executor gets every /run at its instant, byte for byte as
// before. Each fire an executor accepted ahead goes to `held` (AheadWatch), which checks before the instant
// that the executor still has it; one it lost comes back through RouteAgain(), which routes it afresh (and,
// when the address refused the connection, leaves that address out of every route for `draining_hold`, as a
// draining one).
//
// Thread-safety: Trigger() is called concurrently from the trigger pools; the outcomes are recorded on the
// executor client's thread.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "admin/dispatch/executor_client.hpp"
#include "admin/dispatch/job_catalog.hpp"
#include "admin/dispatch/route_strategies.hpp"
#include "admin/model/fire.hpp"
#include "admin/schedule/scheduler_store.hpp"
#include "admin/schedule/seams.hpp"
#include "cronwheel/mutex.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class TriggerService final : public FireTrigger {
 public:
  struct Settings {
    std::string node_id;                                // named in trigger messages
    std::string access_token;                           // global token; a group's own token takes precedence
    std::chrono::milliseconds misfire_threshold{5000};  // XXL-JOB: 5 s
    std::chrono::milliseconds draining_hold{30000};     // a draining executor is routed around this long
    std::chrono::milliseconds max_clock_offset{50};     // ahead of time only to executors within this
  };
  // Sends `fire` again after `delay` (the admin's hashed wheel timer, then the trigger pools).
  using ResendLater = std::function<void(Fire fire, std::chrono::milliseconds delay)>;
  // Router for a strategy; must return a router for every strategy.
  using RouterFor = std::function<Router&(RouteStrategy)>;
  // Gives back a fire handed on ahead of its instant that must be sent at it (Scheduler::Defer).
  using DeferToInstant = std::function<void(Fire fire)>;
  // Told of each fire an executor accepted ahead of its instant (AheadWatch::Held).
  using HeldAhead =
      std::function<void(const Fire& fire, const std::string& address, const std::string& token)>;

  // Without `defer`, a fire handed on early is sent at once, as any other.
  TriggerService(Settings settings, ringwheel::Clock& clock, JobCatalog& catalog, ExecutorClient& client,
                 TriggerRecorder& recorder, RouterFor routers, SchedulerStore& store, ResendLater resend,
                 DeferToInstant defer = nullptr, HeldAhead held = nullptr);
  TriggerService(const TriggerService&) = delete;
  TriggerService& operator=(const TriggerService&) = delete;

  // Routes the fire, hands its /run to the executor client and returns; the outcome is recorded when the
  // executor answers (ExecutorClient::RunAsync), then `done` runs.
  void Trigger(const Fire& fire, Done done) override;
  // Loads the jobs of many fires in one query (called once per batch before the pools run them).
  void Prefetch(std::span<const Fire> fires) override;
  // A fire sent ahead that its executor at `address` lost before its instant (AheadWatch::Lost): sent again
  // at once, routed afresh, with `why` in its trigger message. `refused`: that address is routed around for
  // draining_hold.
  void RouteAgain(Fire fire, const std::string& address, bool refused, const std::string& why);

 private:
  // The steps of Trigger (see the .cpp).
  bool ExpandBroadcast(const Fire& fire, const Job& job, const std::vector<std::string>& addresses,
                       TriggerResult& result, Done& done);
  void Answered(const Fire& fire, const Job& job, const JobGroup& group,
                const std::vector<std::string>& addresses, const std::string& address, TriggerResult result,
                std::string msg, const ExecutorClient::RunReply& reply, bool ahead);
  static std::string ShardNote(const Fire& fire);
  std::string Context(const Fire& fire, const Job& job, const JobGroup& group,
                      const std::vector<std::string>& addresses, int retries_left) const;
  std::optional<std::string> ChooseAddress(const Fire& fire, const Job& job, const JobGroup& group,
                                           const std::vector<std::string>& addresses,
                                           const std::string& token, std::string& msg);
  static xxljob::TriggerParam RunParam(const Fire& fire, const Job& job, const TriggerResult& result);
  // A /run not sent (or refused unrun by a draining executor: `at_once`): hands the fire to resend_ when it
  // can still arrive within the misfire threshold.
  bool SendAgainLater(const Fire& fire, const std::string& address, const ExecutorClient::RunReply& reply,
                      bool at_once = false);
  // Draining and vanished executors: RouteAround() marks one for draining_hold (`why`: "draining", ...);
  // RouteAroundMarked() drops the marked ones from `addresses` (and forgets expired marks), naming each in
  // `marked`. O(addresses + marks) under a mutex of its own.
  void RouteAround(const std::string& address, const char* why);
  [[nodiscard]] std::vector<std::string> RouteAroundMarked(std::vector<std::string> addresses,
                                                           std::string& marked);
  // The executor at `address` takes fires ahead of their instant: how far its clock is ahead of the admin's
  // at most (offset + error, ms), else nullopt.
  [[nodiscard]] std::optional<std::int64_t> AheadOffset(const std::string& address);
  // The last instant (epoch ms) at which `fire` may still be sent: its instant plus the misfire threshold.
  [[nodiscard]] std::int64_t SendByMs(const Fire& fire) const;

  Settings settings_;
  ringwheel::Clock& clock_;
  JobCatalog& catalog_;
  ExecutorClient& client_;
  TriggerRecorder& recorder_;
  RouterFor routers_;
  SchedulerStore& store_;  // writes the extra rows of a sharding broadcast
  ResendLater resend_;
  DeferToInstant defer_;
  HeldAhead held_;
  struct Mark {
    std::int64_t until_ms = 0;  // routed around until (epoch ms)
    const char* why = "";
  };
  cronwheel::Mutex marks_mu_;
  // Address -> why and until when it is routed around.
  std::map<std::string, Mark> marks_ ABSL_GUARDED_BY(marks_mu_);
};

}  // namespace cronwheel::admin
