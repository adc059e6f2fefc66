#pragma once
// Calendars (table calendar, sql/012_calendars.sql; admin/model/calendar.hpp) on PostgreSQL: the table's
// owner. The REST API reads and checks a calendar's fields (ReadCalendarBody, CheckCalendar) and imports
// .ics text (ImportIcs) before it calls these; here is what needs the database: names are unique, and a
// calendar a job keeps cannot be deleted (its jobs would fire on the days it excluded).
//
// Thread-safety: safe from any thread (pooled connections). Errors: expected outcomes are Results (kInvalid
// with fields, kNotFound, kConflict); database failures throw.

#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "admin/model/calendar.hpp"
#include "admin/model/result.hpp"
#include "admin/store/pg_pool.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

// A calendar with the number of jobs that keep it.
struct CalendarListing {
  JobCalendar calendar;
  int jobs = 0;
};

class CalendarRepository {
 public:
  // Edits a calendar in place (an update's fields over the stored ones); an error is returned as it is.
  using Edit = std::function<Result<void>(JobCalendar&)>;

  CalendarRepository(ringwheel::Clock& clock, PgPool& pool) : clock_(clock), pool_(pool) {}

  // kInvalid when the name is taken.
  Result<JobCalendar> Create(const JobCalendar& calendar);
  // Applies `edit` to the stored calendar (locked for update) and saves it. kNotFound, kInvalid.
  Result<JobCalendar> Update(int id, const Edit& edit);
  // kNotFound; kConflict naming the jobs that keep it.
  Result<void> Delete(int id);
  std::optional<CalendarListing> Get(int id);
  // By name.
  std::vector<CalendarListing> List();
  // The compiled calendars of `ids` (the next-fire preview's); unknown ids are left out.
  CalendarSet Compiled(std::span<const int> ids);

 private:
  ringwheel::Clock& clock_;
  PgPool& pool_;
};

}  // namespace cronwheel::admin
