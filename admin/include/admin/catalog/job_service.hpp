#pragma once
// The rules of jobs (table job, XXL-JOB's xxl_job_info): creation, updates, deletion, start and stop, manual
// triggers and run-once requests, over a JobStore (catalog/job_store.hpp) that holds only statements. The
// REST API reads and checks a job's fields first (api/request_bodies.hpp, model/validation.hpp); here is
// what needs the stored state: the group, alert channels and calendars exist, child jobs exist, may be seen
// by the caller and form no cycle, and the job's first fire (schedule/next_fire.hpp).
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
// New: child-job cycles are refused when a job is saved; a job a workflow names is not deleted; stopping a
// job, changing its schedule or deleting it also withdraws its fires that are written but not yet accepted
// by an executor (docs/architecture.md, "Stops and changes against the scan"); a job whose window
// (end_ms) has passed cannot be enabled.
//
// Time: now is read from the injected Clock once per call. Thread-safety: safe from any thread (the store's
// transactions serialise what must be). Errors: expected outcomes are Results (kInvalid with fields naming
// each field, kNotFound, kConflict); database failures throw, and a refused call changes nothing.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "admin/catalog/job_store.hpp"
#include "admin/model/fire.hpp"
#include "admin/model/model.hpp"
#include "admin/model/queries.hpp"
#include "admin/model/result.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class JobService {
 public:
  struct Settings {
    // How far ahead the scan reads (the admin's pre_read_ms): a started job's first fire is after it.
    std::chrono::milliseconds pre_read{5000};
  };
  // XXL-JOB keeps a job's newest 30 glue versions.
  static constexpr int kGlueHistoryKept = 30;
  // Edits a job in place (an update's fields over the stored ones); an error is returned as it is.
  using Edit = std::function<Result<void>(Job&)>;
  // Whether the caller may see the jobs of a group (Principal::CanAccessGroup); empty = every group.
  using Visible = std::function<bool(int group_id)>;

  JobService(ringwheel::Clock& clock, JobStore& store, Settings settings);
  JobService(ringwheel::Clock& clock, JobStore& store) : JobService(clock, store, Settings{}) {}

  // `job` already read and checked (ReadJobBody, CheckJobFields); every child must be `visible`. An
  // enabled job gets its first fire. kInvalid with fields.
  Result<Job> CreateJob(Job job, const Visible& visible = {});
  // Applies `edit` to the stored job (locked for update) and saves it; a child it adds must be `visible`.
  // Enabling it or changing the schedule of an enabled job computes its next fire afresh; a disabled job
  // has none. kNotFound, kInvalid, or the error `edit` returned.
  Result<Job> UpdateJob(int id, const Edit& edit, const Visible& visible = {});
  // Deletes the job (and its fires) and removes it from other jobs' child lists. kNotFound; kConflict when
  // a workflow names it (the workflows are named, at most 5).
  Result<void> DeleteJob(int id);
  std::optional<Job> GetJob(int id);
  JobPage ListJobs(const JobQuery& q);
  std::vector<TagCount> ListTags(const std::optional<std::vector<int>>& group_ids);
  // Enables the job with its first fire. kNotFound; kInvalid for NONE or a schedule that never fires.
  Result<void> StartJob(int id);
  // Disables the job and withdraws its unsent fires. kNotFound.
  Result<void> StopJob(int id);

  // Ahead-of-time dispatch: the job's fires its executors hold for instants still to come (to be withdrawn
  // there when the job stops, goes or changes its schedule), the fires a stop, change or delete withdrew
  // after an admin had claimed them (another admin may have sent them ahead), and the record of those the
  // executors dropped.
  std::vector<SentAheadFire> SentAhead(int job_id);
  std::vector<std::int64_t> WithdrawnClaims(int job_id);
  void MarkWithdrawnAhead(std::span<const std::int64_t> log_ids, std::string_view note);

  // Writes a MANUAL (or API) fire owned by node_id, to be sent at once, and returns it: its log id and its
  // instant (now, which also locates its row in job_log's partitions: the fire sent must carry this one).
  // kNotFound.
  Result<Fire> CreateManualFire(int job_id, TriggerType type, const std::optional<std::string>& param,
                                const std::string& node_id);

  // Run once (table run_once, sql/009_run_once.sql): a durable request to fire the job once at `fire_at_ms`
  // with `param` (nullopt = the job's own when it fires), made by `who`. The scan of the job's schedule
  // partition writes it as a MANUAL fire within pre_read of its instant, so any live admin fires it, once.
  // The caller checks the instant (the REST API: not in the past, at most a year ahead). kNotFound.
  Result<RunOnce> CreateRunOnce(int job_id, std::int64_t fire_at_ms, const std::optional<std::string>& param,
                                const std::string& who);
  // The job's run-once requests, newest instant first, at most `limit` (waiting, fired and cancelled).
  std::vector<RunOnce> ListRunOnce(int job_id, int limit);
  // Cancels run once `id` of job `job_id`, by `who`. A waiting one is cancelled; one already written as a
  // fire has that fire withdrawn while no admin has claimed it for sending. kNotFound (no such run once of
  // this job); kConflict when it was cancelled before or its fire is already being sent or sent (the
  // message names the fire).
  Result<RunOnce> CancelRunOnce(int job_id, std::int64_t id, const std::string& who);

 private:
  // Runs `body` in one transaction of the store, committed when it returns a value (not an error).
  template <class T, class F>
  Result<T> InTransaction(F&& body);

  ringwheel::Clock& clock_;
  JobStore& store_;
  Settings settings_;
};

}  // namespace cronwheel::admin
