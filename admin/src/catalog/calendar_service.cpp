#include "admin/catalog/calendar_service.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>

namespace cronwheel::admin {
namespace {

FieldError NameTaken(const std::string& name) {
  return {"name", fmt::format("a calendar named '{}' exists already", name), "exists", {{"value", name}}};
}

// NormaliseDays and CheckCalendar, then the name: no other calendar has it. `id` is the calendar's own (0
// for a new one).
FieldErrors Validate(CalendarStore::Tx& tx, JobCalendar& calendar, int id) {
  FieldErrors errors;
  NormaliseDays(calendar.days);
  CheckCalendar(calendar, errors);
  if (tx.NameTaken(calendar.name, id)) errors.push_back(NameTaken(calendar.name));
  return errors;
}

// The started jobs that keep calendar `id`: the fires the scan wrote for their coming instants under the
// old days are withdrawn (a claimed one is named for its admin, which then does not send it), and each walk
// starts again from the earliest instant withdrawn, so the next scan plans those instants with the new days
// (docs/architecture.md, "Stops and changes against the scan"). Their schedules are locked first, all of
// them, so a scan holding one has committed what it wrote before this reads it.
void RewalkKeepers(CalendarStore::Tx& tx, int id) {
  const auto jobs = tx.StartedJobsKeeping(id);
  tx.LockSchedules(jobs);
  for (const int job : jobs) {
    if (const auto first = tx.WithdrawUnsent(job)) tx.RewindSchedule(job, *first);
  }
}

Error NoCalendar(int id) {
  return Error::NotFound(fmt::format("calendar {} not found", id));
}

}  // namespace

template <class T, class F>
Result<T> CalendarService::InTransaction(F&& body) {
  std::optional<Result<T>> out;
  store_.Transact([&](CalendarStore::Tx& tx) {
    out.emplace(body(tx));
    return out->ok();
  });
  return *std::move(out);
}

Result<JobCalendar> CalendarService::Create(JobCalendar calendar) {
  return InTransaction<JobCalendar>([&](CalendarStore::Tx& tx) -> Result<JobCalendar> {
    if (auto errors = Validate(tx, calendar, 0); !errors.empty())
      return Error::Invalid("the calendar is not valid", std::move(errors));
    return tx.InsertCalendar(calendar, clock_.NowMs());
  });
}

Result<JobCalendar> CalendarService::Update(int id, const Edit& edit) {
  return InTransaction<JobCalendar>([&](CalendarStore::Tx& tx) -> Result<JobCalendar> {
    auto calendar = tx.LockCalendar(id);
    if (!calendar) return NoCalendar(id);
    if (auto edited = edit(*calendar); !edited) return edited.error();
    calendar->id = id;
    if (auto errors = Validate(tx, *calendar, id); !errors.empty())
      return Error::Invalid("the calendar is not valid", std::move(errors));
    auto updated = tx.UpdateCalendar(*calendar, clock_.NowMs());
    RewalkKeepers(tx, id);
    return updated;
  });
}

Result<void> CalendarService::Delete(int id) {
  auto deleted = InTransaction<bool>([&](CalendarStore::Tx& tx) -> Result<bool> {
    if (!tx.LockCalendar(id)) return NoCalendar(id);
    // One more than are named, to say whether there are more.
    const auto jobs = tx.JobsKeeping(id, kKeepersNamed + 1);
    if (!jobs.empty()) {
      const auto named = std::min<std::size_t>(kKeepersNamed, jobs.size());
      return Error::Conflict(fmt::format(
          "calendar {} is kept by job(s) {}{}: take it out of their calendar_ids first (they would fire on "
          "the days it excludes)",
          id, fmt::join(jobs.begin(), jobs.begin() + static_cast<std::ptrdiff_t>(named), ", "),
          jobs.size() > named ? " and more" : ""));
    }
    tx.DeleteCalendar(id);
    return true;
  });
  if (!deleted) return deleted.error();
  return {};
}

std::optional<CalendarListing> CalendarService::Get(int id) {
  return store_.Get(id);
}

std::vector<CalendarListing> CalendarService::List() {
  return store_.List();
}

}  // namespace cronwheel::admin
