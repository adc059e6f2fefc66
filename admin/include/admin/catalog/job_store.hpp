#pragma once
// What the rules of jobs (catalog/job_service.hpp) need from the database, as an interface free of libpqxx:
// PgJobStore (store/pg_job_store.hpp) in production, cwtest::MemoryJobStore (tests/support) in unit tests.
// It holds statements, never rules: which checks a job must pass, when its first fire is computed, when its
// unsent fires are withdrawn and how many glue versions are kept are JobService's.
//
// Transactions: Transact runs a body against one Tx, in one database transaction; the body says whether to
// commit. Reads inside it see the transaction's own writes. Locks are taken where a method says so, in the
// order the scan takes them (a job's schedule partition, then its row: docs/architecture.md, "Stops and
// changes against the scan").
//
// Errors: database failures throw (DatabaseUnavailable and the driver's exceptions, as the other stores);
// nothing here returns a Result. Thread-safety: implementations are safe from several threads; a Tx belongs
// to the thread running its body.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "admin/model/fire.hpp"
#include "admin/model/model.hpp"
#include "admin/model/queries.hpp"

namespace cronwheel::admin {

class JobStore {
 public:
  // A workflow that names a job as one of its nodes (a job so named is not deleted).
  struct WorkflowRef {
    int id = 0;
    std::string name;
  };

  // One transaction. Its methods are the statements of the job rules, each O(rows it touches) unless said.
  class Tx {
   public:
    virtual ~Tx() = default;

    // Existence, for the checks of a saved job.
    virtual bool GroupExists(int group_id) = 0;
    // The ids of `ids` that name no alert channel / no calendar, in the order given.
    virtual std::vector<int> MissingAlertChannels(std::span<const int> ids) = 0;
    virtual std::vector<int> MissingCalendars(std::span<const int> ids) = 0;
    // The group of each of `ids` that is a job (ids that are none are absent).
    virtual std::map<int, int> GroupsOfJobs(std::span<const int> ids) = 0;
    // The child lists of every job that has children: the graph a cycle check walks. O(jobs with children).
    virtual std::unordered_map<int, std::vector<int>> ChildLinks() = 0;

    // Locks job `id`'s schedule partition (before any job row, as the scan does): a scan holding it has
    // committed the fires it writes for the job before this goes on.
    virtual void LockSchedule(int id) = 0;
    // LockSchedule, then the job's row for update; nullopt when there is no such job.
    virtual std::optional<Job> LockJob(int id) = 0;

    // Inserts `job` (its id ignored) created at `now_ms` (created, updated and glue_updated times); returns
    // the row as stored, with its id. Its schedule row is written apart (SetSchedule).
    virtual Job InsertJob(const Job& job, std::int64_t now_ms) = 0;
    // Writes every field of `job` over row `job.id`, with `updated_ms`; returns the row as stored.
    virtual Job UpdateJob(const Job& job, std::int64_t updated_ms) = 0;
    // Enables or disables job `id` (enabling clears its stop reason), updated at max(now_ms, its last
    // update + 1). False when there is no such job.
    virtual bool SetEnabled(int id, bool enabled, std::int64_t now_ms) = 0;
    // The job's schedule row: its next fire (0 = none) and, when given, its last (job_table::SetSchedule).
    virtual void SetSchedule(int id, std::int64_t next_fire_ms, std::optional<std::int64_t> last_fire_ms) = 0;
    // Records the job's current glue as a version at `now_ms` and deletes all but its newest `keep`.
    virtual void WriteGlueHistory(const Job& job, std::int64_t now_ms, int keep) = 0;
    // Withdraws the job's fires written but not accepted by an executor, for instants still to come, as
    // read on the store's clock once the instants' locks are held (fire_log::WithdrawUnsent).
    virtual void WithdrawUnsent(int job_id) = 0;
    // At most `limit` workflows naming job `job_id` as a node, by id.
    virtual std::vector<WorkflowRef> WorkflowsNaming(int job_id, int limit) = 0;
    // Takes job `id` out of every other job's child list.
    virtual void RemoveChildLinks(int id) = 0;
    // Deletes job `id`'s row (its schedule and open fires with it). False when there was none.
    virtual bool DeleteJob(int id) = 0;

    // Run once: request `id` of job `job_id`, locked for update (the scan's taking of it waits); nullopt
    // when there is none.
    virtual std::optional<RunOnce> LockRunOnce(int job_id, std::int64_t id) = 0;
    // Deletes fire `log_id` while no admin has claimed it (fire_log::WithdrawUnclaimed): false when it is
    // claimed, being sent or sent.
    virtual bool WithdrawUnclaimed(std::int64_t log_id) = 0;
    // Marks run once `id` cancelled at `now_ms` by `who` (its fire link cleared); returns it as stored.
    virtual RunOnce CancelRunOnce(std::int64_t id, std::int64_t now_ms, const std::string& who) = 0;
  };

  virtual ~JobStore() = default;

  // Runs `body` in one transaction, committed when it returns true and rolled back when it returns false or
  // throws (the exception goes on).
  virtual void Transact(const std::function<bool(Tx&)>& body) = 0;

  // Reads, each its own read-only transaction.
  virtual std::optional<Job> GetJob(int id) = 0;
  // Jobs matching `q` by id, one page, with the total. O(matching jobs).
  virtual JobPage ListJobs(const JobQuery& q) = 0;
  // Every tag on a job of `group_ids` (nullopt = every group) with its number of jobs, by tag.
  virtual std::vector<TagCount> ListTags(const std::optional<std::vector<int>>& group_ids) = 0;

  // Deletes every fire of job `job_id` (a deleted job's: they have no foreign key to it), in its own
  // transaction so a job with millions of fires does not hold its schedule partition meanwhile.
  virtual void DeleteJobFires(int job_id) = 0;

  // Ahead-of-time dispatch (fire_log::SentAhead, WithdrawnOfJob, MarkWithdrawnAhead).
  virtual std::vector<SentAheadFire> SentAhead(int job_id) = 0;
  virtual std::vector<std::int64_t> WithdrawnClaims(int job_id) = 0;
  virtual void MarkWithdrawnAhead(std::span<const std::int64_t> log_ids, std::string_view note) = 0;

  // Writes a MANUAL/API fire of job `job_id` at `now_ms` owned by `node_id`; its log id, or nullopt when
  // there is no such job.
  virtual std::optional<std::int64_t> InsertManualFire(int job_id, TriggerType type,
                                                       const std::optional<std::string>& param,
                                                       const std::string& node_id, std::int64_t now_ms) = 0;
  // Run once requests: a new one (nullopt when there is no such job) and a job's, newest instant first.
  virtual std::optional<RunOnce> InsertRunOnce(int job_id, std::int64_t fire_at_ms,
                                               const std::optional<std::string>& param,
                                               const std::string& who, std::int64_t now_ms) = 0;
  virtual std::vector<RunOnce> ListRunOnce(int job_id, int limit) = 0;
};

}  // namespace cronwheel::admin
