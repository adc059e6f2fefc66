#pragma once
// Jobs (table job, XXL-JOB's xxl_job_info) on PostgreSQL: creation, updates, deletion, start and stop, and
// manual triggers. The REST API reads and checks a job's fields first (api/request_bodies.hpp,
// model/validation.hpp); here is what needs the database: the group exists, child jobs exist, may be seen by
// the caller and form no cycle, and the job's first fire (schedule/next_fire.hpp).
//
// Child jobs and the caller: a child fires after its parent with its own stored parameter, so naming one is
// running it. A save by a caller limited to some groups (a USER) refuses a child in another group exactly as
// one that does not exist ("job N not found", code not_found on child_job_ids), so the answer tells nothing
// of other groups. An update keeps the children the job had (an admin may have linked other groups' jobs)
// without checking them again; only children it adds must be visible. A cycle through a job the caller may
// not see is refused without naming the jobs on it.
//
// Rules kept from XXL-JOB (docs/xxl-job-protocol.md §5, §12): starting a job computes its first fire from
// now + pre_read; a NONE job cannot be started; stopping clears next/last; an update of a running job's
// schedule recomputes the next fire the same way; a glue change bumps glue_updated_ms and keeps the newest
// 30 versions in glue_history.
// New: child-job cycles are refused when a job is saved; stopping a job (or changing its schedule) also
// withdraws its fires that are written but not yet being sent.
//
// Thread-safety: safe from any thread (pooled connections). Errors: expected outcomes are Results (kInvalid
// with fields, kNotFound); database failures throw.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/fire.hpp"
#include "admin/model/model.hpp"
#include "admin/model/queries.hpp"
#include "admin/model/result.hpp"
#include "admin/store/pg_pool.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class JobRepository {
 public:
  struct Settings {
    // How far ahead the scan reads (the admin's pre_read_ms): a started job's first fire is after it.
    std::chrono::milliseconds pre_read{5000};
  };
  // Edits a job in place (an update's fields over the stored ones); an error is returned as it is.
  using Edit = std::function<Result<void>(Job&)>;
  // Whether the caller may see the jobs of a group (Principal::CanAccessGroup); empty = every group.
  using Visible = std::function<bool(int group_id)>;

  JobRepository(ringwheel::Clock& clock, PgPool& pool, Settings settings);
  JobRepository(ringwheel::Clock& clock, PgPool& pool) : JobRepository(clock, pool, Settings{}) {}

  // `job` already read and checked (ReadJobBody, CheckJobFields); every child must be `visible`. kInvalid
  // with fields.
  Result<Job> CreateJob(Job job, const Visible& visible = {});
  // Applies `edit` to the stored job (locked for update) and saves it; a child it adds must be `visible`.
  // kNotFound, kInvalid, or the error `edit` returned.
  Result<Job> UpdateJob(int id, const Edit& edit, const Visible& visible = {});
  // Deletes the job (and its fires) and removes it from other jobs' child lists. kNotFound.
  Result<void> DeleteJob(int id);
  std::optional<Job> GetJob(int id);
  JobPage ListJobs(const JobQuery& q);
  // Every tag on a job of `group_ids` (nullopt = every group) with its number of jobs, by tag. One
  // statement over the jobs' tags (unnest); O(jobs x tags).
  std::vector<TagCount> ListTags(const std::optional<std::vector<int>>& group_ids);
  // Enables the job with its first fire. kNotFound; kInvalid for NONE or a schedule that never fires.
  Result<void> StartJob(int id);
  // kNotFound.
  Result<void> StopJob(int id);
  // Ahead-of-time dispatch: the job's fires its executors hold for instants still to come (they were sent
  // ahead), to be withdrawn there when the job stops, goes or changes its schedule; and the record of those
  // the executors dropped (fire_log::SentAhead, MarkWithdrawnAhead).
  std::vector<SentAheadFire> SentAhead(int job_id);
  // The fires of job `job_id` that a stop, change or delete withdrew after an admin had claimed them, for
  // instants still to come (fire_log::WithdrawnOfJob): one another admin sent ahead may be held by an
  // executor although its row is gone, and the caller cancels them there.
  std::vector<std::int64_t> WithdrawnClaims(int job_id);
  void MarkWithdrawnAhead(std::span<const std::int64_t> log_ids, std::string_view note);
  // Writes a MANUAL (or API) fire owned by node_id, to be sent at once, and returns it: its log id and its
  // instant (now, which also locates its row in job_log's partitions: the fire sent must carry this one).
  // kNotFound.
  Result<Fire> CreateManualFire(int job_id, TriggerType type, const std::optional<std::string>& param,
                                const std::string& node_id);

  // Run once (table run_once, sql/009_run_once.sql): a durable request to fire the job once at `fire_at_ms`
  // with `param` (nullopt = the job's own when it fires), made by `who`. The scan of the job's schedule
  // partition writes it as a MANUAL fire within pre_read of its instant (job_table::TakeDueRunOnce), so
  // any live admin fires it, once. The caller checks the instant (the REST API: not in the past, at most a
  // year ahead). kNotFound when the job does not exist.
  Result<RunOnce> CreateRunOnce(int job_id, std::int64_t fire_at_ms, const std::optional<std::string>& param,
                                const std::string& who);
  // The job's run-once requests, newest instant first, at most `limit` (waiting, fired and cancelled).
  std::vector<RunOnce> ListRunOnce(int job_id, int limit);
  // Cancels run once `id` of job `job_id`, by `who`. A waiting one is cancelled; one already written as a
  // fire has that fire withdrawn (deleted) while no admin has claimed it for sending. kNotFound (no such run
  // once of this job); kConflict when it was cancelled before or its fire is already being sent or sent
  // (the message names the fire).
  Result<RunOnce> CancelRunOnce(int job_id, std::int64_t id, const std::string& who);

 private:
  ringwheel::Clock& clock_;
  PgPool& pool_;
  Settings settings_;
};

}  // namespace cronwheel::admin
