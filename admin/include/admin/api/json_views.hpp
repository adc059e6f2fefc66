#pragma once
// The JSON shapes of the REST API (snake_case; enums as XXL-JOB spells them; instants as epoch ms). Never a
// password hash, a token secret or a channel's signing secret; a group's access token and a channel's
// target (a webhook URL often holds its token) and template only when asked for (admins).
//
// Thread-safety: pure functions.

#include <nlohmann/json.hpp>

#include "admin/model/accounts.hpp"
#include "admin/model/alert_channel.hpp"
#include "admin/model/calendar.hpp"
#include "admin/model/model.hpp"
#include "admin/store/audit_log.hpp"

namespace cronwheel::admin {

nlohmann::json ToJson(const JobGroup& g, bool include_token = false);
nlohmann::json ToJson(const AlertChannel& c, bool include_target);
// {"id", "name", "description", "kind", "time_zone", "days": [{"date", "name"}], "jobs", "created_ms",
// "updated_ms"}; `jobs`: how many jobs keep it.
nlohmann::json ToJson(const JobCalendar& c, int jobs);
nlohmann::json ToJson(const Job& j);
nlohmann::json ToJson(const JobLog& l);
nlohmann::json ToJson(const RunOnce& r);
nlohmann::json ToJson(const User& u);
// A user's roles as the API shows them: `permitted_group_ids`, every group with a role (ascending; the
// field of earlier versions), and `group_roles`, [{"group_id", "role"}] by group id.
void AddGroupRoles(nlohmann::json& user, const std::vector<GroupGrant>& groups);
nlohmann::json ToJson(const ApiToken& t);
nlohmann::json ToJson(const AuditEntry& e);

}  // namespace cronwheel::admin
