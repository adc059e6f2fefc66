#include "admin/store/log_partitions.hpp"

#include <date/date.h>
#include <fmt/format.h>

#include <chrono>
#include <set>

namespace cronwheel::admin::log_partitions {
namespace {

// Serialises partition changes between admins (pg_advisory_xact_lock).
constexpr std::int64_t kLockKey = 0x63776c6f67706172;  // "cwlogpar"

// A table partitioned by UTC day of scheduled_ms.
struct Daily {
  const char* parent;
  const char* default_partition;
  // The columns a moved row is written back with (job_log: all but the generated status).
  const char* columns;
  int fillfactor;  // 0 = PostgreSQL's
};
constexpr Daily kJobLog{
    "job_log", "job_log_default",
    "id, job_id, group_id, trigger_type, scheduled_ms, owner_node, dispatch_ms, skipped, executor_address, "
    "executor_handler, executor_param, shard_index, shard_total, retry_count, parent_log_id, trigger_ms, "
    "trigger_code, trigger_msg, handle_ms, handle_code, handle_msg, alarm_status, created_ms, start_ms",
    kFillfactor};
// The fire output archive (sql/029_fire_output.sql): written once per fire, never updated.
constexpr Daily kFireOutput{
    "fire_output", "fire_output_default",
    "log_id, scheduled_ms, via, archived_ms, log_bytes, left_out_bytes, content, error", 0};
constexpr Daily kTables[] = {kJobLog, kFireOutput};

std::int64_t DayStart(std::int64_t ms) {
  return ms - ((ms % kDayMs) + kDayMs) % kDayMs;
}

void Guard(pqxx::transaction_base& tx) {
  tx.exec(R"sql(SET LOCAL lock_timeout = '2s')sql");
  tx.exec(fmt::format("SELECT pg_advisory_xact_lock({})", kLockKey));
}

}  // namespace

std::string NameOfDay(std::int64_t ms, std::string_view table) {
  const date::sys_days day = date::floor<date::days>(
      date::sys_time<std::chrono::milliseconds>{std::chrono::milliseconds{DayStart(ms)}});
  return fmt::format("{}_p{}", table, date::format("%Y%m%d", day));
}

std::vector<Partition> List(pqxx::transaction_base& tx, std::string_view table) {
  std::vector<Partition> out;
  // A daily partition's bound reads "FOR VALUES FROM ('a') TO ('b')"; the default's reads "DEFAULT".
  for (const auto& r : tx.exec_params(R"sql(
         SELECT c.relname AS name,
                substring(pg_get_expr(c.relpartbound, c.oid) FROM 'FROM \(''?(-?[0-9]+)')::bigint AS from_ms,
                substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \(''?(-?[0-9]+)')::bigint AS to_ms
           FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = $1::text::regclass AND c.relname LIKE replace($1::text, '_', '\_') || '\_p%'
          ORDER BY 2
       )sql",
                                      std::string(table))) {
    out.push_back({.name = r["name"].as<std::string>(),
                   .from_ms = r["from_ms"].as<std::int64_t>(),
                   .to_ms = r["to_ms"].as<std::int64_t>()});
  }
  return out;
}

int Ensure(pqxx::connection& conn, std::int64_t now_ms, int days_ahead) {
  std::set<std::string> existing;
  {
    pqxx::read_transaction tx(conn);
    for (const auto& t : kTables) {
      for (const auto& p : List(tx, t.parent))
        existing.insert(p.name);
    }
  }
  int created = 0;
  const auto first = DayStart(now_ms);
  for (int d = 0; d <= days_ahead; ++d) {
    const auto from = first + d * kDayMs;
    bool made = false;
    for (const auto& t : kTables) {
      const auto name = NameOfDay(from, t.parent);
      if (existing.contains(name)) continue;
      pqxx::work tx(conn);
      Guard(tx);
      if (!tx.exec_params(R"sql(SELECT 1 FROM pg_class WHERE relname = $1)sql", name).empty()) continue;
      // Rows the default partition holds for this day move into the new partition.
      tx.exec(fmt::format("CREATE TEMP TABLE moving ON COMMIT DROP AS SELECT {} FROM {} WITH NO DATA",
                          t.columns, t.default_partition));
      tx.exec_params(fmt::format(R"sql(
        WITH d AS (DELETE FROM {1} WHERE scheduled_ms >= $1 AND scheduled_ms < $2 RETURNING {0})
        INSERT INTO moving SELECT {0} FROM d
      )sql",
                                 t.columns, t.default_partition),
                     from, from + kDayMs);
      tx.exec(fmt::format("CREATE TABLE {} PARTITION OF {} FOR VALUES FROM ({}) TO ({}){}", name, t.parent,
                          from, from + kDayMs,
                          t.fillfactor > 0 ? fmt::format(" WITH (fillfactor = {})", t.fillfactor) : ""));
      tx.exec(fmt::format("INSERT INTO {0} ({1}) SELECT {1} FROM moving", t.parent, t.columns));
      tx.commit();
      made = true;
    }
    if (made) ++created;
  }
  return created;
}

Dropped DropBefore(pqxx::connection& conn, std::int64_t cutoff_ms, int batch) {
  Dropped out;
  for (const auto& t : kTables) {
    std::vector<Partition> partitions;
    {
      pqxx::read_transaction tx(conn);
      partitions = List(tx, t.parent);
    }
    for (const auto& p : partitions) {
      if (p.to_ms > cutoff_ms) break;
      pqxx::work tx(conn);
      Guard(tx);
      if (tx.exec_params(R"sql(SELECT 1 FROM pg_class WHERE relname = $1)sql", p.name).empty()) continue;
      tx.exec(fmt::format("DROP TABLE {}", p.name));
      tx.commit();
      if (&t == &kTables[0]) ++out.partitions;
    }
    for (;;) {
      pqxx::work tx(conn);
      const auto n = tx.exec_params(fmt::format(R"sql(
        DELETE FROM {0} WHERE ctid IN (SELECT ctid FROM {0} WHERE scheduled_ms < $1 LIMIT $2)
      )sql",
                                                t.default_partition),
                                    cutoff_ms, batch)
                         .affected_rows();
      tx.commit();
      if (&t == &kTables[0]) out.default_rows += static_cast<std::int64_t>(n);
      if (n < static_cast<std::size_t>(batch)) break;
    }
  }
  // The fires those rows were: none is open, waiting for an alarm or for its output to be pulled any more.
  pqxx::work tx(conn);
  tx.exec_params(R"sql(DELETE FROM fire_open WHERE scheduled_ms < $1)sql", cutoff_ms);
  tx.exec_params(R"sql(DELETE FROM fire_alarm WHERE scheduled_ms < $1)sql", cutoff_ms);
  tx.exec_params(R"sql(DELETE FROM fire_output_pull WHERE scheduled_ms < $1)sql", cutoff_ms);
  tx.commit();
  return out;
}

}  // namespace cronwheel::admin::log_partitions
