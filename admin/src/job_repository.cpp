#include "admin/job_repository.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>
#include <unordered_map>

#include "admin/alarm.hpp"
#include "admin/job_catalog.hpp"
#include "admin/request_bodies.hpp"
#include "admin/scan_planner.hpp"
#include "pg_util.hpp"
#include "ringwheel/schedule.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

constexpr std::int64_t kStartDelayMs = 5000;  // XXL-JOB: start computes the first fire from now + 5 s
constexpr int kGlueHistoryKept = 30;

// CheckJobFields, then what needs the database: the group exists; child jobs exist and form no cycle.
void ValidateJob(pqxx::transaction_base& tx, Job& job, FieldErrors& errors) {
  CheckJobFields(job, errors);
  if (job.group_id > 0 && tx.exec_params("SELECT 1 FROM job_group WHERE id = $1", job.group_id).empty()) {
    errors.push_back({"group_id", fmt::format("job group {} does not exist", job.group_id)});
  }
  if (!job.child_job_ids.empty()) {
    // The graph of child links as it would be with this job saved.
    std::unordered_map<int, std::vector<int>> children;
    for (const auto& row :
         tx.exec("SELECT id, to_json(child_job_ids) FROM job WHERE cardinality(child_job_ids) > 0")) {
      children[row[0].as<int>()] = json::parse(row[1].c_str()).get<std::vector<int>>();
    }
    std::set<int> existing;
    for (const auto& row :
         tx.exec_params("SELECT id FROM job WHERE id = ANY($1::int[])", PgArray<int>(job.child_job_ids))) {
      existing.insert(row[0].as<int>());
    }
    for (int c : job.child_job_ids) {
      if (c == job.id) {
        errors.push_back({"child_job_ids", fmt::format("a job cannot be its own child (job {})", c)});
      } else if (!existing.contains(c)) {
        errors.push_back({"child_job_ids", fmt::format("job {} does not exist", c)});
      }
    }
    if (job.id != 0) {
      children[job.id] = job.child_job_ids;
      // Depth-first search from this job: reaching it again is a cycle.
      std::set<int> seen;
      std::vector<std::pair<int, std::vector<int>>> stack{{job.id, {job.id}}};
      while (!stack.empty()) {
        auto [node, path] = std::move(stack.back());
        stack.pop_back();
        for (int c : children[node]) {
          if (c == job.id) {
            std::string chain;
            for (int p : path)
              chain += std::to_string(p) + " -> ";
            errors.push_back(
                {"child_job_ids", fmt::format("child jobs would form a cycle: {}{}", chain, job.id)});
            stack.clear();
            break;
          }
          if (seen.insert(c).second) {
            auto next = path;
            next.push_back(c);
            stack.emplace_back(c, std::move(next));
          }
        }
      }
    }
  }
}

// Next fire for a job being started now (XXL-JOB: from now + 5 s).
std::optional<std::int64_t> FirstFire(const Job& job, std::int64_t now_ms) {
  auto s = ringwheel::Schedule::Parse(job.schedule_type, job.schedule_conf, job.time_zone, nullptr);
  if (!s) return std::nullopt;
  return s->NextFireMs(now_ms + kStartDelayMs);
}

std::string IntArrayLiteral(const std::vector<int>& v) {
  return PgArray<int>(v);
}

std::string TextArrayLiteral(const std::vector<std::string>& v) {
  // A text[] literal: every element quoted, with \ and " escaped.
  std::string out = "{";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : v[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

void WriteGlueHistory(pqxx::transaction_base& tx, const Job& j, std::int64_t now) {
  tx.exec_params(
      "INSERT INTO glue_history (job_id, glue_type, glue_source, glue_remark, glue_updated_ms, created_ms)"
      " VALUES ($1, $2, $3, $4, $5, $6)",
      j.id, std::string(ToString(j.glue_type)), j.glue_source, j.glue_remark, j.glue_updated_ms, now);
  tx.exec_params(
      "DELETE FROM glue_history WHERE job_id = $1 AND id NOT IN"
      " (SELECT id FROM glue_history WHERE job_id = $1 ORDER BY created_ms DESC, id DESC LIMIT $2)",
      j.id, kGlueHistoryKept);
}

JobLog LogFromRow(const pqxx::row& r) {
  JobLog l;
  l.id = r["id"].as<std::int64_t>();
  l.job_id = r["job_id"].as<int>();
  l.group_id = r["group_id"].as<int>();
  l.trigger_type = ParseTriggerType(r["trigger_type"].c_str()).value_or(TriggerType::kCron);
  l.scheduled_ms = r["scheduled_ms"].as<std::int64_t>();
  l.owner_node = r["owner_node"].is_null() ? "" : r["owner_node"].as<std::string>();
  l.executor_address = r["executor_address"].as<std::string>();
  l.executor_handler = r["executor_handler"].as<std::string>();
  l.executor_param = r["executor_param"].as<std::string>();
  l.shard_index = r["shard_index"].as<int>();
  l.shard_total = r["shard_total"].as<int>();
  l.retry_count = r["retry_count"].as<int>();
  if (!r["parent_log_id"].is_null()) l.parent_log_id = r["parent_log_id"].as<std::int64_t>();
  l.dispatch_ms = r["dispatch_ms"].as<std::int64_t>();
  l.trigger_ms = r["trigger_ms"].as<std::int64_t>();
  l.trigger_code = r["trigger_code"].as<int>();
  l.trigger_msg = r["trigger_msg"].as<std::string>();
  l.handle_ms = r["handle_ms"].as<std::int64_t>();
  l.handle_code = r["handle_code"].as<int>();
  l.handle_msg = r["handle_msg"].as<std::string>();
  l.alarm_status = r["alarm_status"].as<int>();
  l.skipped = r["skipped"].as<bool>();
  l.created_ms = r["created_ms"].as<std::int64_t>();
  l.status = r["status"].as<std::string>();
  return l;
}

}  // namespace

JobRepository::JobRepository(ringwheel::Clock& clock, PgPool& pool, std::vector<std::string> webhook_allow)
    : clock_(clock), pool_(pool), webhook_allow_(std::move(webhook_allow)) {}

void JobRepository::CheckWebhook(const Job& job, const Job* before, FieldErrors& errors) const {
  if (job.alarm_webhook.empty() || (before != nullptr && before->alarm_webhook == job.alarm_webhook)) return;
  if (WebhookAllowed(job.alarm_webhook, webhook_allow_)) return;
  errors.push_back({"alarm_webhook",
                    webhook_allow_.empty()
                        ? fmt::format("'{}' is not allowed: webhooks are off until the operator allows URL "
                                      "prefixes (setting alarm_webhook_allow)",
                                      job.alarm_webhook)
                        : fmt::format("'{}' is not allowed: it must start with one of {} (setting "
                                      "alarm_webhook_allow)",
                                      job.alarm_webhook, fmt::join(webhook_allow_, ", "))});
}

// --- groups
// ---------------------------------------------------------------------------------------------------

Validated<JobGroup> JobRepository::CreateGroup(const nlohmann::json& body) {
  JobGroup g;
  FieldErrors errors;
  ReadGroupBody(body, g, true, errors);
  if (!errors.empty()) return errors;
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Validated<JobGroup> {
    pqxx::work tx(conn);
    if (!tx.exec_params("SELECT 1 FROM job_group WHERE app_name = $1", g.app_name).empty()) {
      return FieldErrors{{"app_name", fmt::format("a group with app_name '{}' exists already", g.app_name)}};
    }
    const auto now = clock_.NowMs();
    const auto row = tx.exec_params1(
        std::string(
            "INSERT INTO job_group (app_name, title, address_type, addresses, access_token, created_ms,"
            " updated_ms) VALUES ($1, $2, $3, $4::text[], $5, $6, $6) RETURNING ") +
            kGroupColumns,
        g.app_name, g.title, std::string(ToString(g.address_type)), TextArrayLiteral(g.addresses),
        g.access_token, now);
    tx.commit();
    return GroupFromRow(row);
  });
}

std::optional<Validated<JobGroup>> JobRepository::UpdateGroup(int id, const nlohmann::json& body) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<Validated<JobGroup>> {
    pqxx::work tx(conn);
    const auto rows = tx.exec_params(
        std::string("SELECT ") + kGroupColumns + " FROM job_group WHERE id = $1 FOR UPDATE", id);
    if (rows.empty()) return std::nullopt;
    JobGroup g = GroupFromRow(rows[0]);
    FieldErrors errors;
    ReadGroupBody(body, g, false, errors);
    if (errors.empty() &&
        !tx.exec_params("SELECT 1 FROM job_group WHERE app_name = $1 AND id <> $2", g.app_name, id).empty()) {
      errors.push_back({"app_name", fmt::format("a group with app_name '{}' exists already", g.app_name)});
    }
    if (!errors.empty()) return Validated<JobGroup>(errors);
    const auto row = tx.exec_params1(
        std::string(
            "UPDATE job_group SET app_name = $2, title = $3, address_type = $4, addresses = $5::text[],"
            " access_token = $6, updated_ms = $7 WHERE id = $1 RETURNING ") +
            kGroupColumns,
        id, g.app_name, g.title, std::string(ToString(g.address_type)), TextArrayLiteral(g.addresses),
        g.access_token, clock_.NowMs());
    tx.commit();
    return Validated<JobGroup>(GroupFromRow(row));
  });
}

Outcome JobRepository::DeleteGroup(int id, std::string* why) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    if (tx.exec_params("SELECT 1 FROM job_group WHERE id = $1 FOR UPDATE", id).empty())
      return Outcome::kNotFound;
    const auto jobs = tx.exec_params1("SELECT count(*) FROM job WHERE group_id = $1", id)[0].as<int>();
    if (jobs > 0) {
      if (why) *why = fmt::format("group {} still has {} job(s); delete or move them first", id, jobs);
      return Outcome::kConflict;
    }
    tx.exec_params("DELETE FROM job_group WHERE id = $1", id);
    tx.commit();
    return Outcome::kOk;
  });
}

std::optional<JobGroup> JobRepository::GetGroup(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<JobGroup> {
    pqxx::read_transaction tx(conn);
    const auto rows =
        tx.exec_params(std::string("SELECT ") + kGroupColumns + " FROM job_group WHERE id = $1", id);
    if (rows.empty()) return std::nullopt;
    return GroupFromRow(rows[0]);
  });
}

std::vector<JobGroup> JobRepository::ListGroups() {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<JobGroup> out;
    for (const auto& r : tx.exec(std::string("SELECT ") + kGroupColumns + " FROM job_group ORDER BY id")) {
      out.push_back(GroupFromRow(r));
    }
    return out;
  });
}

// --- jobs
// -------------------------------------------------------------------------------------------------------

Validated<Job> JobRepository::CreateJob(const nlohmann::json& body) {
  Job job;
  FieldErrors errors;
  ReadJobBody(body, job, true, errors);
  if (errors.empty()) CheckWebhook(job, nullptr, errors);
  if (!errors.empty()) return errors;
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Validated<Job> {
    pqxx::work tx(conn);
    ValidateJob(tx, job, errors);
    const auto now = clock_.NowMs();
    if (errors.empty() && job.enabled) {
      const auto first = FirstFire(job, now);
      if (!first) {
        errors.push_back({"schedule_conf", "the schedule has no fire after now: it cannot be enabled"});
      } else {
        job.next_fire_ms = *first;
      }
    }
    if (!errors.empty()) return errors;
    const auto row = tx.exec_params1(
        std::string(
            "INSERT INTO job (group_id, description, author, alarm_email, alarm_webhook, schedule_type,"
            " schedule_conf, time_zone, misfire_strategy, route_strategy, handler, param, block_strategy,"
            " timeout_s, retry_count, retry_backoff_s, glue_type, glue_source, glue_remark, glue_updated_ms,"
            " child_job_ids, enabled, next_fire_ms, last_fire_ms, created_ms, updated_ms) VALUES ($1, $2, $3,"
            " $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21::int[], $22,"
            " $23, 0, $20, $20) RETURNING ") +
            kJobColumns,
        job.group_id, job.description, job.author, job.alarm_email, job.alarm_webhook, job.schedule_type,
        job.schedule_conf, job.time_zone, std::string(ToString(job.misfire_strategy)),
        std::string(ToString(job.route_strategy)), job.handler, job.param,
        std::string(ToString(job.block_strategy)), job.timeout_s, job.retry_count, job.retry_backoff_s,
        std::string(ToString(job.glue_type)), job.glue_source, job.glue_remark, now,
        IntArrayLiteral(job.child_job_ids), job.enabled, job.next_fire_ms);
    Job created = JobFromRow(row);
    if (created.glue_type != GlueType::kBean) WriteGlueHistory(tx, created, now);
    tx.commit();
    return created;
  });
}

std::optional<Validated<Job>> JobRepository::UpdateJob(int id, const nlohmann::json& body) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<Validated<Job>> {
    pqxx::work tx(conn);
    const auto rows =
        tx.exec_params(std::string("SELECT ") + kJobColumns + " FROM job WHERE id = $1 FOR UPDATE", id);
    if (rows.empty()) return std::nullopt;
    const Job before = JobFromRow(rows[0]);
    Job job = before;
    FieldErrors errors;
    ReadJobBody(body, job, false, errors);
    if (errors.empty()) CheckWebhook(job, &before, errors);
    if (errors.empty()) ValidateJob(tx, job, errors);
    const auto now = clock_.NowMs();
    const bool schedule_changed = job.schedule_type != before.schedule_type ||
                                  job.schedule_conf != before.schedule_conf ||
                                  job.time_zone != before.time_zone;
    if (errors.empty() && job.enabled && (!before.enabled || schedule_changed)) {
      const auto first = FirstFire(job, now);
      if (!first) {
        errors.push_back({"schedule_conf", "the schedule has no fire after now: it cannot be enabled"});
      } else {
        job.next_fire_ms = *first;
        job.stop_reason.clear();
      }
    }
    if (!job.enabled) {
      job.next_fire_ms = 0;
    }
    if (!errors.empty()) return Validated<Job>(errors);
    const bool glue_changed = job.glue_type != before.glue_type || job.glue_source != before.glue_source;
    if (glue_changed) job.glue_updated_ms = std::max(now, before.glue_updated_ms + 1);
    const auto row = tx.exec_params1(
        std::string(
            "UPDATE job SET group_id = $2, description = $3, author = $4, alarm_email = $5, alarm_webhook = "
            "$6,"
            " schedule_type = $7, schedule_conf = $8, time_zone = $9, misfire_strategy = $10,"
            " route_strategy = $11, handler = $12, param = $13, block_strategy = $14, timeout_s = $15,"
            " retry_count = $16, retry_backoff_s = $17, glue_type = $18, glue_source = $19, glue_remark = "
            "$20,"
            " glue_updated_ms = $21, child_job_ids = $22::int[], enabled = $23, next_fire_ms = $24,"
            " stop_reason = $25, updated_ms = $26 WHERE id = $1 RETURNING ") +
            kJobColumns,
        id, job.group_id, job.description, job.author, job.alarm_email, job.alarm_webhook, job.schedule_type,
        job.schedule_conf, job.time_zone, std::string(ToString(job.misfire_strategy)),
        std::string(ToString(job.route_strategy)), job.handler, job.param,
        std::string(ToString(job.block_strategy)), job.timeout_s, job.retry_count, job.retry_backoff_s,
        std::string(ToString(job.glue_type)), job.glue_source, job.glue_remark, job.glue_updated_ms,
        IntArrayLiteral(job.child_job_ids), job.enabled, job.next_fire_ms, job.stop_reason,
        std::max(now, before.updated_ms + 1));
    Job updated = JobFromRow(row);
    if (glue_changed && updated.glue_type != GlueType::kBean) WriteGlueHistory(tx, updated, now);
    if (!updated.enabled || schedule_changed) {
      // Fires already written for the old schedule or a stopped job, and not yet being sent, are withdrawn.
      tx.exec_params(
          "DELETE FROM job_log WHERE job_id = $1 AND trigger_type = 'CRON' AND trigger_code = 0 AND "
          "dispatch_ms = 0"
          " AND NOT skipped AND scheduled_ms > $2",
          id, now);
    }
    tx.commit();
    return Validated<Job>(std::move(updated));
  });
}

Outcome JobRepository::DeleteJob(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    // Child links to it go too, so no job points at a missing child.
    tx.exec_params(
        "UPDATE job SET child_job_ids = array_remove(child_job_ids, $1), updated_ms = updated_ms + 1"
        " WHERE $1 = ANY(child_job_ids)",
        id);
    const auto n = tx.exec_params("DELETE FROM job WHERE id = $1", id).affected_rows();
    tx.commit();
    return n == 0 ? Outcome::kNotFound : Outcome::kOk;
  });
}

std::optional<Job> JobRepository::GetJob(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<Job> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params(std::string("SELECT ") + kJobColumns + " FROM job WHERE id = $1", id);
    if (rows.empty()) return std::nullopt;
    return JobFromRow(rows[0]);
  });
}

JobPage JobRepository::ListJobs(const JobQuery& q) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::string where = "WHERE true";
    if (q.group_id) where += " AND group_id = " + std::to_string(*q.group_id);
    if (q.enabled) where += *q.enabled ? " AND enabled" : " AND NOT enabled";
    if (q.group_ids) where += " AND group_id = ANY(" + tx.quote(PgArray<int>(*q.group_ids)) + "::int[])";
    if (q.text && !q.text->empty()) {
      const auto pattern = tx.quote("%" + tx.esc_like(*q.text) + "%");
      where += " AND (description ILIKE " + pattern + " OR handler ILIKE " + pattern + ")";
    }
    JobPage page;
    page.total = tx.exec1("SELECT count(*) FROM job " + where)[0].as<std::int64_t>();
    for (const auto& r : tx.exec_params(
             std::string("SELECT ") + kJobColumns + " FROM job " + where + " ORDER BY id LIMIT $1 OFFSET $2",
             q.limit, q.offset)) {
      page.items.push_back(JobFromRow(r));
    }
    return page;
  });
}

Outcome JobRepository::StartJob(int id, FieldErrors* errors) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const auto rows =
        tx.exec_params(std::string("SELECT ") + kJobColumns + " FROM job WHERE id = $1 FOR UPDATE", id);
    if (rows.empty()) return Outcome::kNotFound;
    const Job job = JobFromRow(rows[0]);
    if (job.schedule_type == "NONE") {
      if (errors) {
        errors->push_back({"schedule_type",
                           "a job with schedule_type NONE cannot be started: it runs only when triggered"});
      }
      return Outcome::kInvalid;
    }
    const auto now = clock_.NowMs();
    const auto first = FirstFire(job, now);
    if (!first) {
      if (errors) errors->push_back({"schedule_conf", "the schedule has no fire after now"});
      return Outcome::kInvalid;
    }
    tx.exec_params(
        "UPDATE job SET enabled = true, next_fire_ms = $2, last_fire_ms = 0, stop_reason = '', updated_ms = "
        "$3"
        " WHERE id = $1",
        id, *first, std::max(now, job.updated_ms + 1));
    tx.commit();
    return Outcome::kOk;
  });
}

Outcome JobRepository::StopJob(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const auto now = clock_.NowMs();
    const auto n = tx.exec_params(
                         "UPDATE job SET enabled = false, next_fire_ms = 0, last_fire_ms = 0,"
                         " updated_ms = GREATEST($2, updated_ms + 1) WHERE id = $1",
                         id, now)
                       .affected_rows();
    if (n == 0) return Outcome::kNotFound;
    tx.exec_params(
        "DELETE FROM job_log WHERE job_id = $1 AND trigger_type = 'CRON' AND trigger_code = 0 AND "
        "dispatch_ms = 0"
        " AND NOT skipped AND scheduled_ms > $2",
        id, now);
    tx.commit();
    return Outcome::kOk;
  });
}

std::optional<std::int64_t> JobRepository::CreateManualFire(int job_id, TriggerType type,
                                                            const std::optional<std::string>& param,
                                                            const std::string& node_id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<std::int64_t> {
    pqxx::work tx(conn);
    const auto rows = tx.exec_params("SELECT group_id, param, retry_count FROM job WHERE id = $1", job_id);
    if (rows.empty()) return std::nullopt;
    const auto now = clock_.NowMs();
    const auto id = tx.exec_params1(
                          "INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, owner_node,"
                          " executor_param, retry_count, created_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $4)"
                          " RETURNING id",
                          job_id, rows[0][0].as<int>(), std::string(ToString(type)), now, node_id,
                          param.value_or(rows[0][1].as<std::string>()), rows[0][2].as<int>())[0]
                        .as<std::int64_t>();
    tx.commit();
    return id;
  });
}

// --- logs
// --------------------------------------------------------------------------------------------------------

LogPage JobRepository::ListLogs(const LogQuery& q) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::string where = "WHERE true";
    if (q.job_id) where += " AND job_id = " + std::to_string(*q.job_id);
    if (q.group_id) where += " AND group_id = " + std::to_string(*q.group_id);
    if (q.group_ids) where += " AND group_id = ANY(" + tx.quote(PgArray<int>(*q.group_ids)) + "::int[])";
    if (q.status) where += " AND status = " + tx.quote(*q.status);
    if (q.from_ms) where += " AND scheduled_ms >= " + std::to_string(*q.from_ms);
    if (q.to_ms) where += " AND scheduled_ms < " + std::to_string(*q.to_ms);
    LogPage page;
    page.total = tx.exec1("SELECT count(*) FROM job_log " + where)[0].as<std::int64_t>();
    for (const auto& r : tx.exec_params(
             "SELECT * FROM job_log " + where + " ORDER BY scheduled_ms DESC, id DESC LIMIT $1 OFFSET $2",
             q.limit, q.offset)) {
      page.items.push_back(LogFromRow(r));
    }
    return page;
  });
}

std::optional<JobLog> JobRepository::GetLog(std::int64_t id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<JobLog> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params("SELECT * FROM job_log WHERE id = $1", id);
    if (rows.empty()) return std::nullopt;
    return LogFromRow(rows[0]);
  });
}

// --- JSON
// ------------------------------------------------------------------------------------------------------

nlohmann::json ToJson(const JobGroup& g, bool include_token) {
  json j{{"id", g.id},
         {"app_name", g.app_name},
         {"title", g.title},
         {"address_type", ToString(g.address_type)},
         {"addresses", g.addresses},
         {"has_access_token", g.access_token.has_value()},
         {"created_ms", g.created_ms},
         {"updated_ms", g.updated_ms}};
  if (include_token) j["access_token"] = g.access_token ? json(*g.access_token) : json(nullptr);
  return j;
}

nlohmann::json ToJson(const Job& j) {
  return {{"id", j.id},
          {"group_id", j.group_id},
          {"description", j.description},
          {"author", j.author},
          {"alarm_email", j.alarm_email},
          {"alarm_webhook", j.alarm_webhook},
          {"schedule_type", j.schedule_type},
          {"schedule_conf", j.schedule_conf},
          {"time_zone", j.time_zone},
          {"misfire_strategy", ToString(j.misfire_strategy)},
          {"route_strategy", ToString(j.route_strategy)},
          {"handler", j.handler},
          {"param", j.param},
          {"block_strategy", ToString(j.block_strategy)},
          {"timeout_s", j.timeout_s},
          {"retry_count", j.retry_count},
          {"retry_backoff_s", j.retry_backoff_s},
          {"glue_type", ToString(j.glue_type)},
          {"glue_source", j.glue_source},
          {"glue_remark", j.glue_remark},
          {"glue_updated_ms", j.glue_updated_ms},
          {"child_job_ids", j.child_job_ids},
          {"enabled", j.enabled},
          {"next_fire_ms", j.next_fire_ms == kAwaitingCompletion ? 0 : j.next_fire_ms},
          {"last_fire_ms", j.last_fire_ms},
          {"stop_reason", j.stop_reason},
          {"created_ms", j.created_ms},
          {"updated_ms", j.updated_ms}};
}

nlohmann::json ToJson(const JobLog& l) {
  return {{"id", l.id},
          {"job_id", l.job_id},
          {"group_id", l.group_id},
          {"trigger_type", ToString(l.trigger_type)},
          {"scheduled_ms", l.scheduled_ms},
          {"status", l.status},
          {"executor_address", l.executor_address},
          {"executor_handler", l.executor_handler},
          {"executor_param", l.executor_param},
          {"shard_index", l.shard_index},
          {"shard_total", l.shard_total},
          {"retry_count", l.retry_count},
          {"parent_log_id", l.parent_log_id ? json(*l.parent_log_id) : json(nullptr)},
          {"trigger_ms", l.trigger_ms},
          {"trigger_code", l.trigger_code},
          {"trigger_msg", l.trigger_msg},
          {"handle_ms", l.handle_ms},
          {"handle_code", l.handle_code},
          {"handle_msg", l.handle_msg},
          {"alarm_status", l.alarm_status},
          {"owner_node", l.owner_node}};
}

nlohmann::json ToJson(const FieldErrors& errors) {
  json arr = json::array();
  for (const auto& e : errors)
    arr.push_back({{"field", e.field}, {"message", e.message}});
  return arr;
}

}  // namespace cronwheel::admin
