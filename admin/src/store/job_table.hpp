#pragma once
// The writes of the job table that the scheduler and the results area make, in the table's owner
// (store/job_repository.cpp, docs/architecture.md "Who writes which table"). Private to admin/src/store.

#include <cstdint>
#include <pqxx/pqxx>
#include <span>
#include <string_view>
#include <vector>

#include "admin/model/fire.hpp"
#include "admin/schedule/scheduler_store.hpp"

namespace cronwheel::admin::job_table {

// A scan's next times (and stops), for rows still enabled and still at the next time the scan read: a
// concurrent edit or stop wins.
void Advance(pqxx::transaction_base& tx, std::span<const JobAdvance> advances);
// The same for the rows of `table`, "job" or "workflow" (a constant, never user input): both keep a schedule
// in the same columns (next_fire_ms, last_fire_ms, enabled, stop_reason).
void AdvanceSchedules(pqxx::transaction_base& tx, std::string_view table,
                      std::span<const JobAdvance> advances);

// The FIX_DELAY jobs among `job_ids` that wait for their run to finish (next_fire_ms = kAwaitingCompletion)
// get their next fire: the finish (`now_ms`) plus their delay (schedule/next_fire.hpp). A callback and a
// failed trigger (which brings no callback) both end a run.
void ResumeFixDelay(pqxx::transaction_base& tx, std::span<const int> job_ids, std::int64_t now_ms);

// Takes the waiting run-once requests (table run_once) due at or before `horizon_ms` whose jobs are in the
// schedule partitions `held` (job_id % `total`), at most `limit`, earliest first: each gets the id of the
// fire it becomes (job_log's sequence) and is marked as fired with it. The caller writes those fires in the
// same transaction (fire_log::InsertRunOnce). A request being cancelled meanwhile is skipped, never waited
// for.
// Removes alert channel `channel_id` from every job that names it (the channel is being deleted, in `tx`).
void RemoveAlertChannel(pqxx::transaction_base& tx, int channel_id);

std::vector<DueRunOnce> TakeDueRunOnce(pqxx::transaction_base& tx, std::int64_t horizon_ms, int total,
                                       std::span<const int> held, int limit);

}  // namespace cronwheel::admin::job_table
