#pragma once
// The writes of the job table that the scheduler and the results area make, in the table's owner
// (store/job_repository.cpp, docs/architecture.md "Who writes which table"). Private to admin/src/store.

#include <cstdint>
#include <pqxx/pqxx>
#include <span>

#include "admin/schedule/scheduler_store.hpp"

namespace cronwheel::admin::job_table {

// A scan's next times (and stops), for rows still enabled and still at the next time the scan read: a
// concurrent edit or stop wins.
void Advance(pqxx::transaction_base& tx, std::span<const JobAdvance> advances);

// The FIX_DELAY jobs among `job_ids` that wait for their run to finish (next_fire_ms = kAwaitingCompletion)
// get their next fire: the finish (`now_ms`) plus their delay (schedule/next_fire.hpp). A callback and a
// failed trigger (which brings no callback) both end a run.
void ResumeFixDelay(pqxx::transaction_base& tx, std::span<const int> job_ids, std::int64_t now_ms);

}  // namespace cronwheel::admin::job_table
