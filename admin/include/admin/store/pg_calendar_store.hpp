#pragma once
// CalendarStore (catalog/calendar_store.hpp) on PostgreSQL: the owner of table calendar
// (sql/012_calendars.sql), with the statements the rules of calendars (catalog/calendar_service.hpp) use and
// those of other tables they need (a job's schedule: store/job_table.hpp; its fires: store/fire_log.hpp). No
// rule lives here. The scan's read of the calendars its due jobs keep is calendar_table::Compiled
// (store/calendar_table.hpp), in this file's table too.
//
// Thread-safety: safe from any thread (pooled connections). Errors: database failures throw
// (DatabaseUnavailable, CommitOutcomeUnknown: store/pg_util.hpp).

#include <functional>
#include <optional>
#include <vector>

#include "admin/catalog/calendar_store.hpp"
#include "admin/store/pg_pool.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class PgCalendarStore final : public CalendarStore {
 public:
  // `clock` is read where a statement needs now under its locks (the withdrawals of an edit).
  PgCalendarStore(ringwheel::Clock& clock, PgPool& pool) : clock_(clock), pool_(pool) {}

  void Transact(const std::function<bool(Tx&)>& body) override;
  std::optional<CalendarListing> Get(int id) override;
  std::vector<CalendarListing> List() override;

 private:
  ringwheel::Clock& clock_;
  PgPool& pool_;
};

}  // namespace cronwheel::admin
