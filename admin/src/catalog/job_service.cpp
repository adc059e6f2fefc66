#include "admin/catalog/job_service.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <unordered_map>
#include <utility>

#include "admin/model/validation.hpp"
#include "admin/schedule/next_fire.hpp"

namespace cronwheel::admin {
namespace {

// A cycle through `job` in the child graph as it would be with `job` saved: the jobs on it from `job` back
// to it ({1, 2, 1}), or empty. Depth-first from the job, O(jobs with children + links).
std::vector<int> ChildCycle(std::unordered_map<int, std::vector<int>> children, const Job& job) {
  children[job.id] = job.child_job_ids;
  std::set<int> seen;
  std::vector<std::pair<int, std::vector<int>>> stack{{job.id, {job.id}}};
  while (!stack.empty()) {
    auto [node, path] = std::move(stack.back());
    stack.pop_back();
    for (const int c : children[node]) {
      if (c == job.id) {
        path.push_back(job.id);
        return path;
      }
      if (seen.insert(c).second) {
        auto next = path;
        next.push_back(c);
        stack.emplace_back(c, std::move(next));
      }
    }
  }
  return {};
}

void MissingAs(const std::vector<int>& missing, const char* field, const char* what, FieldErrors& errors) {
  for (const int id : missing)
    errors.push_back({field, fmt::format("{} {} not found", what, id), "not_found", {{"id", id}}});
}

// The child jobs of `job`: they exist, are visible to the caller (but for the `kept` ones, which the job
// had), are not the job itself, and close no cycle.
void CheckChildren(JobStore::Tx& tx, const Job& job, const std::vector<int>& kept,
                   const JobService::Visible& visible, FieldErrors& errors) {
  if (job.child_job_ids.empty()) return;
  const auto group_of = tx.GroupsOfJobs(job.child_job_ids);
  const auto seen = [&](int c) {
    const auto it = group_of.find(c);
    if (it == group_of.end()) return false;
    return !visible || std::find(kept.begin(), kept.end(), c) != kept.end() || visible(it->second);
  };
  bool hidden = false;
  for (const int c : job.child_job_ids) {
    if (c == job.id) {
      errors.push_back({"child_job_ids", fmt::format("a job cannot be its own child (job {})", c)});
    } else if (!seen(c)) {
      // The same words whether the job does not exist or is in a group the caller may not see.
      errors.push_back({"child_job_ids", fmt::format("job {} not found", c), "not_found", {{"id", c}}});
      hidden = true;
    }
  }
  if (job.id == 0 || hidden) return;  // a new job has no parents yet: it cannot close a cycle
  const auto cycle = ChildCycle(tx.ChildLinks(), job);
  if (cycle.empty()) return;
  const auto on_cycle = tx.GroupsOfJobs(cycle);
  const bool all_seen = !visible || std::all_of(on_cycle.begin(), on_cycle.end(), [&](const auto& jg) {
    return jg.first == job.id || visible(jg.second);
  });
  if (!all_seen) {
    errors.push_back(
        {"child_job_ids", "child jobs would form a cycle through jobs of groups you may not see"});
    return;
  }
  std::string chain;
  for (const int p : cycle)
    chain += (chain.empty() ? "" : " -> ") + std::to_string(p);
  errors.push_back({"child_job_ids", fmt::format("child jobs would form a cycle: {}", chain)});
}

// CheckJobFields, then what needs the stored state: the group, alert channels and calendars exist, and the
// children (CheckChildren).
void ValidateJob(JobStore::Tx& tx, Job& job, const std::vector<int>& kept, const JobService::Visible& visible,
                 FieldErrors& errors) {
  CheckJobFields(job, errors);
  if (job.group_id > 0 && !tx.GroupExists(job.group_id)) {
    errors.push_back({"group_id",
                      fmt::format("job group {} does not exist", job.group_id),
                      "not_found",
                      {{"id", job.group_id}}});
  }
  if (!job.alert_channel_ids.empty())
    MissingAs(tx.MissingAlertChannels(job.alert_channel_ids), "alert_channel_ids", "alert channel", errors);
  if (!job.calendar_ids.empty())
    MissingAs(tx.MissingCalendars(job.calendar_ids), "calendar_ids", "calendar", errors);
  CheckChildren(tx, job, kept, visible, errors);
}

// Enables `job` from now: its first fire (next_fire.hpp), or an error naming the field that prevents it.
void SetFirstFire(Job& job, std::int64_t now_ms, std::chrono::milliseconds pre_read, FieldErrors& errors) {
  if (job.end_ms > 0 && job.end_ms <= now_ms) {
    errors.push_back(
        {"end_ms",
         fmt::format("the job's window ended at {} ms, before now ({} ms): it cannot be enabled; use a "
                     "later end_ms, or 0 for no end",
                     job.end_ms, now_ms),
         "range",
         {{"min", now_ms}, {"actual", job.end_ms}}});
    return;
  }
  const auto first = FirstFireOnStart(job.schedule_type, job.schedule_conf, job.time_zone, now_ms, pre_read);
  if (!first) {
    errors.push_back(
        {"schedule_conf", "the schedule has no fire after now: it cannot be enabled", "schedule"});
    return;
  }
  job.next_fire_ms = *first;
  job.stop_reason.clear();
}

Error NoJob(int id) {
  return Error::NotFound(fmt::format("job {} not found", id));
}

}  // namespace

JobService::JobService(ringwheel::Clock& clock, JobStore& store, Settings settings)
    : clock_(clock), store_(store), settings_(settings) {}

template <class T, class F>
Result<T> JobService::InTransaction(F&& body) {
  std::optional<Result<T>> out;
  store_.Transact([&](JobStore::Tx& tx) {
    out.emplace(body(tx));
    return out->ok();
  });
  return *std::move(out);
}

Result<Job> JobService::CreateJob(Job job, const Visible& visible) {
  return InTransaction<Job>([&](JobStore::Tx& tx) -> Result<Job> {
    FieldErrors errors;
    ValidateJob(tx, job, {}, visible, errors);
    const auto now = clock_.NowMs();
    if (errors.empty() && job.enabled) SetFirstFire(job, now, settings_.pre_read, errors);
    if (!errors.empty()) return Error::Invalid("the job is not valid", std::move(errors));
    Job created = tx.InsertJob(job, now);
    created.next_fire_ms = job.enabled ? job.next_fire_ms : 0;
    tx.SetSchedule(created.id, created.next_fire_ms, 0);
    if (created.glue_type != GlueType::kBean) tx.WriteGlueHistory(created, now, kGlueHistoryKept);
    return created;
  });
}

Result<Job> JobService::UpdateJob(int id, const Edit& edit, const Visible& visible) {
  return InTransaction<Job>([&](JobStore::Tx& tx) -> Result<Job> {
    const auto stored = tx.LockJob(id);
    if (!stored) return NoJob(id);
    const Job& before = *stored;
    Job job = before;
    if (auto edited = edit(job); !edited) return edited.error();
    job.id = id;
    FieldErrors errors;
    ValidateJob(tx, job, before.child_job_ids, visible, errors);
    const auto now = clock_.NowMs();
    const bool schedule_changed = !SameSchedule(job, before);
    if (errors.empty() && job.enabled && (!before.enabled || schedule_changed)) {
      SetFirstFire(job, now, settings_.pre_read, errors);
    }
    if (!job.enabled) job.next_fire_ms = 0;
    if (!errors.empty()) return Error::Invalid("the job is not valid", std::move(errors));
    const bool glue_changed = job.glue_type != before.glue_type || job.glue_source != before.glue_source;
    if (glue_changed) job.glue_updated_ms = std::max(now, before.glue_updated_ms + 1);
    tx.SetSchedule(id, job.next_fire_ms, std::nullopt);
    Job updated = tx.UpdateJob(job, std::max(now, before.updated_ms + 1));
    if (glue_changed && updated.glue_type != GlueType::kBean)
      tx.WriteGlueHistory(updated, now, kGlueHistoryKept);
    // Fires already written for the old schedule or a stopped job, and not yet being sent, are withdrawn.
    if (!updated.enabled || schedule_changed) tx.WithdrawUnsent(id);
    return updated;
  });
}

Result<void> JobService::DeleteJob(int id) {
  auto deleted = InTransaction<bool>([&](JobStore::Tx& tx) -> Result<bool> {
    // Its schedule partition first, before any job row: a scan holding it has committed the fires it writes
    // for this job when this goes on, and the next scan reads the job gone (sql/024).
    tx.LockSchedule(id);
    // A workflow's node names it: its runs would fail at that node. The workflows are named.
    if (const auto workflows = tx.WorkflowsNaming(id, 5); !workflows.empty()) {
      std::string names;
      for (const auto& w : workflows)
        names += fmt::format("{}{} '{}'", names.empty() ? "" : ", ", w.id, w.name);
      return Error::Conflict(
          fmt::format("job {} is a node of workflow {}: take it out of the workflow first", id, names));
    }
    // Child links to it go too, so no job points at a missing child.
    tx.RemoveChildLinks(id);
    // Its fires not accepted by an executor, before the job row takes their open rows with it: one an admin
    // claimed is named for that admin, which then does not send it.
    tx.WithdrawUnsent(id);
    if (!tx.DeleteJob(id)) return NoJob(id);
    return true;
  });
  if (!deleted) return deleted.error();
  // Its fires, in a transaction of their own. Its open fires went with the job, and those claimed for
  // sending were named above, so none of these is sent.
  store_.DeleteJobFires(id);
  return {};
}

std::optional<Job> JobService::GetJob(int id) {
  return store_.GetJob(id);
}

JobPage JobService::ListJobs(const JobQuery& q) {
  return store_.ListJobs(q);
}

std::vector<TagCount> JobService::ListTags(const std::optional<std::vector<int>>& group_ids) {
  return store_.ListTags(group_ids);
}

Result<void> JobService::StartJob(int id) {
  auto started = InTransaction<bool>([&](JobStore::Tx& tx) -> Result<bool> {
    const auto job = tx.LockJob(id);
    if (!job) return NoJob(id);
    if (job->schedule_type == "NONE") {
      return Error::Invalid(
          "the job cannot be started",
          {{"schedule_type",
            "a job with schedule_type NONE cannot be started: it runs only when triggered"}});
    }
    const auto now = clock_.NowMs();
    const auto first =
        FirstFireOnStart(job->schedule_type, job->schedule_conf, job->time_zone, now, settings_.pre_read);
    if (!first) {
      return Error::Invalid("the job cannot be started",
                            {{"schedule_conf", "the schedule has no fire after now", "schedule"}});
    }
    tx.SetSchedule(id, *first, 0);
    tx.SetEnabled(id, true, now);
    return true;
  });
  if (!started) return started.error();
  return {};
}

Result<void> JobService::StopJob(int id) {
  auto stopped = InTransaction<bool>([&](JobStore::Tx& tx) -> Result<bool> {
    tx.LockSchedule(id);  // before the job: the order a scan takes them in
    if (!tx.SetEnabled(id, false, clock_.NowMs())) return NoJob(id);
    tx.SetSchedule(id, 0, 0);
    tx.WithdrawUnsent(id);
    return true;
  });
  if (!stopped) return stopped.error();
  return {};
}

std::vector<SentAheadFire> JobService::SentAhead(int job_id) {
  return store_.SentAhead(job_id);
}

std::vector<std::int64_t> JobService::WithdrawnClaims(int job_id) {
  return store_.WithdrawnClaims(job_id);
}

void JobService::MarkWithdrawnAhead(std::span<const std::int64_t> log_ids, std::string_view note) {
  store_.MarkWithdrawnAhead(log_ids, note);
}

Result<Fire> JobService::CreateManualFire(int job_id, TriggerType type,
                                          const std::optional<std::string>& param,
                                          const std::string& node_id) {
  const auto now = clock_.NowMs();
  const auto id = store_.InsertManualFire(job_id, type, param, node_id, now);
  if (!id) return NoJob(job_id);
  return Fire{.log_id = *id, .job_id = job_id, .scheduled_ms = now, .type = type, .param = param};
}

Result<RunOnce> JobService::CreateRunOnce(int job_id, std::int64_t fire_at_ms,
                                          const std::optional<std::string>& param, const std::string& who) {
  auto created = store_.InsertRunOnce(job_id, fire_at_ms, param, who, clock_.NowMs());
  if (!created) return NoJob(job_id);
  return *std::move(created);
}

std::vector<RunOnce> JobService::ListRunOnce(int job_id, int limit) {
  return store_.ListRunOnce(job_id, limit);
}

Result<RunOnce> JobService::CancelRunOnce(int job_id, std::int64_t id, const std::string& who) {
  return InTransaction<RunOnce>([&](JobStore::Tx& tx) -> Result<RunOnce> {
    // The lock orders this with the scan's taking of the request.
    const auto before = tx.LockRunOnce(job_id, id);
    if (!before) return Error::NotFound(fmt::format("run once {} of job {} not found", id, job_id));
    if (before->cancelled_ms != 0) {
      return Error::Conflict(
          fmt::format("run once {} was cancelled already, by {}", id, before->cancelled_by));
    }
    if (before->log_id != 0 && !tx.WithdrawUnclaimed(before->log_id)) {
      return Error::Conflict(fmt::format("run once {} has fired already: fire {} is being sent or was sent",
                                         id, before->log_id));
    }
    return tx.CancelRunOnce(id, clock_.NowMs(), who);
  });
}

}  // namespace cronwheel::admin
