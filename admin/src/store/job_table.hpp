#pragma once
// The writes of the job table that the scheduler, the results area and the other tables' owners make, in the
// table's owner (store/pg_job_store.cpp and job_table.cpp, docs/architecture.md "Who writes which table").
// Private to admin/src/store.

#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <span>
#include <string_view>
#include <vector>

#include "admin/model/fire.hpp"
#include "admin/schedule/scheduler_store.hpp"

namespace cronwheel::admin::job_table {

// A scan's next times (and stops), in job_schedule, for rows still at the next time the scan read: a
// concurrent edit, start or stop (which writes job_schedule too) wins. A stop also sets job.enabled false and
// its stop_reason.
void Advance(pqxx::transaction_base& tx, std::span<const JobAdvance> advances);
// The same for the rows of `table` (a constant, never user input) that keep their schedule in their own
// columns (next_fire_ms, last_fire_ms, enabled, stop_reason): "workflow".
void AdvanceSchedules(pqxx::transaction_base& tx, std::string_view table,
                      std::span<const JobAdvance> advances);

// Sets job `job_id`'s place in its schedule (table job_schedule): `next_fire_ms` (0: stopped), and
// `last_fire_ms` when given (else it is kept). Writes the row when the job has none yet (its creation).
void SetSchedule(pqxx::transaction_base& tx, int job_id, std::int64_t next_fire_ms,
                 std::optional<std::int64_t> last_fire_ms);
// Moves job `job_id`'s next fire back to `from_ms` when it is later (a calendar edit withdrew the fires from
// there on: the walk starts again at the earliest of them, PgCalendarStore).
void RewindSchedule(pqxx::transaction_base& tx, int job_id, std::int64_t from_ms);
// Locks job `job_id`'s schedule partition row and then its job_schedule row (FOR UPDATE), before an edit,
// start, stop or delete reads or writes its job row: the order a scan takes them in (partition, then
// job_schedule, then job for a stop), so they wait for each other instead of deadlocking. The partition is
// what makes a stop or a change win every race with a scan (issue 48): a scan holds its partitions from
// before it reads the due jobs until it commits the fires it wrote, so either the edit waits for that commit
// and then withdraws those fires (fire_log::WithdrawUnsent sees them), or the scan, meeting the partition
// locked, skips it (SKIP LOCKED) and reads the edited job at its next pass. Locking job_schedule alone left a
// window: a stop committed between the scan's read and its Advance was not blocked, and the fires the scan
// had inserted stayed and were sent (docs/architecture.md, "Stops and changes against the scan"; the fires
// already claimed for their second are named for their admin by fire_log::WithdrawUnsent).
void LockSchedule(pqxx::transaction_base& tx, int job_id);
// The partition row alone, of a job or a workflow `id` (a workflow is scanned with the partition its id
// falls in, as a job is): what an edit of a workflow takes before its workflow row, for the same reason.
void LockSchedulePartition(pqxx::transaction_base& tx, int id);
// LockSchedule for several jobs (an edit of a calendar they follow): every partition first, in partition
// order, then the job_schedule rows in job order, so that two such edits wait for each other instead of
// deadlocking, and a single-job edit (one partition, then its row) cannot close a cycle with them.
void LockSchedules(pqxx::transaction_base& tx, std::span<const int> job_ids);

// The FIX_DELAY jobs among `job_ids` that wait for their run to finish (next_fire_ms = kAwaitingCompletion)
// get their next fire: the finish (`now_ms`) plus their delay (schedule/next_fire.hpp). A callback and a
// failed trigger (which brings no callback) both end a run. Called with every batch of results, so it
// starts from job_schedule's due index (the jobs awaiting completion, usually none) rather than from the job
// rows of `job_ids`: about 0.03 ms against 0.6-2 ms for 125 jobs (docs/performance.md, "Four costs found by
// profiling").
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

// Retention (results/report_monitor.hpp): deletes at most `limit` run-once requests due before `before_ms`
// that were fired or cancelled (a waiting one stays: the scan still takes it), oldest first. Returns how
// many.
std::int64_t DeleteEndedRunOnce(pqxx::transaction_base& tx, std::int64_t before_ms, int limit);

}  // namespace cronwheel::admin::job_table
