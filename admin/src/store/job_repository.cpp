#include "admin/store/job_repository.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "admin/model/validation.hpp"
#include "admin/schedule/next_fire.hpp"
#include "admin/store/fire_log.hpp"
#include "cronwheel/json.hpp"
#include "store/alert_channel_table.hpp"
#include "store/calendar_table.hpp"
#include "store/job_table.hpp"
#include "store/pg_util.hpp"
#include "store/rows.hpp"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

constexpr int kGlueHistoryKept = 30;

constexpr const char* kRunOnceColumns =
    "id, job_id, fire_at_ms, executor_param, log_id, cancelled_ms, cancelled_by, created_by, created_ms";

RunOnce RunOnceFromRow(const pqxx::row& r) {
  RunOnce o{.id = r["id"].as<std::int64_t>(),
            .job_id = r["job_id"].as<int>(),
            .fire_at_ms = r["fire_at_ms"].as<std::int64_t>(),
            .log_id = r["log_id"].as<std::int64_t>(),
            .cancelled_ms = r["cancelled_ms"].as<std::int64_t>(),
            .cancelled_by = r["cancelled_by"].as<std::string>(),
            .created_by = r["created_by"].as<std::string>(),
            .created_ms = r["created_ms"].as<std::int64_t>()};
  if (!r["executor_param"].is_null()) o.param = r["executor_param"].as<std::string>();
  return o;
}

// A cycle through `job` in the child graph as it would be with `job` saved: the jobs on it from `job` back
// to it ({1, 2, 1}), or empty.
std::vector<int> ChildCycle(pqxx::transaction_base& tx, const Job& job) {
  std::unordered_map<int, std::vector<int>> children;
  for (
      const auto& row : tx.exec(
          R"sql(SELECT id, to_json(child_job_ids) AS children FROM job WHERE cardinality(child_job_ids) > 0)sql")) {
    children[row["id"].as<int>()] = json::parse(row["children"].c_str()).get<std::vector<int>>();
  }
  children[job.id] = job.child_job_ids;
  // Depth-first search from this job: reaching it again is a cycle.
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

// The group of each of `ids` that is a job.
std::map<int, int> GroupsOfJobs(pqxx::transaction_base& tx, const std::vector<int>& ids) {
  std::map<int, int> out;
  for (const auto& row :
       tx.exec_params(R"sql(SELECT id, group_id FROM job WHERE id = ANY($1::int[]))sql", PgArray<int>(ids))) {
    out[row["id"].as<int>()] = row["group_id"].as<int>();
  }
  return out;
}

// CheckJobFields, then what needs the database: the group exists; its alert channels exist; child jobs exist,
// are visible to the caller (but for the `kept` ones, which the job had) and form no cycle.
void ValidateJob(pqxx::transaction_base& tx, Job& job, const std::vector<int>& kept,
                 const JobRepository::Visible& visible, FieldErrors& errors) {
  CheckJobFields(job, errors);
  if (job.group_id > 0 &&
      tx.exec_params(R"sql(SELECT 1 FROM job_group WHERE id = $1)sql", job.group_id).empty()) {
    errors.push_back({"group_id",
                      fmt::format("job group {} does not exist", job.group_id),
                      "not_found",
                      {{"id", job.group_id}}});
  }
  alert_channel_table::CheckExist(tx, job.alert_channel_ids, "alert_channel_ids", errors);
  calendar_table::CheckExist(tx, job.calendar_ids, "calendar_ids", errors);
  if (job.child_job_ids.empty()) return;
  const auto group_of = GroupsOfJobs(tx, job.child_job_ids);
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
  const auto cycle = ChildCycle(tx, job);
  if (cycle.empty()) return;
  const auto on_cycle = GroupsOfJobs(tx, cycle);
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

void WriteGlueHistory(pqxx::transaction_base& tx, const Job& j, std::int64_t now) {
  tx.exec_params(R"sql(
    INSERT INTO glue_history (job_id, glue_type, glue_source, glue_remark, glue_updated_ms, created_ms)
    VALUES ($1, $2, $3, $4, $5, $6)
  )sql",
                 j.id, std::string(ToString(j.glue_type)), j.glue_source, j.glue_remark, j.glue_updated_ms,
                 now);
  tx.exec_params(R"sql(
    DELETE FROM glue_history
     WHERE job_id = $1
       AND id NOT IN (SELECT id FROM glue_history WHERE job_id = $1 ORDER BY created_ms DESC, id DESC LIMIT $2)
  )sql",
                 j.id, kGlueHistoryKept);
}

// Enables `job` from now: its first fire (next_fire.hpp), or an error on schedule_conf when it has none.
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

}  // namespace

JobRepository::JobRepository(ringwheel::Clock& clock, PgPool& pool, Settings settings)
    : clock_(clock), pool_(pool), settings_(settings) {}

Result<Job> JobRepository::CreateJob(Job job, const Visible& visible) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<Job> {
    pqxx::work tx(conn);
    FieldErrors errors;
    ValidateJob(tx, job, {}, visible, errors);
    const auto now = clock_.NowMs();
    if (errors.empty() && job.enabled) SetFirstFire(job, now, settings_.pre_read, errors);
    if (!errors.empty()) return Error::Invalid("the job is not valid", std::move(errors));
    const auto row = tx.exec_params1(
        fmt::format(R"sql(
      INSERT INTO job (group_id, description, author, alarm_email, alarm_webhook, schedule_type, schedule_conf,
                       time_zone, misfire_strategy, route_strategy, handler, param, block_strategy, timeout_s,
                       retry_count, retry_backoff_s, glue_type, glue_source, glue_remark, glue_updated_ms,
                       child_job_ids, tags, alert_channel_ids, calendar_ids, start_ms, end_ms,
                       concurrency_policy, max_concurrent, enabled, created_ms, updated_ms)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
              $21::int[], $23::text[], $24::int[], $25::int[], $26, $27, $28, $29, $22, $20, $20)
      RETURNING {}
    )sql",
                    kJobColumns),
        job.group_id, job.description, job.author, job.alarm_email, job.alarm_webhook, job.schedule_type,
        job.schedule_conf, job.time_zone, std::string(ToString(job.misfire_strategy)),
        std::string(ToString(job.route_strategy)), job.handler, job.param,
        std::string(ToString(job.block_strategy)), job.timeout_s, job.retry_count, job.retry_backoff_s,
        std::string(ToString(job.glue_type)), job.glue_source, job.glue_remark, now,
        PgArray<int>(job.child_job_ids), job.enabled, PgTextArray(job.tags),
        PgArray<int>(job.alert_channel_ids), PgArray<int>(job.calendar_ids), job.start_ms, job.end_ms,
        std::string(ToString(job.concurrency_policy)), job.max_concurrent);
    Job created = JobFromRow(row);
    created.next_fire_ms = job.enabled ? job.next_fire_ms : 0;
    job_table::SetSchedule(tx, created.id, created.next_fire_ms, 0);
    if (created.glue_type != GlueType::kBean) WriteGlueHistory(tx, created, now);
    tx.commit();
    return created;
  });
}

Result<Job> JobRepository::UpdateJob(int id, const Edit& edit, const Visible& visible) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<Job> {
    pqxx::work tx(conn);
    job_table::LockSchedule(tx, id);
    const auto rows =
        tx.exec_params(fmt::format("SELECT {} FROM job WHERE id = $1 FOR UPDATE", kJobColumns), id);
    if (rows.empty()) return Error::NotFound(fmt::format("job {} not found", id));
    const Job before = JobFromRow(rows[0]);
    Job job = before;
    if (auto edited = edit(job); !edited) return edited.error();
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
    job_table::SetSchedule(tx, id, job.next_fire_ms, std::nullopt);
    const auto row = tx.exec_params1(
        fmt::format(R"sql(
      UPDATE job
         SET group_id = $2, description = $3, author = $4, alarm_email = $5, alarm_webhook = $6,
             schedule_type = $7, schedule_conf = $8, time_zone = $9, misfire_strategy = $10, route_strategy = $11,
             handler = $12, param = $13, block_strategy = $14, timeout_s = $15, retry_count = $16,
             retry_backoff_s = $17, glue_type = $18, glue_source = $19, glue_remark = $20, glue_updated_ms = $21,
             child_job_ids = $22::int[], enabled = $23, stop_reason = $24, updated_ms = $25,
             tags = $26::text[], alert_channel_ids = $27::int[], calendar_ids = $28::int[], start_ms = $29,
             end_ms = $30, concurrency_policy = $31, max_concurrent = $32
       WHERE id = $1
      RETURNING {}
    )sql",
                    kJobColumns),
        id, job.group_id, job.description, job.author, job.alarm_email, job.alarm_webhook, job.schedule_type,
        job.schedule_conf, job.time_zone, std::string(ToString(job.misfire_strategy)),
        std::string(ToString(job.route_strategy)), job.handler, job.param,
        std::string(ToString(job.block_strategy)), job.timeout_s, job.retry_count, job.retry_backoff_s,
        std::string(ToString(job.glue_type)), job.glue_source, job.glue_remark, job.glue_updated_ms,
        PgArray<int>(job.child_job_ids), job.enabled, job.stop_reason, std::max(now, before.updated_ms + 1),
        PgTextArray(job.tags), PgArray<int>(job.alert_channel_ids), PgArray<int>(job.calendar_ids),
        job.start_ms, job.end_ms, std::string(ToString(job.concurrency_policy)), job.max_concurrent);
    Job updated = JobFromRow(row);
    if (glue_changed && updated.glue_type != GlueType::kBean) WriteGlueHistory(tx, updated, now);
    // Fires already written for the old schedule or a stopped job, and not yet being sent, are withdrawn.
    if (!updated.enabled || schedule_changed) fire_log::WithdrawUnsent(tx, id, clock_);
    tx.commit();
    return updated;
  });
}

Result<void> JobRepository::DeleteJob(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<void> {
    pqxx::work tx(conn);
    // Its schedule partition first, before any job row: a scan holding it has committed the fires it writes
    // for this job when this goes on, and the next scan reads the job gone (sql/024).
    job_table::LockSchedule(tx, id);
    // A workflow's node names it: its runs would fail at that node. The workflows are named.
    const auto workflows = tx.exec_params(R"sql(
      SELECT id, name FROM workflow WHERE nodes @> jsonb_build_array(jsonb_build_object('job_id', $1::int))
       ORDER BY id LIMIT 5
    )sql",
                                          id);
    if (!workflows.empty()) {
      std::string names;
      for (const auto& w : workflows) {
        names += fmt::format("{}{} '{}'", names.empty() ? "" : ", ", w["id"].as<int>(),
                             w["name"].as<std::string>());
      }
      return Error::Conflict(
          fmt::format("job {} is a node of workflow {}: take it out of the workflow first", id, names));
    }
    // Child links to it go too, so no job points at a missing child.
    tx.exec_params(R"sql(
      UPDATE job SET child_job_ids = array_remove(child_job_ids, $1), updated_ms = updated_ms + 1
       WHERE $1 = ANY(child_job_ids)
    )sql",
                   id);
    // Its fires not accepted by an executor, before the job row takes their fire_open rows with it: one an
    // admin claimed is named for that admin, which then does not send it.
    fire_log::WithdrawUnsent(tx, id, clock_);
    const auto n = tx.exec_params(R"sql(DELETE FROM job WHERE id = $1)sql", id).affected_rows();
    if (n == 0) return Error::NotFound(fmt::format("job {} not found", id));
    tx.commit();
    // Its fires, which have no foreign key to it (sql/024), in a transaction of their own: a job with
    // millions of fires does not hold its partition's scan back meanwhile. Its open fires went with the job
    // (fire_open's key), and those claimed for sending were named above, so none of these is sent.
    pqxx::work fires(conn);
    fire_log::DeleteJobFires(fires, id);
    fires.commit();
    return {};
  });
}

std::optional<Job> JobRepository::GetJob(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<Job> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params(fmt::format("SELECT {} FROM job WHERE id = $1", kJobColumns), id);
    if (rows.empty()) return std::nullopt;
    return JobFromRow(rows[0]);
  });
}

JobPage JobRepository::ListJobs(const JobQuery& q) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::string where = "WHERE true";
    if (q.group_id) where += fmt::format(" AND group_id = {}", *q.group_id);
    if (q.enabled) where += *q.enabled ? " AND enabled" : " AND NOT enabled";
    if (q.group_ids) where += " AND group_id = ANY(" + tx.quote(PgArray<int>(*q.group_ids)) + "::int[])";
    if (q.text && !q.text->empty()) {
      const auto pattern = tx.quote("%" + tx.esc_like(*q.text) + "%");
      where += fmt::format(
          " AND (description ILIKE {0} OR handler ILIKE {0} OR array_to_string(tags, ' ') ILIKE {0})",
          pattern);
    }
    if (!q.tags.empty()) where += " AND tags @> " + tx.quote(PgTextArray(q.tags)) + "::text[]";
    JobPage page;
    page.total = tx.exec1(R"sql(SELECT count(*) FROM job )sql" + where)[0].as<std::int64_t>();
    for (const auto& r : tx.exec_params(
             fmt::format("SELECT {} FROM job {} ORDER BY id LIMIT $1 OFFSET $2", kJobColumns, where), q.limit,
             q.offset)) {
      page.items.push_back(JobFromRow(r));
    }
    return page;
  });
}

std::vector<TagCount> JobRepository::ListTags(const std::optional<std::vector<int>>& group_ids) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params(
        R"sql(
      SELECT t.tag, count(*) AS jobs
        FROM job, unnest(job.tags) AS t(tag)
       WHERE $1::int[] IS NULL OR job.group_id = ANY($1::int[])
       GROUP BY t.tag
       ORDER BY t.tag
    )sql",
        group_ids ? std::optional<std::string>(PgArray<int>(*group_ids)) : std::optional<std::string>());
    std::vector<TagCount> tags;
    tags.reserve(rows.size());
    for (const auto& r : rows)
      tags.push_back({r["tag"].as<std::string>(), r["jobs"].as<std::int64_t>()});
    return tags;
  });
}

Result<void> JobRepository::StartJob(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<void> {
    pqxx::work tx(conn);
    job_table::LockSchedule(tx, id);
    const auto rows =
        tx.exec_params(fmt::format("SELECT {} FROM job WHERE id = $1 FOR UPDATE", kJobColumns), id);
    if (rows.empty()) return Error::NotFound(fmt::format("job {} not found", id));
    const Job job = JobFromRow(rows[0]);
    if (job.schedule_type == "NONE") {
      return Error::Invalid(
          "the job cannot be started",
          {{"schedule_type",
            "a job with schedule_type NONE cannot be started: it runs only when triggered"}});
    }
    const auto now = clock_.NowMs();
    const auto first =
        FirstFireOnStart(job.schedule_type, job.schedule_conf, job.time_zone, now, settings_.pre_read);
    if (!first) {
      return Error::Invalid("the job cannot be started",
                            {{"schedule_conf", "the schedule has no fire after now", "schedule"}});
    }
    job_table::SetSchedule(tx, id, *first, 0);
    tx.exec_params(R"sql(UPDATE job SET enabled = true, stop_reason = '', updated_ms = $2 WHERE id = $1)sql",
                   id, std::max(now, job.updated_ms + 1));
    tx.commit();
    return {};
  });
}

Result<void> JobRepository::StopJob(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<void> {
    pqxx::work tx(conn);
    const auto now = clock_.NowMs();
    job_table::LockSchedule(tx, id);  // before job: the order a scan takes them in
    const auto sql =
        "UPDATE job SET enabled = false, updated_ms = GREATEST($2, updated_ms + 1) WHERE id = $1";
    const auto n = tx.exec_params(sql, id, now).affected_rows();
    if (n == 0) return Error::NotFound(fmt::format("job {} not found", id));
    job_table::SetSchedule(tx, id, 0, 0);
    fire_log::WithdrawUnsent(tx, id, clock_);
    tx.commit();
    return {};
  });
}

Result<Fire> JobRepository::CreateManualFire(int job_id, TriggerType type,
                                             const std::optional<std::string>& param,
                                             const std::string& node_id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<Fire> {
    pqxx::work tx(conn);
    const auto now = clock_.NowMs();
    const auto id = fire_log::InsertManual(tx, job_id, type, param, node_id, now);
    if (!id) return Error::NotFound(fmt::format("job {} not found", job_id));
    tx.commit();
    return Fire{.log_id = *id, .job_id = job_id, .scheduled_ms = now, .type = type, .param = param};
  });
}

Result<RunOnce> JobRepository::CreateRunOnce(int job_id, std::int64_t fire_at_ms,
                                             const std::optional<std::string>& param,
                                             const std::string& who) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<RunOnce> {
    pqxx::work tx(conn);
    const auto rows = tx.exec_params(fmt::format(R"sql(
      INSERT INTO run_once (job_id, fire_at_ms, executor_param, created_by, created_ms)
      SELECT id, $2, $3, $4, $5 FROM job WHERE id = $1
      RETURNING {}
    )sql",
                                                 kRunOnceColumns),
                                     job_id, fire_at_ms, param, who, clock_.NowMs());
    if (rows.empty()) return Error::NotFound(fmt::format("job {} not found", job_id));
    tx.commit();
    return RunOnceFromRow(rows[0]);
  });
}

std::vector<RunOnce> JobRepository::ListRunOnce(int job_id, int limit) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<RunOnce> out;
    for (
        const auto& r : tx.exec_params(
            fmt::format(
                R"sql(SELECT {} FROM run_once WHERE job_id = $1 ORDER BY fire_at_ms DESC, id DESC LIMIT $2)sql",
                kRunOnceColumns),
            job_id, limit)) {
      out.push_back(RunOnceFromRow(r));
    }
    return out;
  });
}

Result<RunOnce> JobRepository::CancelRunOnce(int job_id, std::int64_t id, const std::string& who) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<RunOnce> {
    pqxx::work tx(conn);
    // The lock orders this with the scan's taking of the request (job_table::TakeDueRunOnce).
    const auto found = tx.exec_params(
        fmt::format(R"sql(SELECT {} FROM run_once WHERE id = $1 AND job_id = $2 FOR UPDATE)sql",
                    kRunOnceColumns),
        id, job_id);
    if (found.empty()) return Error::NotFound(fmt::format("run once {} of job {} not found", id, job_id));
    const auto before = RunOnceFromRow(found[0]);
    if (before.cancelled_ms != 0) {
      return Error::Conflict(
          fmt::format("run once {} was cancelled already, by {}", id, before.cancelled_by));
    }
    if (before.log_id != 0 && !fire_log::WithdrawUnclaimed(tx, before.log_id)) {
      return Error::Conflict(
          fmt::format("run once {} has fired already: fire {} is being sent or was sent", id, before.log_id));
    }
    const auto rows = tx.exec_params(fmt::format(R"sql(
      UPDATE run_once SET cancelled_ms = $2, cancelled_by = $3, log_id = 0 WHERE id = $1 RETURNING {}
    )sql",
                                                 kRunOnceColumns),
                                     id, clock_.NowMs(), who);
    tx.commit();
    return RunOnceFromRow(rows[0]);
  });
}

}  // namespace cronwheel::admin
