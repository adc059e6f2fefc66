#include "admin/store/console_repository.hpp"

#include <date/date.h>
#include <fmt/format.h>

#include <chrono>
#include <map>

#include "store/pg_util.hpp"

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kDayMs = 86'400'000;

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
    for (const auto& r : tx.exec_params(R"sql(
           SELECT id, glue_type, glue_source, glue_remark, glue_updated_ms, created_ms FROM glue_history
            WHERE job_id = $1 ORDER BY created_ms DESC, id DESC
         )sql",
                                        job_id)) {
      out.push_back(GlueVersion{.id = r["id"].as<std::int64_t>(),
                                .glue_type = r["glue_type"].as<std::string>(),
                                .glue_source = r["glue_source"].as<std::string>(),
                                .glue_remark = r["glue_remark"].as<std::string>(),
                                .glue_updated_ms = r["glue_updated_ms"].as<std::int64_t>(),
                                .created_ms = r["created_ms"].as<std::int64_t>()});
    }
    return out;
  });
}

std::int64_t ConsoleRepository::EnabledJobs() {
  return WithConnection(pool_, [](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    return tx.exec1("SELECT count(*) FROM job WHERE enabled")[0].as<std::int64_t>();
  });
}

std::map<std::string, std::int64_t> ConsoleRepository::WorkflowRunsByState(std::int64_t since_ms) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::map<std::string, std::int64_t> out;
    for (const auto& r : tx.exec_params(
             R"sql(SELECT state, count(*) FROM workflow_run WHERE start_ms >= $1 GROUP BY state)sql",
             since_ms))
      out[r[0].as<std::string>()] = r[1].as<std::int64_t>();
    return out;
  });
}

fire_log::ArchiveSize ConsoleRepository::OutputArchiveSize() {
  return WithConnection(pool_, [](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    return fire_log::MeasureArchive(tx);
  });
}

DashboardCounts ConsoleRepository::Dashboard(int days, const std::optional<std::vector<int>>& group_ids) {
  const auto today = StartOfUtcDay(clock_.NowMs());
  const auto first = today - static_cast<std::int64_t>(days - 1) * kDayMs;
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    DashboardCounts out;
    const std::string in_groups =
        group_ids ? fmt::format(" AND group_id = ANY({}::int[])", tx.quote(PgArray<int>(*group_ids))) : "";
    const auto totals = tx.exec1(fmt::format(
        "SELECT count(*) AS jobs, count(*) FILTER (WHERE enabled) AS enabled FROM job WHERE true{}",
        in_groups));
    out.jobs = totals["jobs"].as<std::int64_t>();
    out.enabled_jobs = totals["enabled"].as<std::int64_t>();
    out.fires_today =
        tx.exec_params1(fmt::format("SELECT count(*) FROM job_log WHERE scheduled_ms >= $1{}", in_groups),
                        today)[0]
            .as<std::int64_t>();
    std::map<std::int64_t, DayCounts> by_day;
    for (std::int64_t d = first; d <= today; d += kDayMs)
      by_day[d] = DayCounts{.day = DayText(d)};
    const auto put = [&by_day](const pqxx::row& r) {
      auto it = by_day.find(r["day"].as<std::int64_t>());
      if (it == by_day.end()) return;
      it->second.running = r["running"].as<std::int64_t>();
      it->second.success = r["success"].as<std::int64_t>();
      it->second.failed = r["failed"].as<std::int64_t>();
    };
    if (!group_ids) {
      // Days before today from the report monitor's table.
      for (const auto& r : tx.exec_params(R"sql(
             SELECT (extract(epoch FROM day::timestamp) * 1000)::bigint AS day, running_count AS running,
                    success_count AS success, failed_count AS failed
               FROM log_report
              WHERE day >= (to_timestamp($1 / 1000.0) AT TIME ZONE 'UTC')::date
                AND day < (to_timestamp($2 / 1000.0) AT TIME ZONE 'UTC')::date
           )sql",
                                          first, today)) {
        put(r);
      }
    }
    // Counted live (the report monitor's rules): today for admins, every day over a USER's groups.
    const auto live_from = group_ids ? first : today;
    for (const auto& r : tx.exec_params(fmt::format(R"sql(
           SELECT scheduled_ms - ((scheduled_ms % $2) + $2) % $2 AS day,
                  count(*) FILTER (WHERE status IN ('PENDING', 'RUNNING')) AS running,
                  count(*) FILTER (WHERE status = 'SUCCESS') AS success,
                  count(*) FILTER (WHERE status IN ('FAILED', 'SKIPPED')) AS failed
             FROM job_log WHERE scheduled_ms >= $1{}
            GROUP BY 1
         )sql",
                                                    in_groups),
                                        live_from, kDayMs)) {
      put(r);
    }
    for (auto& [d, c] : by_day)
      out.days.push_back(std::move(c));
    return out;
  });
}

}  // namespace cronwheel::admin
