#include "admin/store/log_repository.hpp"

#include <fmt/format.h>

#include "admin/store/fire_log.hpp"
#include "store/pg_util.hpp"
#include "store/rows.hpp"

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kDayMs = 86'400'000;
constexpr int kClearBatch = 1000;

}  // namespace

LogPage LogRepository::ListLogs(const LogQuery& q) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::string where = "WHERE true";
    if (q.job_id) where += fmt::format(" AND job_id = {}", *q.job_id);
    if (q.group_id) where += fmt::format(" AND group_id = {}", *q.group_id);
    if (q.group_ids) where += " AND group_id = ANY(" + tx.quote(PgArray<int>(*q.group_ids)) + "::int[])";
    if (q.status) where += " AND status = " + tx.quote(*q.status);
    if (q.from_ms) where += fmt::format(" AND scheduled_ms >= {}", *q.from_ms);
    if (q.to_ms) where += fmt::format(" AND scheduled_ms < {}", *q.to_ms);
    LogPage page;
    page.total = tx.exec1(R"sql(SELECT count(*) FROM job_log )sql" + where)[0].as<std::int64_t>();
    for (const auto& r : tx.exec_params(
             fmt::format("SELECT * FROM job_log {} ORDER BY scheduled_ms DESC, id DESC LIMIT $1 OFFSET $2",
                         where),
             q.limit, q.offset)) {
      page.items.push_back(LogFromRow(r));
    }
    return page;
  });
}

std::optional<JobLog> LogRepository::GetLog(std::int64_t id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<JobLog> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params(R"sql(SELECT * FROM job_log WHERE id = $1)sql", id);
    if (rows.empty()) return std::nullopt;
    return LogFromRow(rows[0]);
  });
}

FireOutputArchive LogRepository::GetOutput(const JobLog& log) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    return fire_log::ReadOutput(tx, log.id, log.scheduled_ms);
  });
}

bool LogRepository::MarkKilled(std::int64_t log_id, const std::string& executor_msg) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const bool killed = fire_log::MarkKilled(tx, log_id, clock_.NowMs(), executor_msg);
    tx.commit();
    return killed;
  });
}

std::int64_t LogRepository::ClearLogs(const LogClear& c) {
  const auto now = clock_.NowMs();
  // The newest row of the selection that goes: everything at or before it, in (scheduled_ms, id) order, is
  // deleted.
  const auto boundary = WithConnection(
      pool_, [&](pqxx::connection& conn) -> std::optional<std::pair<std::int64_t, std::int64_t>> {
        pqxx::read_transaction tx(conn);
        const auto where = fire_log::FinishedSelection(tx, c);
        // older_than_days: strictly before the cut-off, the newest (scheduled_ms, id) below it. keep_last:
        // the newest row after the ones kept.
        const auto rows = c.older_than_days
                              ? tx.exec_params(fmt::format(R"sql(
                    SELECT scheduled_ms, id FROM job_log WHERE {} AND scheduled_ms < $1
                     ORDER BY scheduled_ms DESC, id DESC LIMIT 1
                  )sql",
                                                           where),
                                               now - static_cast<std::int64_t>(*c.older_than_days) * kDayMs)
                              : tx.exec_params(fmt::format(R"sql(
                    SELECT scheduled_ms, id FROM job_log WHERE {}
                     ORDER BY scheduled_ms DESC, id DESC LIMIT 1 OFFSET $1
                  )sql",
                                                           where),
                                               c.keep_last.value_or(0));
        if (rows.empty()) return std::nullopt;
        return std::pair{rows[0]["scheduled_ms"].as<std::int64_t>(), rows[0]["id"].as<std::int64_t>()};
      });
  if (!boundary) return 0;
  std::int64_t deleted = 0;
  for (;;) {
    const auto n = WithConnection(pool_, [&](pqxx::connection& conn) {
      pqxx::work tx(conn);
      const auto d = fire_log::DeleteFinished(tx, c, *boundary, kClearBatch);
      tx.commit();
      return d;
    });
    deleted += n;
    if (n < kClearBatch) break;
  }
  return deleted;
}

}  // namespace cronwheel::admin
