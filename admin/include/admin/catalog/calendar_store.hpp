#pragma once
// What the rules of calendars (catalog/calendar_service.hpp) need from the database, as an interface free of
// libpqxx: PgCalendarStore (store/pg_calendar_store.hpp) in production, cwtest::MemoryCalendarStore
// (tests/support) in unit tests. It holds statements, never rules: which names are taken, when a calendar
// may be deleted and which jobs an edit re-walks are CalendarService's.
//
// Transactions: Transact runs a body against one Tx, in one database transaction; the body says whether to
// commit. Reads inside it see the transaction's own writes. Locks are taken where a method says so.
//
// Errors: database failures throw (DatabaseUnavailable and the driver's exceptions, as the other stores);
// nothing here returns a Result. Thread-safety: implementations are safe from several threads; a Tx belongs
// to the thread running its body.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "admin/model/calendar.hpp"

namespace cronwheel::admin {

// A calendar with the number of jobs that keep it (name it in their calendar_ids).
struct CalendarListing {
  JobCalendar calendar;
  int jobs = 0;
};

class CalendarStore {
 public:
  // One transaction. Its methods are the statements of the calendar rules, each O(rows it touches).
  class Tx {
   public:
    virtual ~Tx() = default;

    // Whether a calendar other than `except_id` (0 = none excepted) is named `name`.
    virtual bool NameTaken(const std::string& name, int except_id) = 0;
    // Calendar `id`, its row locked for update; nullopt when there is none.
    virtual std::optional<JobCalendar> LockCalendar(int id) = 0;
    // Inserts `calendar` (its id and times ignored) created at `now_ms` (created and updated times);
    // returns the row as stored, with its id.
    virtual JobCalendar InsertCalendar(const JobCalendar& calendar, std::int64_t now_ms) = 0;
    // Writes the fields of `calendar` over row `calendar.id`, updated at max(now_ms, its last update + 1);
    // returns the row as stored.
    virtual JobCalendar UpdateCalendar(const JobCalendar& calendar, std::int64_t now_ms) = 0;
    // At most `limit` of the jobs that keep calendar `id`, by id, their rows locked for share.
    virtual std::vector<int> JobsKeeping(int id, int limit) = 0;
    // Deletes calendar `id`'s row.
    virtual void DeleteCalendar(int id) = 0;

    // The jobs that keep calendar `id` and have a next fire (next_fire_ms > 0: started), by id. Unlocked.
    virtual std::vector<int> StartedJobsKeeping(int id) = 0;
    // Locks the schedules of `job_ids` (job_table::LockSchedules): every schedule partition they fall in,
    // in partition order, then their job_schedule rows in job order, so that two such calls wait for each
    // other instead of deadlocking and a scan holding a partition has committed what it wrote for those
    // jobs before this goes on. Nothing for an empty span.
    virtual void LockSchedules(std::span<const int> job_ids) = 0;
    // Withdraws job `job_id`'s fires written but not accepted by an executor, for instants still to come,
    // as read on the store's clock once the instants' locks are held (fire_log::WithdrawUnsent); the
    // earliest instant withdrawn, or nullopt when there was none.
    virtual std::optional<std::int64_t> WithdrawUnsent(int job_id) = 0;
    // Moves job `job_id`'s next fire back to `from_ms` when it is later (a next fire at or before it stays).
    virtual void RewindSchedule(int job_id, std::int64_t from_ms) = 0;
  };

  virtual ~CalendarStore() = default;

  // Runs `body` in one transaction, committed when it returns true and rolled back when it returns false or
  // throws (the exception goes on).
  virtual void Transact(const std::function<bool(Tx&)>& body) = 0;

  // Reads, each its own read-only transaction. O(calendars x jobs keeping them) for List.
  virtual std::optional<CalendarListing> Get(int id) = 0;
  // By name.
  virtual std::vector<CalendarListing> List() = 0;
};

}  // namespace cronwheel::admin
