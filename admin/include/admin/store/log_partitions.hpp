#pragma once
// The partitions of job_log, the table of fires (sql/005_fire_tables.sql): one per UTC day of scheduled_ms,
// named job_log_pYYYYMMDD, each with fillfactor kFillfactor (room for the HOT updates of a fire's results:
// sql/026_job_log_fillfactor.sql), plus the default partition job_log_default for any instant no daily
// partition covers (fires written while their day's partition was missing, fake instants in tests). At 10,000
// fires a second a day holds 864 million rows: retention is a DROP of whole days, never a DELETE scan of
// them.
//
// Ensure creates the partitions of the days from `now_ms`'s to `days_ahead` days later that are missing;
// rows of the default partition that belong to a day being created are moved into it in the same
// transaction (PostgreSQL refuses a new partition while the default holds rows of its range). The admin
// calls it at start, before it schedules, and every minute (results/report_monitor.hpp), so the day of a
// fire always exists two days ahead.
//
// The fire output archive, fire_output (sql/029_fire_output.sql), is partitioned the same way
// (fire_output_pYYYYMMDD, fire_output_default): Ensure creates its partitions with job_log's, and DropBefore
// drops them with job_log's, so a fire's output goes when the fire goes.
//
// DropBefore drops the daily partitions of both tables that end at or before `cutoff_ms`, deletes their
// default partitions' rows before it in batches, and forgets the fire_open, fire_alarm and fire_output_pull
// rows of fires scheduled before it.
//
// Both take an advisory transaction lock, so several admins never create or drop the same partition, and
// a lock_timeout (2 s): creating or dropping a partition briefly locks job_log against every write, so
// they give up rather than queue behind a long transaction, and try again next time.
//
// Errors: pqxx exceptions propagate (nothing is changed then). Thread-safety: free functions; the
// connection belongs to the caller.

#include <cstdint>
#include <pqxx/pqxx>
#include <string>
#include <string_view>
#include <vector>

namespace cronwheel::admin::log_partitions {

inline constexpr std::int64_t kDayMs = 86'400'000;
inline constexpr int kDefaultDaysAhead = 2;
// The fillfactor of each daily partition: 70% of a page is left to the versions a fire's trigger result and
// callback write, so nearly all of them are HOT (sql/026_job_log_fillfactor.sql has the figures).
inline constexpr int kFillfactor = 30;

struct Partition {
  std::string name;  // job_log_pYYYYMMDD (fire_output_pYYYYMMDD)
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;  // exclusive
};

// The daily partitions of `table` (job_log or fire_output), in order of time.
std::vector<Partition> List(pqxx::transaction_base& tx, std::string_view table = "job_log");

// Creates the missing daily partitions of the days [day of now_ms, + days_ahead], of job_log and of
// fire_output. Returns for how many days it created one or both.
int Ensure(pqxx::connection& conn, std::int64_t now_ms, int days_ahead = kDefaultDaysAhead);

struct Dropped {
  int partitions = 0;
  std::int64_t default_rows = 0;
};
// Drops whole days before cutoff_ms (partitions with to_ms <= cutoff_ms) and deletes the default
// partitions' rows scheduled before it, `batch` rows a transaction. Counts job_log's (the fires).

Dropped DropBefore(pqxx::connection& conn, std::int64_t cutoff_ms, int batch = 1000);

// The partition name of the day holding `ms` (UTC) in `table`: job_log_pYYYYMMDD.
std::string NameOfDay(std::int64_t ms, std::string_view table = "job_log");

}  // namespace cronwheel::admin::log_partitions
