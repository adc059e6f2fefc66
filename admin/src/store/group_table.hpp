#pragma once
// The writes of the job_group table that other tables' owners need, in the table's owner
// (store/pg_group_store.cpp, docs/architecture.md "Who writes which table"). Private to admin/src/store.

#include <pqxx/pqxx>

namespace cronwheel::admin::group_table {

// Removes alert channel `channel_id` from every group that names it (the channel is being deleted, in `tx`).
void RemoveAlertChannel(pqxx::transaction_base& tx, int channel_id);

}  // namespace cronwheel::admin::group_table
