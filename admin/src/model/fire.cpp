#include "admin/model/fire.hpp"

#include <utility>

namespace cronwheel::admin {

Fire FireFromCommitted(const CommittedFire& c) {
  return Fire{.log_id = c.log_id,
              .job_id = c.job_id,
              .scheduled_ms = c.scheduled_ms,
              .type = c.type,
              .param = c.param};
}

Fire FireFromRecovered(ClaimedFire c) {
  Fire f{.log_id = c.log_id, .job_id = c.job_id, .scheduled_ms = c.scheduled_ms, .type = c.type};
  if (c.type != TriggerType::kCron && c.type != TriggerType::kMisfire) {
    f.param = std::move(c.param);
    f.retry_count = c.retry_count;
  }
  f.shard_index = c.shard_index;
  f.shard_total = c.shard_total;
  f.late_recovered = true;
  return f;
}

}  // namespace cronwheel::admin
