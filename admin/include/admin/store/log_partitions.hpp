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
// DropBefore drops the daily partitions that end at or before `cutoff_ms`, deletes the default partition's
// rows before it in batches, and forgets fire_open and fire_alarm rows of fires scheduled before it.
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
#include <vector>

namespace cronwheel::admin::log_partitions {

inline constexpr std::int64_t kDayMs = 86'400'000;
inline constexpr int kDefaultDaysAhead = 2;
// The fillfactor of each daily partition: 70% of a page is left to the versions a fire's trigger result and
// callback write, so nearly all of them are HOT (sql/026_job_log_fillfactor.sql has the figures).
inline constexpr int kFillfactor = 30;

struct Partition {
  std::string name;  // job_log_pYYYYMMDD
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;  // exclusive
};

// The daily partitions, in order of time.
std::vector<Partition> List(pqxx::transaction_base& tx);

// Creates the missing daily partitions of the days [day of now_ms, + days_ahead]. Returns how many it
// created.
int Ensure(pqxx::connection& conn, std::int64_t now_ms, int days_ahead = kDefaultDaysAhead);

struct Dropped {
  int partitions = 0;
  std::int64_t default_rows = 0;
};
// Drops whole days before cutoff_ms (partitions with to_ms <= cutoff_ms) and deletes the default
// partition's rows scheduled before it, `batch` rows a transaction.
Dropped DropBefore(pqxx::connection& conn, std::int64_t cutoff_ms, int batch = 1000);

// The partition name of the day holding `ms` (UTC).
std::string NameOfDay(std::int64_t ms);

}  // namespace cronwheel::admin::log_partitions
