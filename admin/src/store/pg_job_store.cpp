// JobStore on PostgreSQL (admin/store/pg_job_store.hpp): statements only; the rules are JobService's.
#include "admin/store/pg_job_store.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "admin/store/fire_log.hpp"
#include "cronwheel/json.hpp"
#include "store/job_table.hpp"
#include "store/pg_util.hpp"
#include "store/rows.hpp"

namespace cronwheel::admin {
namespace {

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

void WriteGlueHistory(pqxx::transaction_base& tx, const Job& j, std::int64_t now, int keep) {
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
                 j.id, keep);
}

std::vector<int> Missing(pqxx::transaction_base& tx, std::string_view table, std::span<const int> ids) {
  std::vector<int> out;
  if (ids.empty()) return out;
  for (const auto& r :
       tx.exec_params(fmt::format("SELECT i FROM unnest($1::int[]) WITH ORDINALITY AS u(i, n) "
                                  "WHERE NOT EXISTS (SELECT 1 FROM {} WHERE id = u.i) ORDER BY n",
                                  table),
                      PgArray<int>(ids))) {
    out.push_back(r[0].as<int>());
  }
  return out;
}

class PgTx final : public JobStore::Tx {
 public:
  PgTx(pqxx::transaction_base& tx, ringwheel::Clock& clock) : tx_(tx), clock_(clock) {}

  bool GroupExists(int group_id) override {
    return !tx_.exec_params(R"sql(SELECT 1 FROM job_group WHERE id = $1)sql", group_id).empty();
  }
  std::vector<int> MissingAlertChannels(std::span<const int> ids) override {
    return Missing(tx_, "alert_channel", ids);
  }
  std::vector<int> MissingCalendars(std::span<const int> ids) override {
    return Missing(tx_, "calendar", ids);
  }
  std::map<int, int> GroupsOfJobs(std::span<const int> ids) override {
    std::map<int, int> out;
    for (const auto& row : tx_.exec_params(R"sql(SELECT id, group_id FROM job WHERE id = ANY($1::int[]))sql",
                                           PgArray<int>(ids))) {
      out[row["id"].as<int>()] = row["group_id"].as<int>();
    }
    return out;
  }
  std::unordered_map<int, std::vector<int>> ChildLinks() override {
    std::unordered_map<int, std::vector<int>> children;
    for (
        const auto& row : tx_.exec(
            R"sql(SELECT id, to_json(child_job_ids) AS children FROM job WHERE cardinality(child_job_ids) > 0)sql")) {
      children[row["id"].as<int>()] = nlohmann::json::parse(row["children"].c_str()).get<std::vector<int>>();
    }
    return children;
  }
  void LockSchedule(int id) override { job_table::LockSchedule(tx_, id); }
  std::optional<Job> LockJob(int id) override {
    job_table::LockSchedule(tx_, id);
    const auto rows =
        tx_.exec_params(fmt::format("SELECT {} FROM job WHERE id = $1 FOR UPDATE", kJobColumns), id);
    if (rows.empty()) return std::nullopt;
    return JobFromRow(rows[0]);
  }
  Job InsertJob(const Job& job, std::int64_t now_ms) override {
    auto& tx = tx_;
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
        std::string(ToString(job.glue_type)), job.glue_source, job.glue_remark, now_ms,
        PgArray<int>(job.child_job_ids), job.enabled, PgTextArray(job.tags),
        PgArray<int>(job.alert_channel_ids), PgArray<int>(job.calendar_ids), job.start_ms, job.end_ms,
        std::string(ToString(job.concurrency_policy)), job.max_concurrent);
    return JobFromRow(row);
  }
  Job UpdateJob(const Job& job, std::int64_t updated_ms) override {
    auto& tx = tx_;
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
        job.id, job.group_id, job.description, job.author, job.alarm_email, job.alarm_webhook,
        job.schedule_type, job.schedule_conf, job.time_zone, std::string(ToString(job.misfire_strategy)),
        std::string(ToString(job.route_strategy)), job.handler, job.param,
        std::string(ToString(job.block_strategy)), job.timeout_s, job.retry_count, job.retry_backoff_s,
        std::string(ToString(job.glue_type)), job.glue_source, job.glue_remark, job.glue_updated_ms,
        PgArray<int>(job.child_job_ids), job.enabled, job.stop_reason, updated_ms, PgTextArray(job.tags),
        PgArray<int>(job.alert_channel_ids), PgArray<int>(job.calendar_ids), job.start_ms, job.end_ms,
        std::string(ToString(job.concurrency_policy)), job.max_concurrent);
    return JobFromRow(row);
  }
  bool SetEnabled(int id, bool enabled, std::int64_t now_ms) override {
    return tx_.exec_params(R"sql(
      UPDATE job SET enabled = $2, stop_reason = CASE WHEN $2 THEN '' ELSE stop_reason END,
                     updated_ms = GREATEST($3, updated_ms + 1)
       WHERE id = $1
    )sql",
                           id, enabled, now_ms)
               .affected_rows() > 0;
  }
  void SetSchedule(int id, std::int64_t next_fire_ms, std::optional<std::int64_t> last_fire_ms) override {
    job_table::SetSchedule(tx_, id, next_fire_ms, last_fire_ms);
  }
  void WriteGlueHistory(const Job& job, std::int64_t now_ms, int keep) override {
    admin::WriteGlueHistory(tx_, job, now_ms, keep);
  }
  void WithdrawUnsent(int job_id) override { fire_log::WithdrawUnsent(tx_, job_id, clock_); }
  std::vector<JobStore::WorkflowRef> WorkflowsNaming(int job_id, int limit) override {
    std::vector<JobStore::WorkflowRef> out;
    for (const auto& w : tx_.exec_params(R"sql(
      SELECT id, name FROM workflow WHERE nodes @> jsonb_build_array(jsonb_build_object('job_id', $1::int))
       ORDER BY id LIMIT $2
    )sql",
                                         job_id, limit)) {
      out.push_back({w["id"].as<int>(), w["name"].as<std::string>()});
    }
    return out;
  }
  void RemoveChildLinks(int id) override {
    tx_.exec_params(R"sql(
      UPDATE job SET child_job_ids = array_remove(child_job_ids, $1), updated_ms = updated_ms + 1
       WHERE $1 = ANY(child_job_ids)
    )sql",
                    id);
  }
  bool DeleteJob(int id) override {
    return tx_.exec_params(R"sql(DELETE FROM job WHERE id = $1)sql", id).affected_rows() > 0;
  }
  std::optional<RunOnce> LockRunOnce(int job_id, std::int64_t id) override {
    const auto found = tx_.exec_params(
        fmt::format(R"sql(SELECT {} FROM run_once WHERE id = $1 AND job_id = $2 FOR UPDATE)sql",
                    kRunOnceColumns),
        id, job_id);
    if (found.empty()) return std::nullopt;
    return RunOnceFromRow(found[0]);
  }
  bool WithdrawUnclaimed(std::int64_t log_id) override { return fire_log::WithdrawUnclaimed(tx_, log_id); }
  RunOnce CancelRunOnce(std::int64_t id, std::int64_t now_ms, const std::string& who) override {
    return RunOnceFromRow(tx_.exec_params1(fmt::format(R"sql(
      UPDATE run_once SET cancelled_ms = $2, cancelled_by = $3, log_id = 0 WHERE id = $1 RETURNING {}
    )sql",
                                                       kRunOnceColumns),
                                           id, now_ms, who));
  }

 private:
  pqxx::transaction_base& tx_;
  ringwheel::Clock& clock_;
};

}  // namespace

PgJobStore::PgJobStore(ringwheel::Clock& clock, PgPool& pool) : clock_(clock), pool_(pool) {}

void PgJobStore::Transact(const std::function<bool(Tx&)>& body) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    PgTx adapter(tx, clock_);
    if (body(adapter)) tx.commit();
  });
}

std::optional<Job> PgJobStore::GetJob(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<Job> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params(fmt::format("SELECT {} FROM job WHERE id = $1", kJobColumns), id);
    if (rows.empty()) return std::nullopt;
    return JobFromRow(rows[0]);
  });
}

JobPage PgJobStore::ListJobs(const JobQuery& q) {
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

std::vector<TagCount> PgJobStore::ListTags(const std::optional<std::vector<int>>& group_ids) {
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

void PgJobStore::DeleteJobFires(int job_id) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    fire_log::DeleteJobFires(tx, job_id);
    tx.commit();
  });
}

std::vector<SentAheadFire> PgJobStore::SentAhead(int job_id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    return fire_log::SentAhead(tx, job_id, clock_.NowMs());
  });
}

std::vector<std::int64_t> PgJobStore::WithdrawnClaims(int job_id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    return fire_log::WithdrawnOfJob(tx, job_id, clock_.NowMs());
  });
}

void PgJobStore::MarkWithdrawnAhead(std::span<const std::int64_t> log_ids, std::string_view note) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    fire_log::MarkWithdrawnAhead(tx, log_ids, note);
    tx.commit();
  });
}

std::optional<std::int64_t> PgJobStore::InsertManualFire(int job_id, TriggerType type,
                                                         const std::optional<std::string>& param,
                                                         const std::string& node_id, std::int64_t now_ms) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const auto id = fire_log::InsertManual(tx, job_id, type, param, node_id, now_ms);
    if (id) tx.commit();
    return id;
  });
}

std::optional<RunOnce> PgJobStore::InsertRunOnce(int job_id, std::int64_t fire_at_ms,
                                                 const std::optional<std::string>& param,
                                                 const std::string& who, std::int64_t now_ms) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<RunOnce> {
    pqxx::work tx(conn);
    const auto rows = tx.exec_params(fmt::format(R"sql(
      INSERT INTO run_once (job_id, fire_at_ms, executor_param, created_by, created_ms)
      SELECT id, $2, $3, $4, $5 FROM job WHERE id = $1
      RETURNING {}
    )sql",
                                                 kRunOnceColumns),
                                     job_id, fire_at_ms, param, who, now_ms);
    if (rows.empty()) return std::nullopt;
    tx.commit();
    return RunOnceFromRow(rows[0]);
  });
}

std::vector<RunOnce> PgJobStore::ListRunOnce(int job_id, int limit) {
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

}  // namespace cronwheel::admin
