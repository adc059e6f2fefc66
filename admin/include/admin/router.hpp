#pragma once
// Route strategies: which executor address of a group receives a fire (xxl-job-protocol.md §8).
// A Router is asked per fire with the group's ordered address list (never empty) and returns an address
// or a failure, plus a message for the fire's trigger_msg explaining what was tried and why.
//
// Thread-safety: Route() is called concurrently from the trigger pools; implementations with state
// (ROUND, LFU, LRU) guard it.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "admin/model.hpp"

namespace cronwheel::admin {

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

}  // namespace cronwheel::admin
