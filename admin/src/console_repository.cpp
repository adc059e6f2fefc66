#include "admin/console_repository.hpp"

#include <date/date.h>

#include <chrono>
#include <map>

#include "pg_util.hpp"

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kDayMs = 86'400'000;
constexpr int kClearBatch = 1000;

std::int64_t StartOfUtcDay(std::int64_t ms) {
  return ms - (((ms % kDayMs) + kDayMs) % kDayMs);
}

std::string DayText(std::int64_t day_start_ms) {
  const date::sys_days d{date::floor<date::days>(std::chrono::milliseconds{day_start_ms})};
  return date::format("%F", d);
}

}  // namespace

std::vector<GlueVersion> ConsoleRepository::GlueHistory(int job_id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<GlueVersion> out;
    for (const auto& r : tx.exec_params(
             "SELECT id, glue_type, glue_source, glue_remark, glue_updated_ms, created_ms FROM glue_history"
             " WHERE job_id = $1 ORDER BY created_ms DESC, id DESC",
             job_id)) {
      out.push_back(GlueVersion{.id = r[0].as<std::int64_t>(),
                                .glue_type = r[1].as<std::string>(),
                                .glue_source = r[2].as<std::string>(),
                                .glue_remark = r[3].as<std::string>(),
                                .glue_updated_ms = r[4].as<std::int64_t>(),
                                .created_ms = r[5].as<std::int64_t>()});
    }
    return out;
  });
}

DashboardCounts ConsoleRepository::Dashboard(int days, const std::optional<std::vector<int>>& group_ids) {
  const auto today = StartOfUtcDay(clock_.NowMs());
  const auto first = today - static_cast<std::int64_t>(days - 1) * kDayMs;
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    DashboardCounts out;
    const std::string groups = group_ids ? tx.quote(PgArray<int>(*group_ids)) + "::int[]" : "";
    const std::string job_filter = group_ids ? " WHERE group_id = ANY(" + groups + ")" : "";
    const auto totals = tx.exec1("SELECT count(*), count(*) FILTER (WHERE enabled) FROM job" + job_filter);
    out.jobs = totals[0].as<std::int64_t>();
    out.enabled_jobs = totals[1].as<std::int64_t>();
    out.fires_today = tx.exec_params1("SELECT count(*) FROM job_log WHERE scheduled_ms >= $1" +
                                          (group_ids ? " AND group_id = ANY(" + groups + ")" : std::string()),
                                      today)[0]
                          .as<std::int64_t>();
    std::map<std::int64_t, DayCounts> by_day;
    for (std::int64_t d = first; d <= today; d += kDayMs)
      by_day[d] = DayCounts{.day = DayText(d)};
    const auto put = [&by_day](std::int64_t day, const pqxx::row& r) {
      auto it = by_day.find(day);
      if (it == by_day.end()) return;
      it->second.running = r[1].as<std::int64_t>();
      it->second.success = r[2].as<std::int64_t>();
      it->second.failed = r[3].as<std::int64_t>();
    };
    if (!group_ids) {
      // Days before today from the report monitor's table.
      for (const auto& r : tx.exec_params(
               "SELECT (extract(epoch FROM day::timestamp) * 1000)::bigint, running_count, success_count,"
               " failed_count FROM log_report WHERE day >= (to_timestamp($1 / 1000.0) AT TIME ZONE "
               "'UTC')::date"
               " AND day < (to_timestamp($2 / 1000.0) AT TIME ZONE 'UTC')::date",
               first, today)) {
        put(r[0].as<std::int64_t>(), r);
      }
    }
    // Counted live (the report monitor's rules): today for admins, every day over a USER's groups.
    const auto live_from = group_ids ? first : today;
    for (const auto& r : tx.exec_params(
             "SELECT scheduled_ms - ((scheduled_ms % $2) + $2) % $2 AS day,"
             " count(*) FILTER (WHERE status IN ('PENDING', 'RUNNING')),"
             " count(*) FILTER (WHERE status = 'SUCCESS'),"
             " count(*) FILTER (WHERE status IN ('FAILED', 'SKIPPED'))"
             " FROM job_log WHERE scheduled_ms >= $1" +
                 (group_ids ? " AND group_id = ANY(" + groups + ")" : std::string()) + " GROUP BY 1",
             live_from, kDayMs)) {
      put(r[0].as<std::int64_t>(), r);
    }
    for (auto& [d, c] : by_day)
      out.days.push_back(std::move(c));
    return out;
  });
}

bool ConsoleRepository::MarkKilled(std::int64_t log_id, const std::string& executor_msg) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const auto n =
        tx.exec_params(
              "UPDATE job_log SET handle_code = 500, handle_ms = $2, handle_msg = $3,"
              " alarm_status = CASE WHEN alarm_status = 0 THEN 1 ELSE alarm_status END"
              " WHERE id = $1 AND handle_code = 0",
              log_id, clock_.NowMs(), "Manual operation, kill job: " + executor_msg.substr(0, 10'000))
            .affected_rows();
    tx.commit();
    return n == 1;
  });
}

std::int64_t ConsoleRepository::ClearLogs(const LogClear& c) {
  const auto now = clock_.NowMs();
  // The selection, and the newest row of it that goes (everything at or before it, in (scheduled_ms, id)
  // order, is deleted).
  std::string where = "status IN ('SUCCESS', 'FAILED', 'SKIPPED')";
  if (c.job_id) where += " AND job_id = " + std::to_string(*c.job_id);
  if (c.group_id) where += " AND group_id = " + std::to_string(*c.group_id);
  const auto boundary = WithConnection(
      pool_, [&](pqxx::connection& conn) -> std::optional<std::pair<std::int64_t, std::int64_t>> {
        pqxx::read_transaction tx(conn);
        if (c.group_ids) where += " AND group_id = ANY(" + tx.quote(PgArray<int>(*c.group_ids)) + "::int[])";
        if (c.older_than_days) {
          // Strictly before the cut-off: the newest (scheduled_ms, id) below it.
          const auto cut = now - static_cast<std::int64_t>(*c.older_than_days) * kDayMs;
          const auto rows =
              tx.exec_params("SELECT scheduled_ms, id FROM job_log WHERE " + where +
                                 " AND scheduled_ms < $1 ORDER BY scheduled_ms DESC, id DESC LIMIT 1",
                             cut);
          if (rows.empty()) return std::nullopt;
          return std::pair{rows[0][0].as<std::int64_t>(), rows[0][1].as<std::int64_t>()};
        }
        const auto rows = tx.exec_params("SELECT scheduled_ms, id FROM job_log WHERE " + where +
                                             " ORDER BY scheduled_ms DESC, id DESC LIMIT 1 OFFSET $1",
                                         c.keep_last.value_or(0));
        if (rows.empty()) return std::nullopt;
        return std::pair{rows[0][0].as<std::int64_t>(), rows[0][1].as<std::int64_t>()};
      });
  if (!boundary) return 0;
  std::int64_t deleted = 0;
  for (;;) {
    const auto n = WithConnection(pool_, [&](pqxx::connection& conn) {
      pqxx::work tx(conn);
      const auto r = tx.exec_params("DELETE FROM job_log WHERE id IN (SELECT id FROM job_log WHERE " + where +
                                        " AND (scheduled_ms, id) <= ($1, $2) LIMIT $3)",
                                    boundary->first, boundary->second, kClearBatch);
      tx.commit();
      return static_cast<std::int64_t>(r.affected_rows());
    });
    deleted += n;
    if (n < kClearBatch) break;
  }
  return deleted;
}

}  // namespace cronwheel::admin
