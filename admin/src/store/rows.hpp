#pragma once
// Reading rows into the admin's structs: one mapper per struct, every column read by its name (a query
// that selects the columns in another order, or adds one, cannot shift a value into the wrong field).
// The column lists name what each mapper reads; a query may select more.

#include <pqxx/pqxx>
#include <string>
#include <string_view>

#include "admin/model/accounts.hpp"
#include "admin/model/fire.hpp"
#include "admin/model/model.hpp"

namespace cronwheel::admin {

// The columns of job as JobFromRow reads them (child_job_ids as JSON), for a query of the table `job` by
// that name (not an alias): next_fire_ms and last_fire_ms come from its job_schedule row, as that row
// stands when the statement starts (0 when it has none yet).
extern const char* const kJobColumns;
// The columns of job_group as GroupFromRow reads them (addresses as JSON).
extern const char* const kGroupColumns;
// The columns of a claimed or re-owned job_log row `l` joined with its job `j`, as ClaimedFromRow reads
// them (for RETURNING lists).
extern const char* const kClaimedColumns;

Job JobFromRow(const pqxx::row& r);
JobGroup GroupFromRow(const pqxx::row& r);
// Any SELECT of job_log.* (status included).
JobLog LogFromRow(const pqxx::row& r);
ClaimedFire ClaimedFromRow(const pqxx::row& r);

// The columns of app_user as UserFromRow reads them (its roles from app_user_group as JSON `groups`), to
// select FROM app_user unaliased.
const std::string& UserColumns();
User UserFromRow(const pqxx::row& r);
// The expression of a user's roles, a JSON array of [group_id, role] by group id, for the user row named
// `user_alias` (select it AS groups).
std::string UserGroupsColumn(std::string_view user_alias);
// That array read back.
std::vector<GroupGrant> GrantsFromJson(const char* text);
// Replaces the roles of user `user_id` with `grants` (their groups checked to exist by the caller).
void WriteGrants(pqxx::transaction_base& tx, int user_id, const std::vector<GroupGrant>& grants);
// The user `id`, which exists.
User ReadUser(pqxx::transaction_base& tx, int id);
// An api_token row joined with its user's username.
ApiToken TokenFromRow(const pqxx::row& r);

// A nullable text column as a string ("" for NULL).
std::string TextOrEmpty(const pqxx::field& f);

}  // namespace cronwheel::admin
