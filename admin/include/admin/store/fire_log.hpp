#pragma once
// The one owner of writes to the tables of fires (sql/005_fire_tables.sql): job_log (one row per fire,
// partitioned by day of scheduled_ms, store/log_partitions.hpp), fire_open (the fires not finished),
// fire_alarm (failed fires waiting for retry and alarm), and the fire output archive
// (sql/029_fire_output.sql): fire_output (each ended fire's job log, partitioned as job_log) and
// fire_output_pull (fires whose log the admin is to read from their executor). Every INSERT, UPDATE and
// DELETE of them in the admin is a function here, so the ownership protocol below is enforced in one place.
// Each function runs inside the caller's transaction (they combine these writes with writes to other tables
// atomically: the scan advances the job in the same transaction, a callback triggers child jobs in it, the
// failure monitor writes retries in it).
//
// Life of a fire:
//   InsertPlanned    the scan writes the fire PENDING (job_log) and open (fire_open, owner_node = this
//                    admin), in the scan transaction, before it enters the time ring (a crash after the
//                    commit loses nothing).
//   ClaimForDispatch the owner marks it as being sent (fire_open.dispatch_ms) only while it still owns it and
//                    it has not been accepted: a fire is sent only if the claim returned it, so an admin
//                    wrongly declared dead cannot send what another admin has re-owned.
//   ReOwn            a live admin takes the open, unsent fires of a dead one (FOR UPDATE SKIP LOCKED: two
//                    live admins never take the same one), and a restarted admin takes back its own; a fire
//                    with a trigger result or a callback is never taken (it was delivered).
//   RecordTrigger... the trigger result (trigger_code 200 = RUNNING: still open, now with its executor;
//                    else FAILED: closed and queued in fire_alarm).
//   RecordHandle...  the executor's callback (handle_code) closes it; a failed result is queued in
//                    fire_alarm. A fire that has a result is never sent again. A fire sent ahead has its
//                    trigger result written here too, in the same update, when the callback comes first
//                    (TriggerResultWriter keeps it back for a second after the instant). The same statement
//                    archives the job log the callback carries (fire_output), or queues a pull of it
//                    (fire_output_pull) that ClaimOutputPulls and FinishOutputPulls complete.
// Every update of job_log is by (id, scheduled_ms), which names one partition, and changes no column
// job_log's indexes cover, so it is a HOT update (no index entry written). A batched statement locks rows
// in the order its plan visits them; the two that write the same fires at about the same time, a batch of
// trigger results and a callback, can therefore wait on each other, and the trigger results give way
// (TriggerResultWriter: a bounded lock wait, then the batch again).
//
// Statements are batched: a slice of rows goes as one JSON document through json_to_recordset (libpqxx 6.4
// cannot bind arrays of composite values), never one statement per row.
//
// Thread-safety: stateless functions; the transaction belongs to the calling thread. Errors: pqxx
// exceptions propagate (the caller's transaction is then rolled back).

#include <cstdint>
#include <map>
#include <optional>
#include <pqxx/pqxx>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/fire.hpp"
#include "admin/model/model.hpp"
#include "admin/model/parent_refs.hpp"
#include "admin/model/queries.hpp"
#include "admin/results/result_store.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin::fire_log {

// --- the scheduler (schedule/scheduler.hpp, store/pg_scheduler_store.hpp) ------------------------------

// Writes the planned fires owned by `node_id`; a (job, instant, shard) already written for a CRON or
// MISFIRE fire is not written again (unique key job_log_scheduled_uq). Returns the rows written.
std::vector<CommittedFire> InsertPlanned(pqxx::transaction_base& tx, std::span<const PlannedFire> fires,
                                         std::string_view node_id, std::int64_t now_ms);

// The advisory-lock class of a broadcast fire's fan-in (pg_advisory_xact_lock(class, its id mod 2^31)).
inline constexpr int kFanInLockClass = 0x6669;  // "fi"
// The advisory-lock class of a job's concurrency limit (pg_advisory_xact_lock(class, job id)).
inline constexpr int kConcurrencyLockClass = 0x6363;  // "cc"

// Sets dispatch_ms = now_ms on the rows of `log_ids` that `node_id` still owns and that are pending, not
// skipped and not claimed yet. Returns those rows (with their job's misfire strategy). A job with a
// concurrency limit (job.concurrency_policy FORBID, or max_concurrent > 0) gets at most its limit of fires
// claimed, being sent or running at once across all admins: the rows over it are recorded SKIPPED in this
// transaction (trigger_msg names a running fire; queued in fire_alarm as a misfire is) and returned with
// held_by_log_id set, not claimed. Cost: jobs without a limit pay nothing more; a batch with limited jobs
// pays three more statements, one of them reading fire_open whole (it has no index on job_id, which every
// fire would pay for).
std::vector<ClaimedFire> ClaimForDispatch(pqxx::transaction_base& tx, std::string_view node_id,
                                          std::span<const std::int64_t> log_ids, std::int64_t now_ms);

// Releases the claims `node_id` made of `log_ids` with one of the stamps `claims` (fire_open.dispatch_ms)
// whose commit outcome it could not learn, where no executor has accepted the fire: dispatch_ms back to 0,
// so ClaimForDispatch takes them again (SchedulerStore::ClaimForDispatch, "doubtful_claims"). Returns how
// many it released.
std::size_t ReleaseDoubtfulClaims(pqxx::transaction_base& tx, std::string_view node_id,
                                  std::span<const std::int64_t> log_ids,
                                  std::span<const std::int64_t> claims);

// `node_id`'s open fires that nobody has claimed (dispatch_ms 0) and no executor accepted, with log id above
// `after_log_id`, in log id order, at most `limit` (SchedulerStore::OwnUnclaimed). Reads only.
std::vector<ClaimedFire> OwnUnclaimed(pqxx::transaction_base& tx, std::string_view node_id,
                                      std::int64_t after_log_id, int limit);

// Marks pending rows as skipped misfires (status SKIPPED), appending `note` to trigger_msg.
void MarkSkipped(pqxx::transaction_base& tx, std::span<const std::int64_t> log_ids, std::string_view note);

// SHARDING_BROADCAST: turns the pending row `base_log_id` (shard 0 of 1) into shard 0 of `total` and
// writes shards 1..total-1 as copies owned by node_id and already claimed. Returns the ids by shard index;
// just {base_log_id} when the row was expanded before.
std::vector<std::int64_t> CreateShards(pqxx::transaction_base& tx, std::int64_t base_log_id, int total,
                                       std::string_view node_id, std::int64_t now_ms);

// --- recovery (schedule/node_lease.hpp) ----------------------------------------------------------------

// Whose pending rows ReOwn takes.
enum class Owner {
  kSelf,        // this node's own (a restart with the same node id): waits for row locks
  kDeadNode,    // `owner`'s, a node declared dead: SKIP LOCKED
  kHandedOver,  // rows handed over at shutdown (owner NULL): SKIP LOCKED
};
// Makes `new_owner` the owner of at most `limit` pending rows of `owner`, clearing their claim, and returns
// them. A row with a trigger result or a callback (the executor ran it: a callback can arrive before the
// batched trigger result is written) is never taken: it was delivered, and sending it again would run it
// twice on an executor that does not de-duplicate log ids.
std::vector<ClaimedFire> ReOwn(pqxx::transaction_base& tx, std::string_view new_owner, Owner whose,
                               std::string_view owner, int limit);

// Gives up `node_id`'s pending rows that are not being sent (dispatch_ms 0) plus `log_ids` (taken out of
// its ring): owner NULL, so live nodes pick them up. Returns how many.
std::size_t HandOver(pqxx::transaction_base& tx, std::string_view node_id,
                     std::span<const std::int64_t> log_ids);

// --- a database restored from a backup (docs/operations.md, "Backups that restore") ----------------------

// What CloseAfterRestore closed.
struct RestoreClosure {
  std::size_t unsent = 0;  // open, not accepted by an executor: recorded SKIPPED (queued for a MISFIRE alert)
  std::size_t running = 0;  // accepted, no result: recorded failed, "result unknown", not retried
};
// Closes every open fire whose owner is not alive (no owner, no admin_node row, or no session holding its
// node lock in this database: none does on a freshly restored server, whatever lease its row shows), with a
// note saying the database was restored to a point before its outcome; `now_ms` stamps a running one's end.
// The restored database cannot tell a fire that was sent after its restore point from one that was not, so
// none is sent again: an unsent fire is recorded SKIPPED (the failure monitor raises its MISFIRE alert and
// moves a fixed delay on) and a running one failed without a retry or an alarm (its callback may have gone to
// the admin of before the restore). A live admin's fires are left alone, so running it again changes nothing.
RestoreClosure CloseAfterRestore(pqxx::transaction_base& tx, std::int64_t now_ms);

// --- results (store/trigger_result_writer.hpp, results/callback_service.hpp) -----------------------------

// Writes trigger results (sorted by log id here), appending each message to trigger_msg.
void RecordTriggerResults(pqxx::transaction_base& tx, std::span<const TriggerResult> results);

// A callback's result for one fire.
using HandleResult = ::cronwheel::admin::HandleResult;
struct HandledFire {
  std::int64_t log_id = 0;
  int job_id = 0;
  std::int64_t scheduled_ms = 0;
  int handle_code = 0;
  TriggerType type = TriggerType::kCron;
  std::int64_t start_ms = 0;  // when the executor started it; 0 = not reported
  int shard_total = 1;
  std::int64_t broadcast_log_id = 0;  // a shard of a broadcast: the broadcast's (its shard 0's) id; else 0
  std::int64_t workflow_run_id = 0;   // a workflow node's fire: its run; else 0
  std::string workflow_node;          // and its node's key
};
// Records results (code, message, the executor's start instant) on fires that have none yet (a repeated
// callback changes nothing, XXL-JOB "log repeate callback"), closes them and queues the failed ones for the
// failure monitor. `results` must be sorted by log id. Returns the fires recorded, by log id.
// `triggers`: trigger results of these fires kept back for their callbacks (TriggerResultWriter::TakeHeld),
// written in the same update of each row (two of one fire fold as in RecordTriggerResults); one whose row
// this does not write (a repeated callback, a fire gone) is written as RecordTriggerResults writes it.
std::vector<HandledFire> RecordHandleResults(pqxx::transaction_base& tx,
                                             std::span<const HandleResult> results,
                                             std::span<const TriggerResult> triggers, std::int64_t now_ms);
inline std::vector<HandledFire> RecordHandleResults(pqxx::transaction_base& tx,
                                                    std::span<const HandleResult> results,
                                                    std::int64_t now_ms) {
  return RecordHandleResults(tx, results, {}, now_ms);
}

// Writes PARENT fires for the child jobs of the succeeded fires `handled`, except a child already in the
// parent's ancestry (a cycle created by racing edits) and a stopped child (a schedule, not enabled; a NONE
// job has no running state and is fired), owned by `node_id` and due now; appends a "Trigger child job" note
// to each parent that has children: "child job 7: fire 123" for each fired, "child job 8: not fired, it is
// stopped" for each stopped one. Returns the child fires.
// A shard of a broadcast fire (SHARDING_BROADCAST) is not a parent on its own: the broadcast is, once all
// its shards have succeeded (a failed shard counts once a retry of it has), and its children fire once,
// their parent_log_id the broadcast's shard 0. XXL-JOB fires the children after each successful shard. The
// broadcasts among `handled` are counted under a per-broadcast advisory lock (kFanInLockClass), so of two
// transactions recording the last two shards at once, exactly one fires the children.
std::vector<Fire> InsertChildren(pqxx::transaction_base& tx, std::span<const HandledFire> handled,
                                 std::string_view node_id, std::int64_t now_ms);

// The broadcasts among `handled` whose shards have all succeeded, as one fire each (its shard 0's id and
// instant), and every fire of `handled` that is not a shard, under the fan-in lock (see InsertChildren).
std::vector<HandledFire> FanInBroadcasts(pqxx::transaction_base& tx, std::span<const HandledFire> handled);

// The results (handle message, output) of the succeeded fires `parents` whose ids are in `wanted`, by id: a
// broadcast's (a fire of shard_total > 1 that is its own broadcast_log_id) output is the array of its
// shards' outputs by shard index (admin/model/parent_refs.hpp).
std::map<std::int64_t, ParentResult> ParentResults(pqxx::transaction_base& tx,
                                                   std::span<const HandledFire> parents,
                                                   const std::set<std::int64_t>& wanted);

// A workflow node's fire to write (store/workflow_table.hpp).
struct WorkflowFire {
  std::int64_t run_id = 0;
  std::string node;
  int job_id = 0;
  std::int64_t scheduled_ms = 0;  // due at (a scheduled run's roots: its instant; else now)
  std::string param;              // resolved (admin/model/parent_refs.hpp, ResolveWorkflowRefs)
  std::string note;               // the start of its trigger message
};
// Writes WORKFLOW fires owned by `node_id` with their job's group and retry count. A fire whose job is gone
// is not written. Returns the fires written with their node, in the order given.
std::vector<std::pair<WorkflowFire, Fire>> InsertWorkflowFires(pqxx::transaction_base& tx,
                                                               std::span<const WorkflowFire> fires,
                                                               std::string_view node_id, std::int64_t now_ms);

// --- failures (results/failure_monitor.hpp, results/lost_result_monitor.hpp) ----------------------------

// Gives up alarms an admin claimed before `before_ms` and never finished (it stopped): alarm_status 3 with a
// note, out of the queue. Returns how many.
std::size_t AbandonStuckAlarms(pqxx::transaction_base& tx, std::int64_t before_ms);

// A failed fire claimed for retry and alarm, with what the failure monitor needs of its job and group
// (job_* fields are unset when the job was deleted).
using FailedFire = ::cronwheel::admin::FailedFire;
// Claims for `node_id` at `now_ms` at most `limit` queued failed fires (fire_alarm), SKIP LOCKED, in id
// order; queued fires a person killed meanwhile, or whose job was deleted, leave the queue instead.
std::vector<FailedFire> ClaimFailed(pqxx::transaction_base& tx, std::string_view node_id, std::int64_t now_ms,
                                    int limit);

// A retry to write for a failed fire.
using PlannedRetry = ::cronwheel::admin::PlannedRetry;
// Writes RETRY fires owned by `node_id`. Returns them, in the order given.
std::vector<Fire> InsertRetries(pqxx::transaction_base& tx, std::span<const PlannedRetry> retries,
                                std::string_view node_id, std::int64_t now_ms);

// Final alarm state of claimed fires, which leave the queue: status 1, 2 or 3, and a note appended to
// handle_msg ("" = none).
using AlarmStatus = ::cronwheel::admin::AlarmStatus;
void SetAlarmStatus(pqxx::transaction_base& tx, std::span<const AlarmStatus> statuses);

// Records "the executor is gone" on RUNNING fires that still have no result: handle_code 500 and `message`;
// they are closed and queued for the failure monitor.
void MarkLost(pqxx::transaction_base& tx, std::span<const std::int64_t> log_ids, std::int64_t now_ms,
              std::string_view message);

// --- the console and the REST API ---------------------------------------------------------------------

// A MANUAL (or API) fire of `job_id`, owned by `node_id`, due now, with `param` (nullopt = the job's).
// Returns its id, nullopt when the job does not exist.
std::optional<std::int64_t> InsertManual(pqxx::transaction_base& tx, int job_id, TriggerType type,
                                         const std::optional<std::string>& param, std::string_view node_id,
                                         std::int64_t now_ms);

// Writes the fires of run-once requests the scan took (job_table::TakeDueRunOnce): MANUAL fires with the ids
// chosen there, owned by `node_id`, at each request's instant, with its parameter (else the job's) and the
// job's retry count; the trigger message says which request and who made it. A request whose job is gone
// writes nothing. Returns the rows written, their param set.
std::vector<CommittedFire> InsertRunOnce(pqxx::transaction_base& tx, std::span<const DueRunOnce> due,
                                         std::string_view node_id, std::int64_t now_ms);

// Withdraws fire `log_id` (deletes its job_log and fire_open rows) when no admin has claimed it for sending
// and it has no trigger result. False when it is being sent, sent, or gone.
bool WithdrawUnclaimed(pqxx::transaction_base& tx, std::int64_t log_id);

// The advisory lock class of an instant's second (pg_advisory_xact_lock(kInstantLockClass, epoch s)):
// a withdrawal holds it shared for the seconds of the claimed fires it may withdraw, a sender takes it
// exclusively while it reads the withdrawals of the fires it is about to send.
inline constexpr int kInstantLockClass = 0x6378;

// Withdraws the CRON fires of `job_id` written for instants after now (`clock`, read after the locks below)
// that no executor has accepted (the job was stopped, deleted or its schedule changed, or a calendar it
// follows was edited): their job_log and fire_open rows are deleted, so that the scan can plan those
// instants again. Those an admin had claimed for sending at their instant are also named in fire_withdrawn
// (sql/031), which that admin reads at the instant before it sends (WithdrawnAt). The seconds of those
// claimed fires are locked shared first (kInstantLockClass), so a sender reading them either has read them
// (and now is past the instant, left to it) or waits for this commit: a fire is never both sent and
// withdrawn (docs/architecture.md, "Stops and changes against the scan"). Two statements. Returns the
// earliest instant withdrawn, if any (where an edit of the job's calendar starts the job's walk again).
std::optional<std::int64_t> WithdrawUnsent(pqxx::transaction_base& tx, int job_id, ringwheel::Clock& clock);

// The fires named in fire_withdrawn whose instant is one of `instants_ms`, any order. Takes each instant's
// second exclusively first (kInstantLockClass, held to the end of the transaction), so a withdrawal in
// progress for one of them is waited for. An index lookup: its cost follows the withdrawals, not the fires
// being sent.
std::vector<std::int64_t> WithdrawnAt(pqxx::transaction_base& tx, std::span<const std::int64_t> instants_ms);

// The fires of job `job_id` named in fire_withdrawn for instants after `after_ms`, by log id (a stop's caller
// cancels them where they may be held: JobService::WithdrawnClaims). Reads the table without an index on
// the job: it holds only the claimed fires withdrawn within the fires' retention, a handful.
std::vector<std::int64_t> WithdrawnOfJob(pqxx::transaction_base& tx, int job_id, std::int64_t after_ms);

// Deletes at most `limit` rows of fire_withdrawn with an instant before `before_ms` (the fires' retention).
// Returns how many.
std::int64_t DeleteOldWithdrawals(pqxx::transaction_base& tx, std::int64_t before_ms, int limit);

// The CRON fires of `job_id` sent ahead of their instant (trigger result recorded, instant after `after_ms`)
// with no result yet: the executors hold them. One statement on fire_open (and their job_log rows).
std::vector<SentAheadFire> SentAhead(pqxx::transaction_base& tx, int job_id, std::int64_t after_ms);

// Records that the executors dropped these fires sent ahead before their instant: skipped, with `note`
// appended to the trigger message, no longer open, and no alarm (a person changed the job).
void MarkWithdrawnAhead(pqxx::transaction_base& tx, std::span<const std::int64_t> log_ids,
                        std::string_view note);

// Records a manual kill on a fire still without a result (XXL-JOB logKill): handle_code 500, handle_msg
// "Manual operation, kill job: <msg>", alarm_status 1 (a person stopped it: no retry, no alarm). When the
// executor's own report of the kill (a failed result) came first, the note is appended and the fire is
// kept from retry and alarm as well. False when the fire had succeeded.
bool MarkKilled(pqxx::transaction_base& tx, std::int64_t log_id, std::int64_t now_ms,
                std::string_view executor_msg);

// The WHERE clause (SQL) of the finished fires (SUCCESS, FAILED, SKIPPED) in `selection`; never PENDING or
// RUNNING fires, which the scheduler and the executors still use.
std::string FinishedSelection(pqxx::transaction_base& tx, const LogClear& selection);

// Deletes at most `limit` finished fires (SUCCESS, FAILED, SKIPPED) of the selection at or before
// (scheduled_ms, id) = `boundary`, in (scheduled_ms, id) order, with their archived output. Returns how many.
std::int64_t DeleteFinished(pqxx::transaction_base& tx, const LogClear& selection,
                            std::pair<std::int64_t, std::int64_t> boundary, int limit);

// Deletes every fire of job `job_id` (a deleted job's; store/job_repository.hpp), with their archived output
// and queued pulls. Returns how many fires.
std::int64_t DeleteJobFires(pqxx::transaction_base& tx, int job_id);

// --- the fire output archive (results/output_puller.hpp; fire_log_output.cpp) ----------------------------
// RecordHandleResults archives a callback's log or queues its pull; these complete the pulls and read the
// archive.

// Claims at most `limit` queued pulls due at `now_ms` (FOR UPDATE SKIP LOCKED: two admins never take the
// same one), moving each one's due_ms to now_ms + lease_ms and counting the attempt. Each comes with where
// its fire ran (executor_address, trigger_ms) and its group's own token. Oldest due first.
std::vector<OutputPull> ClaimOutputPulls(pqxx::transaction_base& tx, std::int64_t now_ms,
                                         std::int64_t lease_ms, int limit);
// Archives what was pulled (via 'pull'), or a final failure (no content, its error), and deletes those queue
// rows; one with retry_at_ms stays queued, due then, with its error. A fire archived meanwhile is kept as it
// is.
void FinishOutputPulls(pqxx::transaction_base& tx, std::span<const PulledOutput> pulled, std::int64_t now_ms);

// What is archived of fire (log_id, scheduled_ms), or where its archiving stands.
FireOutputArchive ReadOutput(pqxx::transaction_base& tx, std::int64_t log_id, std::int64_t scheduled_ms);

// The archive's size, for /metrics: bytes on disk (each partition's heap, TOAST and indexes), rows (from
// PostgreSQL's statistics, pg_class.reltuples, as autovacuum's ANALYZE last counted them; a partition never
// analyzed is counted), and the pulls queued.
struct ArchiveSize {
  std::int64_t bytes = 0;
  std::int64_t rows = 0;
  std::int64_t pulls_queued = 0;
};
ArchiveSize MeasureArchive(pqxx::transaction_base& tx);

}  // namespace cronwheel::admin::fire_log
