#pragma once
// What other tables' owners ask of calendar (store/pg_calendar_store.cpp owns it). Private to
// admin/src/store.

#include <pqxx/pqxx>
#include <span>
#include <vector>

#include "admin/model/calendar.hpp"
#include "admin/model/result.hpp"
#include "admin/schedule/scan_planner.hpp"

namespace cronwheel::admin::calendar_table {

// The compiled calendars of `ids`, or of the calendars `due` jobs keep (none read when they keep none: the
// scan's common case costs nothing). A calendar that no longer compiles (its zone left the tz database) is
// left out, with an error logged.
CalendarSet Compiled(pqxx::transaction_base& tx, std::span<const int> ids);
CalendarSet Compiled(pqxx::transaction_base& tx, std::span<const DueJob> due);

}  // namespace cronwheel::admin::calendar_table
