#pragma once
// Every shape a fire takes in the admin, in the order of its life (docs/architecture.md, "The life of one
// fire"), and the conversions between them. A fire is one job_log row; these are views of it at each step:
//
//   PlannedFire    the scan planner decided to write it (schedule/scan_planner.hpp)
//   DueRunOnce     or the scan took a run-once request due within pre_read (table run_once), its id chosen
//   CommittedFire  the scan transaction wrote it (id known) and it goes to the time ring or is sent at once
//   Fire           on its way to an executor: what the trigger needs to send it
//   ClaimedFire    a pending row this admin claimed for sending, or re-owned from a dead admin: enough to
//                  decide whether it is still on time (misfire strategy) and to send it
//   TriggerResult  the outcome of sending it, recorded on the row (trigger_* columns)
//
// Instants are epoch milliseconds (`*_ms`). Plain values; no thread-safety concerns.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "admin/model/model.hpp"

namespace cronwheel::admin {

// One job_log row the scan is to write.
struct PlannedFire {
  int job_id = 0;
  int group_id = 0;
  std::int64_t scheduled_ms = 0;  // the instant the schedule asked for
  TriggerType type = TriggerType::kCron;
  bool skipped = false;  // a DO_NOTHING misfire: recorded, never sent
  std::string note;      // for trigger_msg, e.g. "3 fire(s) from ... missed"
};

// A run-once request the scan took (job_table::TakeDueRunOnce): the job_log id it is to be written with
// (allocated from job_log's sequence as it was taken, so the request records its fire in the same statement).
struct DueRunOnce {
  std::int64_t run_id = 0;
  std::int64_t log_id = 0;
  int job_id = 0;
  std::int64_t fire_at_ms = 0;
  std::optional<std::string> param;  // nullopt = the job's own
  std::string created_by;
};

// A row the scan wrote.
struct CommittedFire {
  std::int64_t log_id = 0;
  int job_id = 0;
  std::int64_t scheduled_ms = 0;
  TriggerType type = TriggerType::kCron;
  bool skipped = false;
  std::optional<std::string> param;  // the row's executor_param when it overrides the job's (a run once)
};

// A fire on its way to an executor: a job_log row id plus what the trigger needs to send it.
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
  // Attempts that could not reach an executor (TriggerService sends such a fire again within the misfire
  // threshold).
  int unsent_attempts = 0;
  // Lines for the trigger message, one per earlier send of this fire: what each attempt met, why a fire sent
  // ahead was routed again or sent again to replace a held one.
  std::string trigger_notes;
  // Handed on ahead of its instant (Scheduler::Settings::run_ahead) but routed to an executor that cannot
  // take it ahead: the address chosen then, used again at the instant while the group still has it (so a
  // route strategy with state, ROUND or LRU, is not advanced twice for one fire).
  std::optional<std::string> routed_address;
  // Sent ahead already, to `address`, which holds it: this send replaces the held fire with the job as it is
  // now (its /run carries replaceHeld). The job changed within the lead (RouteContext::ReplaceSentAhead).
  bool replaces_held = false;
  // The stamps of this node's claims of this fire whose commit outcome was unknown (Scheduler, "Commits
  // whose outcome is unknown"): the next claim releases a row still marked with one of them, then claims it.
  std::vector<std::int64_t> doubtful_claims;
};

// A fire sent to an executor ahead of its instant (docs/architecture.md, "Ahead-of-time dispatch") whose
// instant has not come: the executor holds it. Where it went, so that it can be withdrawn there.
struct SentAheadFire {
  std::int64_t log_id = 0;
  std::string address;  // the executor holding it
  std::int64_t scheduled_ms = 0;
  int shard_index = 0;
  int shard_total = 1;
};

// A pending row this node has claimed (for sending) or re-owned (from a dead node).
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
  // Not claimed: the claim found its job at its concurrency limit (Job::concurrency_policy) and recorded
  // the row SKIPPED; this is the job's fire that was still running. 0 = claimed.
  std::int64_t held_by_log_id = 0;
};

// The outcome of sending one fire (XXL-JOB's trigger_* columns, docs/xxl-job-protocol.md §7 step 4f).
struct TriggerResult {
  std::int64_t log_id = 0;
  std::int64_t scheduled_ms = 0;  // the fire's instant (0 = not known); for the fire-lag metric
  TriggerType type = TriggerType::kCron;
  std::int64_t trigger_ms = 0;
  int trigger_code = 0;     // 200 accepted by the executor, else failed
  std::string trigger_msg;  // appended to what the row already says
  std::string executor_address;
  std::string executor_handler;
  std::string executor_param;
  int shard_index = 0;
  int shard_total = 1;
  int retry_count = 0;
  // Accepted ahead of its instant (`scheduled_ms`): the executor holds it until then. Its callback can
  // carry this result to the row (TriggerResultWriter, "kept back for the callback").
  bool sent_ahead = false;
};

// The Fire a committed scan row becomes (sent at once, or through the time ring).
Fire FireFromCommitted(const CommittedFire& c);

// The Fire a re-owned row becomes: a CRON or MISFIRE fire takes the job's param and retry count when it is
// sent; any other type carries the row's own (manual param, retries left). `late_recovered` is set.
Fire FireFromRecovered(ClaimedFire c);

}  // namespace cronwheel::admin
