#pragma once
// A fire on its way to an executor: a job_log row id plus what the trigger needs to send it.
#include <cstdint>
#include <optional>
#include <string>

#include "admin/model.hpp"

namespace cronwheel::admin {

struct Fire {
  std::int64_t log_id = 0;
  int job_id = 0;
  std::int64_t scheduled_ms = 0;  // the instant it was due (when it was created, for manual fires)
  TriggerType type = TriggerType::kCron;
  std::optional<std::string> param;    // replaces the job's param (manual, API, retry triggers)
  std::optional<std::string> address;  // send to this address of the group (manual trigger)
  int retry_count = -1;                // retries left after this fire; -1 = the job's retry_count
  int shard_index = 0;
  int shard_total = 1;
  bool late_recovered = false;  // re-owned from a dead admin (for the trigger message)
};

// A pending row this node has claimed (for sending) or re-owned (from a dead node): enough to decide
// whether it is still on time.
struct ClaimedFire {
  std::int64_t log_id = 0;
  int job_id = 0;
  std::int64_t scheduled_ms = 0;
  TriggerType type = TriggerType::kCron;
  MisfireStrategy misfire_strategy = MisfireStrategy::kDoNothing;
  std::string param;  // the row's executor_param: the override of a manual/API/retry fire
  int retry_count = 0;
  int shard_index = 0;
  int shard_total = 1;
};

}  // namespace cronwheel::admin
