// bench_pre_read: the admin's schedule scan at a million jobs. Two databases on one PostgreSQL:
//   big        --jobs jobs (default 1,000,000): --due of them (default 10,000) '* * * * * ?' (due every
//              second), the rest daily crons spread evenly over the day starting an hour from now (due
//              far in the future: none comes due during the run);
//   reference  only the --due every-second jobs.
// Every wall-clock second, for each database (the order alternates), it times
//   read   the pre-read statement alone (PgSchedulerStore::kDueJobsSql, horizon now + 5 s, LIMIT --limit)
//          in a read-only transaction, run just before the scan so it reads what the scan will read;
//   scan   what the admin's schedule thread does in that second: PgSchedulerStore::Scan (lock row, the
//          pre-read, planning, the multi-row INSERT of the fires, the UPDATE of the jobs, COMMIT) again
//          while a batch comes back full (--limit rows, as the admin: pre_read_count, default 3000).
// It prints the medians and maxima, the big/reference ratios (measured in the same run: the machine is
// shared), and EXPLAIN (ANALYZE, BUFFERS) of the pre-read on the big table. Goal (issue 9): <= 20 ms
// per scan.
//
//   bench_pre_read --dsn URI --reference-dsn URI [--jobs N] [--due N] [--seconds S] [--warmup S]
//                  [--limit N]
// Both databases must be empty (bench/pre_read.sh creates them); the migrations are applied here.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "admin/schedule/partitions.hpp"
#include "admin/schedule/scan_planner.hpp"
#include "admin/store/migrations.hpp"
#include "admin/store/pg_pool.hpp"
#include "admin/store/pg_scheduler_store.hpp"
#include "ringwheel/clock.hpp"

namespace {

// Every schedule partition as an int[] literal: one admin alone holds them all (schedule/partitions.hpp).
std::string AllPartitions() {
  std::string out = "{";
  for (int p = 0; p < cronwheel::admin::kDefaultSchedulePartitions; ++p)
    out += (p ? "," : "") + std::to_string(p);
  return out + "}";
}

using namespace cronwheel;
using Ms = std::chrono::duration<double, std::milli>;

struct Options {
  std::string dsn;
  std::string reference_dsn;
  long jobs = 1'000'000;
  long due = 10'000;
  int seconds = 20;
  int warmup = 3;
  int limit = 3000;
};

// The options, or the exit code CLI11 asks for (--help, a bad or missing value: the message is printed).
std::variant<Options, int> Parse(int argc, char** argv) {
  Options o;
  CLI::App app(
      "bench_pre_read: the schedule scan of a million-job table against a table of only the due jobs");
  app.add_option("--dsn", o.dsn, "PostgreSQL URI of the database that gets the big table")->required();
  app.add_option("--reference-dsn", o.reference_dsn, "PostgreSQL URI of the reference database")->required();
  app.add_option("--jobs", o.jobs, "jobs in the big table")
      ->capture_default_str()
      ->check(CLI::Range(1L, 100'000'000L));
  app.add_option("--due", o.due, "of them due every second")
      ->capture_default_str()
      ->check(CLI::Range(1L, 100'000'000L));
  app.add_option("--seconds", o.seconds, "seconds measured")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  app.add_option("--warmup", o.warmup, "seconds before measuring")
      ->capture_default_str()
      ->check(CLI::Range(0, 3600));
  app.add_option("--limit", o.limit, "rows per scan batch")
      ->capture_default_str()
      ->check(CLI::Range(1, 1'000'000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (o.jobs < o.due) {
    std::fprintf(stderr, "bench_pre_read: --due %ld is more than --jobs %ld\n", o.due, o.jobs);
    return 2;
  }
  return o;
}

// Migrates and fills one database; every-second jobs first come due at `first_ms`.
void Fill(admin::PgPool& pool, long total, long due, std::int64_t now_ms, std::int64_t first_ms) {
  auto conn = pool.Acquire();
  admin::ApplyMigrations(*conn, admin::BuiltInMigrations(), now_ms);
  pqxx::work tx(*conn);
  const int group = tx.exec(
                          "INSERT INTO job_group (app_name, title, address_type, created_ms, updated_ms)"
                          " VALUES ('cronwheel-bench', 'bench', 'AUTO', 0, 0) RETURNING id")[0][0]
                        .as<int>();
  // `select` gives each job's columns in this order, its next fire (job_schedule) ninth, and a description
  // unique within it.
  const auto insert = [&](const std::string& select) {
    tx.exec(
        "WITH src (g, d, st, sc, tz, h, gu, e, n, c, u) AS (" + select +
        "), ins AS (INSERT INTO job (group_id, description, schedule_type, schedule_conf, time_zone, handler,"
        " glue_updated_ms, enabled, created_ms, updated_ms)"
        " SELECT g, d, st, sc, tz, h, gu, e, c, u FROM src RETURNING id, description)"
        " INSERT INTO job_schedule (job_id, next_fire_ms) SELECT ins.id, src.n FROM ins JOIN src ON src.d ="
        " ins.description");
  };
  insert(
      fmt::format("SELECT {}, 'due ' || i, 'CRON', '* * * * * ?', 'UTC', 'noopJobHandler', 0, true, {}, 0, 0"
                  " FROM generate_series(1, {}) AS i",
                  group, first_ms, due));
  if (total > due) {
    // Daily crons: job i next fires at t = now + 1 h + (i mod 86,400) s, its cron is t's time of day (UTC),
    // so next_fire_ms is exactly what the planner would compute; ~total/86,400 of them share each second.
    insert(
        fmt::format("SELECT {0}, 'daily ' || i, 'CRON',"
                    " format('%s %s %s * * ?', (t / 1000) % 60, (t / 60000) % 60, (t / 3600000) % 24),"
                    " 'UTC', 'noopJobHandler', 0, true, t, 0, 0"
                    " FROM (SELECT i, {1}::bigint + 3600000 + (i % 86400) * 1000 AS t"
                    "       FROM generate_series(1, {2}) AS i) AS s",
                    group, now_ms / 1000 * 1000, total - due));
  }
  tx.commit();
  pqxx::nontransaction(*conn).exec("VACUUM ANALYZE job");
}

struct Sample {
  double read_ms = 0;
  double scan_ms = 0;
  std::size_t read_rows = 0;
  std::size_t scan_jobs = 0;
  std::size_t fires = 0;
  int batches = 0;
};

Sample OneSecond(admin::PgPool& pool, admin::PgSchedulerStore& store, admin::ScanPlanner& planner,
                 ringwheel::Clock& clock, int limit, std::chrono::milliseconds pre_read) {
  Sample s;
  {
    auto conn = pool.Acquire();
    const auto t0 = std::chrono::steady_clock::now();
    pqxx::read_transaction tx(*conn);
    const auto rows = tx.exec_params(admin::PgSchedulerStore::kDueJobsSql, clock.NowMs() + pre_read.count(),
                                     limit, admin::kDefaultSchedulePartitions, AllPartitions());
    tx.commit();
    s.read_ms = Ms(std::chrono::steady_clock::now() - t0).count();
    s.read_rows = rows.size();
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const auto out = store.Scan("bench-node", limit, clock, planner);
    ++s.batches;
    s.scan_jobs += out.jobs_read;
    s.fires += out.fires.size();
    if (!out.full_batch) break;
  }
  s.scan_ms = Ms(std::chrono::steady_clock::now() - t0).count();
  return s;
}

double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto k =
      static_cast<std::size_t>(std::max(0.0, std::ceil(p / 100.0 * static_cast<double>(v.size())) - 1));
  return v[std::min(k, v.size() - 1)];
}

struct Summary {
  double read_p50, read_max, scan_p50, scan_p90, scan_max, rows, jobs, fires, batches;
};

Summary Summarise(const std::vector<Sample>& samples) {
  std::vector<double> read, scan, rows, jobs, fires, batches;
  for (const auto& s : samples) {
    read.push_back(s.read_ms);
    scan.push_back(s.scan_ms);
    rows.push_back(static_cast<double>(s.read_rows));
    jobs.push_back(static_cast<double>(s.scan_jobs));
    fires.push_back(static_cast<double>(s.fires));
    batches.push_back(s.batches);
  }
  return {Pct(read, 50), Pct(read, 100), Pct(scan, 50),  Pct(scan, 90),   Pct(scan, 100),
          Pct(rows, 50), Pct(jobs, 50),  Pct(fires, 50), Pct(batches, 50)};
}

}  // namespace

int main(int argc, char** argv) {
  const auto parsed = Parse(argc, argv);
  if (const auto* exit_code = std::get_if<int>(&parsed)) return *exit_code;
  const auto& o = std::get<Options>(parsed);
  auto& clock = ringwheel::RealClock::Instance();
  const admin::ScanSettings scan_settings{};  // the admin's defaults: pre-read 5 s, misfire 5 s
  admin::PgPool big_pool({.dsn = o.dsn, .size = 2});
  admin::PgPool ref_pool({.dsn = o.reference_dsn, .size = 2});

  const auto now = clock.NowMs();
  const auto first = (now / 1000 + 1) * 1000;
  auto t = std::chrono::steady_clock::now();
  Fill(big_pool, o.jobs, o.due, now, first);
  std::printf("big table: %ld jobs (%ld every second, %ld daily) filled and analysed in %.1f s\n", o.jobs,
              o.due, o.jobs - o.due,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count());
  Fill(ref_pool, o.due, o.due, now, first);
  std::printf("reference table: %ld jobs (all every second)\n", o.due);
  {
    auto conn = big_pool.Acquire();
    pqxx::read_transaction tx(*conn);
    const auto r = tx.exec(
        "SELECT pg_size_pretty(pg_table_size('job')), "
        "pg_size_pretty(pg_relation_size('job_schedule_due_idx'))");
    std::printf("big table size %s, job_schedule_due_idx %s\n", r[0][0].c_str(), r[0][1].c_str());
  }

  admin::PgSchedulerStore big_store(big_pool), ref_store(ref_pool);
  admin::ScanPlanner big_planner(scan_settings), ref_planner(scan_settings);
  std::vector<Sample> big, ref;
  std::printf("measuring: %d s warm-up + %d s, limit %d per scan batch (the admin's pre_read_count)\n",
              o.warmup, o.seconds, o.limit);
  std::printf("%4s %10s %10s %8s %8s %6s | %10s %10s %8s %8s %6s\n", "s", "big read", "big scan", "rows",
              "fires", "batch", "ref read", "ref scan", "rows", "fires", "batch");
  std::stop_source never;
  for (int i = 0; i < o.warmup + o.seconds; ++i) {
    clock.WaitUntilWallMs((clock.NowMs() / 1000 + 1) * 1000, never.get_token());
    Sample b, r;
    if (i % 2 == 0) {
      b = OneSecond(big_pool, big_store, big_planner, clock, o.limit, scan_settings.pre_read);
      r = OneSecond(ref_pool, ref_store, ref_planner, clock, o.limit, scan_settings.pre_read);
    } else {
      r = OneSecond(ref_pool, ref_store, ref_planner, clock, o.limit, scan_settings.pre_read);
      b = OneSecond(big_pool, big_store, big_planner, clock, o.limit, scan_settings.pre_read);
    }
    std::printf("%4d %8.2fms %8.2fms %8zu %8zu %6d | %8.2fms %8.2fms %8zu %8zu %6d%s\n", i, b.read_ms,
                b.scan_ms, b.read_rows, b.fires, b.batches, r.read_ms, r.scan_ms, r.read_rows, r.fires,
                r.batches, i < o.warmup ? "  (warm-up)" : "");
    std::fflush(stdout);
    if (i >= o.warmup) {
      big.push_back(b);
      ref.push_back(r);
    }
  }

  const auto sb = Summarise(big), sr = Summarise(ref);
  std::printf("\npre-read over %d s (median of per-second figures; max):\n", o.seconds);
  std::printf(
      "  big (%ld jobs):      read %.2f ms (max %.2f) for %.0f rows; scan %.1f ms p90 %.1f max %.1f"
      " (%.0f jobs, %.0f fires, %.0f batches)\n",
      o.jobs, sb.read_p50, sb.read_max, sb.rows, sb.scan_p50, sb.scan_p90, sb.scan_max, sb.jobs, sb.fires,
      sb.batches);
  std::printf(
      "  reference (%ld jobs): read %.2f ms (max %.2f) for %.0f rows; scan %.1f ms p90 %.1f max %.1f"
      " (%.0f jobs, %.0f fires, %.0f batches)\n",
      o.due, sr.read_p50, sr.read_max, sr.rows, sr.scan_p50, sr.scan_p90, sr.scan_max, sr.jobs, sr.fires,
      sr.batches);
  std::printf("  ratio big/reference: read %.2f, scan %.2f (1.0 = the table's size costs nothing)\n",
              sb.read_p50 / sr.read_p50, sb.scan_p50 / sr.scan_p50);
  std::printf(
      "  goal <= 20 ms per scan: pre-read statement %s (%.2f ms); whole scan transaction(s) %s (%.1f ms)\n",
      sb.read_p50 <= 20 ? "met" : "NOT met", sb.read_p50, sb.scan_p50 <= 20 ? "met" : "not met", sb.scan_p50);

  // The plan of the pre-read as the next scan will run it.
  {
    auto conn = big_pool.Acquire();
    pqxx::read_transaction tx(*conn);
    const auto horizon = clock.NowMs() + scan_settings.pre_read.count() + 1000;
    const auto plan =
        tx.exec_params(std::string("EXPLAIN (ANALYZE, BUFFERS) ") + admin::PgSchedulerStore::kDueJobsSql,
                       horizon, o.limit, admin::kDefaultSchedulePartitions, AllPartitions());
    std::printf(
        "\nEXPLAIN (ANALYZE, BUFFERS) of the pre-read on the big table (horizon now + 6 s, LIMIT %d):\n",
        o.limit);
    bool index = false;
    for (const auto& row : plan) {
      std::printf("  %s\n", row[0].c_str());
      // "Index Scan using job_schedule_due_idx" or "Bitmap Index Scan on job_schedule_due_idx": either reads
      // the index.
      if (std::string(row[0].c_str()).find(" job_schedule_due_idx") != std::string::npos) index = true;
    }
    std::printf("uses job_schedule_due_idx: %s\n", index ? "yes" : "NO");
  }
  return 0;
}
