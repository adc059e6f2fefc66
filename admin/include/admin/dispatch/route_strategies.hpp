#pragma once
// The ten route strategies of XXL-JOB (docs/xxl-job-protocol.md §8), with its semantics so a job lands where
// it did under XXL-JOB, and the set that owns one router per strategy for the life of the admin.
//
//   FIRST / LAST            first / last address of the sorted list
//   RANDOM                  uniform
//   ROUND                   a counter per job, started at random(0..99), reset past 1,000,000; address =
//                           list[count % size]; all counters cleared every 24 h
//   CONSISTENT_HASH         100 virtual nodes per address keyed "SHARD-<address>-NODE-<i>"; hash = MD5 bytes
//                           0-3 read little-endian as an unsigned 32-bit value (later collisions overwrite
//                           earlier ones); the job is hashed as its decimal id; the first node >= the job's
//                           hash, wrapping to the smallest
//   LEAST_FREQUENTLY_USED   per job, address -> uses; a new address starts at random(0..size-1), counts past
//                           1,000,000 are re-seeded; the least used wins (ties: list order) and is counted
//   LEAST_RECENTLY_USED     per job, addresses in access order; new ones join at the end, gone ones leave;
//                           the eldest wins and moves to the end
//   FAILOVER                the first address whose /beat answers code 200
//   BUSYOVER                the first address whose /idleBeat answers code 200 (not running, nothing queued)
//   SHARDING_BROADCAST      not a router: the trigger sends one fire per address (trigger_service.cpp); the
//                           set returns FIRST for it
// As in XXL-JOB the state of ROUND, LFU and LRU lives in each admin's memory (§15 item 6): with several
// admins, round-robin is per admin, not global.
//
// Thread-safety: every router is safe to call concurrently (stateful ones hold a mutex).

#include <cstdint>
#include <list>
#include <map>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "admin/dispatch/executor_client.hpp"
#include "admin/model/model.hpp"
#include "cronwheel/mutex.hpp"

namespace cronwheel::admin {

// A route strategy is asked per fire with the group's ordered address list (never empty) and returns an
// address or a failure, plus a message for the fire's trigger_msg explaining what was tried and why.
struct RouteResult {
  std::optional<std::string> address;  // nullopt: no address could be chosen
  std::string message;                 // what was tried and why (may be empty)
};

struct RouteRequest {
  int job_id = 0;
  const std::vector<std::string>& addresses;  // sorted, non-empty
  const std::string& token;                   // for strategies that probe executors (FAILOVER, BUSYOVER)
  std::int64_t now_ms = 0;                    // for strategies whose state expires (ROUND, LFU, LRU)
};

class Router {
 public:
  virtual ~Router() = default;
  virtual RouteResult Route(const RouteRequest& request) = 0;

 protected:
  Router() = default;
  Router(const Router&) = default;
  Router& operator=(const Router&) = default;
};

// FIRST: the first address of the list (XXL-JOB ExecutorRouteFirst).
class FirstRouter final : public Router {
 public:
  RouteResult Route(const RouteRequest& request) override { return {request.addresses.front(), ""}; }
};

// The unsigned 32-bit hash XXL-JOB's consistent hash uses: MD5 of the UTF-8 key, bytes 0-3 little-endian.
std::uint32_t XxlHash(std::string_view key);

class LastRouter final : public Router {
 public:
  RouteResult Route(const RouteRequest& r) override { return {r.addresses.back(), ""}; }
};

class RandomRouter final : public Router {
 public:
  RouteResult Route(const RouteRequest& r) override;

 private:
  cronwheel::Mutex mu_;
  std::mt19937_64 rng_ ABSL_GUARDED_BY(mu_){std::random_device{}()};
};

// Base of the routers whose per-job state is cleared every 24 h.
class ExpiringStateRouter : public Router {
 protected:
  // Clears the state when a day has passed since the last clear. Call with mu_ held.
  bool ExpireLocked(std::int64_t now_ms) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  cronwheel::Mutex mu_;
  std::mt19937_64 rng_ ABSL_GUARDED_BY(mu_){std::random_device{}()};

 private:
  std::int64_t cleared_ms_ ABSL_GUARDED_BY(mu_) = -1;
};

class RoundRouter final : public ExpiringStateRouter {
 public:
  RouteResult Route(const RouteRequest& r) override;

 private:
  std::unordered_map<int, std::int64_t> counters_ ABSL_GUARDED_BY(mu_);
};

class ConsistentHashRouter final : public Router {
 public:
  RouteResult Route(const RouteRequest& r) override;
};

class LeastFrequentlyUsedRouter final : public ExpiringStateRouter {
 public:
  RouteResult Route(const RouteRequest& r) override;

 private:
  std::unordered_map<int, std::map<std::string, std::int64_t>> counts_ ABSL_GUARDED_BY(mu_);
};

class LeastRecentlyUsedRouter final : public ExpiringStateRouter {
 public:
  RouteResult Route(const RouteRequest& r) override;

 private:
  std::unordered_map<int, std::list<std::string>> order_ ABSL_GUARDED_BY(mu_);  // eldest first
};

// FAILOVER (probe = /beat) and BUSYOVER (probe = /idleBeat).
class ProbingRouter final : public Router {
 public:
  enum class Probe { kBeat, kIdleBeat };
  ProbingRouter(ExecutorClient& client, Probe probe) : client_(client), probe_(probe) {}
  RouteResult Route(const RouteRequest& r) override;

 private:
  ExecutorClient& client_;
  Probe probe_;
};

class RouterSet final {
 public:
  explicit RouterSet(ExecutorClient& client);
  Router& For(RouteStrategy strategy);

 private:
  FirstRouter first_;
  LastRouter last_;
  RandomRouter random_;
  RoundRouter round_;
  ConsistentHashRouter hash_;
  LeastFrequentlyUsedRouter lfu_;
  LeastRecentlyUsedRouter lru_;
  ProbingRouter failover_;
  ProbingRouter busyover_;
};

}  // namespace cronwheel::admin
