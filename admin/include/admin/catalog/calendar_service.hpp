#pragma once
// The rules of calendars (table calendar, sql/012_calendars.sql; admin/model/calendar.hpp): creation,
// updates and deletion, over a CalendarStore (catalog/calendar_store.hpp) that holds only statements. The
// REST API reads a calendar's fields and imports .ics text first (ReadCalendarBody, ImportIcs); here the
// days are normalised and checked again (NormaliseDays, CheckCalendar), so no caller saves what the API
// refuses, and here is what needs the stored state: names are unique, a calendar a job keeps cannot be
// deleted (its jobs would fire on the days it excluded), and an edit re-walks the started jobs that keep it.
//
// An edit and the scan (docs/architecture.md, "Stops and changes against the scan"): the scan wrote the
// fires of a job's coming instants under the calendar's old days. Every saved edit withdraws those of the
// started jobs that keep the calendar (a claimed one is named for its admin, which then does not send it)
// and starts each job's walk again from the earliest instant withdrawn, so the next scan plans those
// instants with the new days. The jobs' schedules are locked first, all of them before any withdrawal (a
// scan holding one has committed what it wrote before this reads it), after the calendar's own row.
//
// Time: now is read from the injected Clock once per call. Thread-safety: safe from any thread (the store's
// transactions serialise what must be). Errors: expected outcomes are Results (kInvalid with fields naming
// each field, kNotFound, kConflict); database failures throw, and a refused call changes nothing.

#include <functional>
#include <optional>
#include <vector>

#include "admin/catalog/calendar_store.hpp"
#include "admin/model/calendar.hpp"
#include "admin/model/result.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class CalendarService {
 public:
  // Edits a calendar in place (an update's fields over the stored ones); an error is returned as it is.
  using Edit = std::function<Result<void>(JobCalendar&)>;
  // A refused delete names at most this many of the jobs keeping the calendar ("and more" past them).
  static constexpr int kKeepersNamed = 20;

  CalendarService(ringwheel::Clock& clock, CalendarStore& store) : clock_(clock), store_(store) {}

  // `calendar` already read (ReadCalendarBody); its days are normalised. kInvalid with fields: a field
  // check failed (CheckCalendar), or the name is taken (code "exists" on name).
  Result<JobCalendar> Create(JobCalendar calendar);
  // Applies `edit` to the stored calendar (locked for update), checks and saves it, and re-walks the started
  // jobs that keep it (above). kNotFound, kInvalid as Create, or the error `edit` returned.
  Result<JobCalendar> Update(int id, const Edit& edit);
  // kNotFound; kConflict while jobs keep it (naming them, at most kKeepersNamed).
  Result<void> Delete(int id);
  std::optional<CalendarListing> Get(int id);
  // By name.
  std::vector<CalendarListing> List();

 private:
  // Runs `body` in one transaction of the store, committed when it returns a value (not an error).
  template <class T, class F>
  Result<T> InTransaction(F&& body);

  ringwheel::Clock& clock_;
  CalendarStore& store_;
};

}  // namespace cronwheel::admin
