// CalendarStore on PostgreSQL (admin/store/pg_calendar_store.hpp): statements only; the rules are
// CalendarService's.
#include "admin/store/pg_calendar_store.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
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

class PgTx final : public CalendarStore::Tx {
 public:
  PgTx(pqxx::transaction_base& tx, ringwheel::Clock& clock) : tx_(tx), clock_(clock) {}

  bool NameTaken(const std::string& name, int except_id) override {
    return !tx_.exec_params(R"sql(SELECT 1 FROM calendar WHERE name = $1 AND id <> $2)sql", name, except_id)
                .empty();
  }
  std::optional<JobCalendar> LockCalendar(int id) override {
    const auto rows =
        tx_.exec_params(fmt::format("SELECT {} FROM calendar c WHERE c.id = $1 FOR UPDATE", kColumns), id);
    if (rows.empty()) return std::nullopt;
    return FromRow(rows[0]);
  }
  JobCalendar InsertCalendar(const JobCalendar& c, std::int64_t now_ms) override {
    return FromRow(tx_.exec_params1(fmt::format(R"sql(
      INSERT INTO calendar AS c (name, description, kind, time_zone, days, created_ms, updated_ms)
      VALUES ($1, $2, $3, $4, $5::jsonb, $6, $6)
      RETURNING {}
    )sql",
                                                kColumns),
                                    c.name, c.description, std::string(ToString(c.kind)), c.time_zone,
                                    DaysJson(c.days), now_ms));
  }
  JobCalendar UpdateCalendar(const JobCalendar& c, std::int64_t now_ms) override {
    return FromRow(tx_.exec_params1(fmt::format(R"sql(
      UPDATE calendar AS c
         SET name = $2, description = $3, kind = $4, time_zone = $5, days = $6::jsonb,
             updated_ms = GREATEST($7, c.updated_ms + 1)
       WHERE c.id = $1
      RETURNING {}
    )sql",
                                                kColumns),
                                    c.id, c.name, c.description, std::string(ToString(c.kind)), c.time_zone,
                                    DaysJson(c.days), now_ms));
  }
  std::vector<int> JobsKeeping(int id, int limit) override {
    std::vector<int> jobs;
    for (const auto& r : tx_.exec_params(R"sql(
           SELECT id FROM job WHERE calendar_ids @> ARRAY[$1::int] ORDER BY id LIMIT $2 FOR SHARE
         )sql",
                                         id, limit))
      jobs.push_back(r[0].as<int>());
    return jobs;
  }
  void DeleteCalendar(int id) override { tx_.exec_params(R"sql(DELETE FROM calendar WHERE id = $1)sql", id); }
  std::vector<int> StartedJobsKeeping(int id) override {
    std::vector<int> jobs;
    for (const auto& r : tx_.exec_params(R"sql(
           SELECT j.id FROM job j JOIN job_schedule s ON s.job_id = j.id
            WHERE j.calendar_ids @> ARRAY[$1::int] AND s.next_fire_ms > 0 ORDER BY j.id
         )sql",
                                         id))
      jobs.push_back(r[0].as<int>());
    return jobs;
  }
  void LockSchedules(std::span<const int> job_ids) override { job_table::LockSchedules(tx_, job_ids); }
  std::optional<std::int64_t> WithdrawUnsent(int job_id) override {
    return fire_log::WithdrawUnsent(tx_, job_id, clock_);
  }
  void RewindSchedule(int job_id, std::int64_t from_ms) override {
    job_table::RewindSchedule(tx_, job_id, from_ms);
  }

 private:
  pqxx::transaction_base& tx_;
  ringwheel::Clock& clock_;
};

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

void PgCalendarStore::Transact(const std::function<bool(Tx&)>& body) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    PgTx adapter(tx, clock_);
    if (body(adapter)) tx.commit();
  });
}

std::optional<CalendarListing> PgCalendarStore::Get(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<CalendarListing> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params(
        fmt::format("SELECT {}, {} FROM calendar c WHERE c.id = $1", kColumns, kJobsColumn), id);
    if (rows.empty()) return std::nullopt;
    return CalendarListing{.calendar = FromRow(rows[0]), .jobs = rows[0]["jobs"].as<int>()};
  });
}

std::vector<CalendarListing> PgCalendarStore::List() {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<CalendarListing> out;
    for (const auto& r :
         tx.exec(fmt::format("SELECT {}, {} FROM calendar c ORDER BY c.name", kColumns, kJobsColumn)))
      out.push_back({.calendar = FromRow(r), .jobs = r["jobs"].as<int>()});
    return out;
  });
}

}  // namespace cronwheel::admin
