#include "admin/store/calendar_repository.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "admin/store/fire_log.hpp"
#include "cronwheel/json.hpp"
#include "store/calendar_table.hpp"
#include "store/job_table.hpp"
#include "store/pg_util.hpp"

namespace cronwheel::admin {
namespace {

constexpr const char* kColumns =
    "c.id, c.name, c.description, c.kind, c.time_zone, c.days::text AS days, c.created_ms, c.updated_ms";
constexpr const char* kJobsColumn =
    "(SELECT count(*) FROM job j WHERE j.calendar_ids @> ARRAY[c.id]) AS jobs";

std::vector<CalendarDay> DaysFromJson(const char* text) {
  std::vector<CalendarDay> out;
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& o : j) {
    if (!o.is_object()) continue;
    const auto day = ringwheel::ParseDate(o.value("date", std::string()));
    if (day.ok()) out.push_back({.day = *day, .name = o.value("name", std::string())});
  }
  return out;
}

std::string DaysJson(const std::vector<CalendarDay>& days) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& d : days)
    out.push_back({{"date", ringwheel::FormatDate(d.day)}, {"name", d.name}});
  return DumpLossy(out);
}

JobCalendar FromRow(const pqxx::row& r) {
  return JobCalendar{.id = r["id"].as<int>(),
                     .name = r["name"].as<std::string>(),
                     .description = r["description"].as<std::string>(),
                     .kind = ParseCalendarKind(r["kind"].c_str()).value_or(CalendarKind::kExcludeDates),
                     .time_zone = r["time_zone"].as<std::string>(),
                     .days = DaysFromJson(r["days"].c_str()),
                     .created_ms = r["created_ms"].as<std::int64_t>(),
                     .updated_ms = r["updated_ms"].as<std::int64_t>()};
}

FieldError NameTaken(const std::string& name) {
  return {"name", fmt::format("a calendar named '{}' exists already", name), "exists", {{"value", name}}};
}

void RewalkFollowers(pqxx::transaction_base& tx, int id, ringwheel::Clock& clock) {
  // The started jobs that follow it: the fires the scan wrote for their coming instants under the old days
  // are withdrawn (a claimed one is named for its admin, which then does not send it), and each walk starts
  // again from the earliest instant withdrawn, so the next scan plans those instants with the new days
  // (docs/architecture.md, "Stops and changes against the scan"). Their partitions are locked first, so a
  // scan holding one has committed what it wrote before this reads it.
  std::vector<int> jobs;
  for (const auto& r : tx.exec_params(R"sql(
         SELECT j.id FROM job j JOIN job_schedule s ON s.job_id = j.id
          WHERE j.calendar_ids @> ARRAY[$1::int] AND s.next_fire_ms > 0 ORDER BY j.id
       )sql",
                                      id)) {
    jobs.push_back(r[0].as<int>());
  }
  job_table::LockSchedules(tx, jobs);
  for (const int job : jobs) {
    if (const auto first = fire_log::WithdrawUnsent(tx, job, clock)) {
      tx.exec_params(
          R"sql(UPDATE job_schedule SET next_fire_ms = $2 WHERE job_id = $1 AND next_fire_ms > $2)sql", job,
          *first);
    }
  }
}

}  // namespace

namespace calendar_table {

CalendarSet Compiled(pqxx::transaction_base& tx, std::span<const int> ids) {
  CalendarSet out;
  if (ids.empty()) return out;
  for (const auto& r :
       tx.exec_params(fmt::format("SELECT {} FROM calendar c WHERE c.id = ANY($1::int[])", kColumns),
                      PgArray<int>(ids))) {
    const auto calendar = FromRow(r);
    auto compiled = calendar.Compile();
    if (!compiled.ok()) {
      spdlog::error("calendar {} ('{}') is left out: {}", calendar.id, calendar.name,
                    std::string(compiled.status().message()));
      continue;
    }
    out.emplace(calendar.id, *std::move(compiled));
  }
  return out;
}

CalendarSet Compiled(pqxx::transaction_base& tx, std::span<const DueJob> due) {
  std::vector<int> ids;
  for (const auto& job : due)
    ids.insert(ids.end(), job.calendar_ids.begin(), job.calendar_ids.end());
  if (ids.empty()) return {};
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return Compiled(tx, std::span<const int>(ids));
}

}  // namespace calendar_table

Result<JobCalendar> CalendarRepository::Create(const JobCalendar& c) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<JobCalendar> {
    pqxx::work tx(conn);
    if (!tx.exec_params(R"sql(SELECT 1 FROM calendar WHERE name = $1)sql", c.name).empty())
      return Error::Invalid("the calendar is not valid", {NameTaken(c.name)});
    const auto row = tx.exec_params1(fmt::format(R"sql(
      INSERT INTO calendar AS c (name, description, kind, time_zone, days, created_ms, updated_ms)
      VALUES ($1, $2, $3, $4, $5::jsonb, $6, $6)
      RETURNING {}
    )sql",
                                                 kColumns),
                                     c.name, c.description, std::string(ToString(c.kind)), c.time_zone,
                                     DaysJson(c.days), clock_.NowMs());
    tx.commit();
    return FromRow(row);
  });
}

Result<JobCalendar> CalendarRepository::Update(int id, const Edit& edit) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<JobCalendar> {
    pqxx::work tx(conn);
    const auto rows =
        tx.exec_params(fmt::format("SELECT {} FROM calendar c WHERE c.id = $1 FOR UPDATE", kColumns), id);
    if (rows.empty()) return Error::NotFound(fmt::format("calendar {} not found", id));
    JobCalendar c = FromRow(rows[0]);
    if (auto edited = edit(c); !edited) return edited.error();
    if (!tx.exec_params(R"sql(SELECT 1 FROM calendar WHERE name = $1 AND id <> $2)sql", c.name, id).empty())
      return Error::Invalid("the calendar is not valid", {NameTaken(c.name)});
    const auto row = tx.exec_params1(fmt::format(R"sql(
      UPDATE calendar AS c
         SET name = $2, description = $3, kind = $4, time_zone = $5, days = $6::jsonb,
             updated_ms = GREATEST($7, c.updated_ms + 1)
       WHERE c.id = $1
      RETURNING {}
    )sql",
                                                 kColumns),
                                     id, c.name, c.description, std::string(ToString(c.kind)), c.time_zone,
                                     DaysJson(c.days), clock_.NowMs());
    RewalkFollowers(tx, id, clock_);
    tx.commit();
    return FromRow(row);
  });
}

Result<void> CalendarRepository::Delete(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<void> {
    pqxx::work tx(conn);
    if (tx.exec_params(R"sql(SELECT 1 FROM calendar WHERE id = $1 FOR UPDATE)sql", id).empty())
      return Error::NotFound(fmt::format("calendar {} not found", id));
    std::vector<int> jobs;
    for (
        const auto& r : tx.exec_params(
            R"sql(SELECT id FROM job WHERE calendar_ids @> ARRAY[$1::int] ORDER BY id LIMIT 21 FOR SHARE)sql",
            id))
      jobs.push_back(r[0].as<int>());
    if (!jobs.empty()) {
      return Error::Conflict(fmt::format(
          "calendar {} is kept by job(s) {}{}: take it out of their calendar_ids first (they would fire on "
          "the "
          "days it excludes)",
          id, fmt::join(jobs.begin(), jobs.begin() + std::min<std::ptrdiff_t>(20, std::ssize(jobs)), ", "),
          jobs.size() > 20 ? " and more" : ""));
    }
    tx.exec_params(R"sql(DELETE FROM calendar WHERE id = $1)sql", id);
    tx.commit();
    return {};
  });
}

std::optional<CalendarListing> CalendarRepository::Get(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<CalendarListing> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params(
        fmt::format("SELECT {}, {} FROM calendar c WHERE c.id = $1", kColumns, kJobsColumn), id);
    if (rows.empty()) return std::nullopt;
    return CalendarListing{.calendar = FromRow(rows[0]), .jobs = rows[0]["jobs"].as<int>()};
  });
}

std::vector<CalendarListing> CalendarRepository::List() {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<CalendarListing> out;
    for (const auto& r :
         tx.exec(fmt::format("SELECT {}, {} FROM calendar c ORDER BY c.name", kColumns, kJobsColumn)))
      out.push_back({.calendar = FromRow(r), .jobs = r["jobs"].as<int>()});
    return out;
  });
}

CalendarSet CalendarRepository::Compiled(std::span<const int> ids) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    return calendar_table::Compiled(tx, ids);
  });
}

}  // namespace cronwheel::admin
