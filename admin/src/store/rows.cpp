#include "store/rows.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "store/pg_util.hpp"

namespace cronwheel::admin {

const char* const kJobColumns = R"sql(
  id, group_id, description, author, alarm_email, alarm_webhook, schedule_type, schedule_conf, time_zone,
  misfire_strategy, route_strategy, handler, param, block_strategy, timeout_s, retry_count, retry_backoff_s,
  glue_type, glue_source, glue_remark, glue_updated_ms, to_json(child_job_ids) AS child_job_ids, to_json(tags) AS tags,
  to_json(alert_channel_ids) AS alert_channel_ids, to_json(calendar_ids) AS calendar_ids, start_ms, end_ms,
  concurrency_policy, max_concurrent, enabled, stop_reason, created_ms, updated_ms,
  COALESCE((SELECT s.next_fire_ms FROM job_schedule s WHERE s.job_id = job.id), 0) AS next_fire_ms,
  COALESCE((SELECT s.last_fire_ms FROM job_schedule s WHERE s.job_id = job.id), 0) AS last_fire_ms
)sql";

const char* const kGroupColumns = R"sql(
  id, app_name, title, address_type, to_json(addresses) AS addresses, access_token,
  to_json(alert_channel_ids) AS alert_channel_ids, allow_scripts, created_ms, updated_ms
)sql";

const char* const kClaimedColumns = R"sql(
  l.id, l.job_id, l.scheduled_ms, l.trigger_type, j.misfire_strategy, l.executor_param, l.retry_count,
  l.shard_index, l.shard_total
)sql";

std::string UserGroupsColumn(std::string_view user_alias) {
  return fmt::format(
      "(SELECT coalesce(json_agg(json_build_array(g.group_id, g.role) ORDER BY g.group_id), '[]'::json)"
      " FROM app_user_group g WHERE g.user_id = {}.id)",
      user_alias);
}

const std::string& UserColumns() {
  static const std::string columns = fmt::format(
      "id, username, role, {} AS groups, login_source, coalesce(external_subject, '') AS external_subject, "
      "created_ms, updated_ms",
      UserGroupsColumn("app_user"));
  return columns;
}

std::vector<GroupGrant> GrantsFromJson(const char* text) {
  std::vector<GroupGrant> out;
  for (const auto& e : nlohmann::json::parse(text)) {
    // The column's CHECK admits only the four names; read as the least role should it ever hold another.
    out.push_back({.group_id = e.at(0).get<int>(),
                   .role = ParseGroupRole(e.at(1).get<std::string>()).value_or(GroupRole::kViewer)});
  }
  return out;
}

User UserFromRow(const pqxx::row& r) {
  return User{.id = r["id"].as<int>(),
              .username = r["username"].as<std::string>(),
              .admin = r["role"].as<std::string>() == "ADMIN",
              .groups = GrantsFromJson(r["groups"].c_str()),
              .login_source = r["login_source"].as<std::string>(),
              .external_subject = r["external_subject"].as<std::string>(),
              .created_ms = r["created_ms"].as<std::int64_t>(),
              .updated_ms = r["updated_ms"].as<std::int64_t>()};
}

ApiToken TokenFromRow(const pqxx::row& r) {
  return ApiToken{.id = r["id"].as<int>(),
                  .user_id = r["user_id"].as<int>(),
                  .username = r["username"].as<std::string>(),
                  .name = r["name"].as<std::string>(),
                  .scope = ParseTokenScope(r["scope"].as<std::string>()).value_or(TokenScope::kRead),
                  .created_ms = r["created_ms"].as<std::int64_t>(),
                  .last_used_ms = r["last_used_ms"].as<std::int64_t>(),
                  .expires_ms = r["expires_ms"].as<std::int64_t>(),
                  .revoked_ms = r["revoked_ms"].as<std::int64_t>(),
                  .revoked_reason = r["revoked_reason"].as<std::string>(),
                  .state = ""};
}

std::string TextOrEmpty(const pqxx::field& f) {
  return f.is_null() ? std::string() : f.as<std::string>();
}

Job JobFromRow(const pqxx::row& r) {
  Job j;
  j.id = r["id"].as<int>();
  j.group_id = r["group_id"].as<int>();
  j.description = r["description"].as<std::string>();
  j.author = r["author"].as<std::string>();
  j.alarm_email = r["alarm_email"].as<std::string>();
  j.alarm_webhook = r["alarm_webhook"].as<std::string>();
  j.schedule_type = r["schedule_type"].as<std::string>();
  j.schedule_conf = r["schedule_conf"].as<std::string>();
  j.time_zone = r["time_zone"].as<std::string>();
  j.misfire_strategy =
      ParseMisfireStrategy(r["misfire_strategy"].c_str()).value_or(MisfireStrategy::kDoNothing);
  j.route_strategy = ParseRouteStrategy(r["route_strategy"].c_str()).value_or(RouteStrategy::kFirst);
  j.handler = r["handler"].as<std::string>();
  j.param = r["param"].as<std::string>();
  j.block_strategy =
      ParseBlockStrategy(r["block_strategy"].c_str()).value_or(BlockStrategy::kSerialExecution);
  j.timeout_s = r["timeout_s"].as<int>();
  j.retry_count = r["retry_count"].as<int>();
  j.retry_backoff_s = r["retry_backoff_s"].as<int>();
  j.glue_type = ParseGlueType(r["glue_type"].c_str()).value_or(GlueType::kBean);
  j.glue_source = r["glue_source"].as<std::string>();
  j.glue_remark = r["glue_remark"].as<std::string>();
  j.glue_updated_ms = r["glue_updated_ms"].as<std::int64_t>();
  j.child_job_ids = nlohmann::json::parse(r["child_job_ids"].c_str()).get<std::vector<int>>();
  j.tags = nlohmann::json::parse(r["tags"].c_str()).get<std::vector<std::string>>();
  j.alert_channel_ids = nlohmann::json::parse(r["alert_channel_ids"].c_str()).get<std::vector<int>>();
  j.calendar_ids = nlohmann::json::parse(r["calendar_ids"].c_str()).get<std::vector<int>>();
  j.start_ms = r["start_ms"].as<std::int64_t>();
  j.end_ms = r["end_ms"].as<std::int64_t>();
  j.concurrency_policy =
      ParseConcurrencyPolicy(r["concurrency_policy"].c_str()).value_or(ConcurrencyPolicy::kAllow);
  j.max_concurrent = r["max_concurrent"].as<int>();
  j.enabled = r["enabled"].as<bool>();
  j.next_fire_ms = r["next_fire_ms"].as<std::int64_t>();
  j.last_fire_ms = r["last_fire_ms"].as<std::int64_t>();
  j.stop_reason = r["stop_reason"].as<std::string>();
  j.created_ms = r["created_ms"].as<std::int64_t>();
  j.updated_ms = r["updated_ms"].as<std::int64_t>();
  return j;
}

JobGroup GroupFromRow(const pqxx::row& r) {
  JobGroup g;
  g.id = r["id"].as<int>();
  g.app_name = r["app_name"].as<std::string>();
  g.title = r["title"].as<std::string>();
  g.address_type = ParseAddressType(r["address_type"].c_str()).value_or(AddressType::kAuto);
  g.addresses = nlohmann::json::parse(r["addresses"].c_str()).get<std::vector<std::string>>();
  if (!r["access_token"].is_null()) g.access_token = r["access_token"].as<std::string>();
  g.alert_channel_ids = nlohmann::json::parse(r["alert_channel_ids"].c_str()).get<std::vector<int>>();
  g.allow_scripts = r["allow_scripts"].as<bool>();
  g.created_ms = r["created_ms"].as<std::int64_t>();
  g.updated_ms = r["updated_ms"].as<std::int64_t>();
  return g;
}

JobLog LogFromRow(const pqxx::row& r) {
  JobLog l;
  l.id = r["id"].as<std::int64_t>();
  l.job_id = r["job_id"].as<int>();
  l.group_id = r["group_id"].as<int>();
  l.trigger_type = ParseTriggerType(r["trigger_type"].c_str()).value_or(TriggerType::kCron);
  l.scheduled_ms = r["scheduled_ms"].as<std::int64_t>();
  l.owner_node = TextOrEmpty(r["owner_node"]);
  l.executor_address = r["executor_address"].as<std::string>();
  l.executor_handler = r["executor_handler"].as<std::string>();
  l.executor_param = r["executor_param"].as<std::string>();
  l.shard_index = r["shard_index"].as<int>();
  l.shard_total = r["shard_total"].as<int>();
  l.retry_count = r["retry_count"].as<int>();
  if (!r["parent_log_id"].is_null()) l.parent_log_id = r["parent_log_id"].as<std::int64_t>();
  l.dispatch_ms = r["dispatch_ms"].as<std::int64_t>();
  l.trigger_ms = r["trigger_ms"].as<std::int64_t>();
  l.trigger_code = r["trigger_code"].as<int>();
  l.trigger_msg = r["trigger_msg"].as<std::string>();
  l.handle_ms = r["handle_ms"].as<std::int64_t>();
  l.start_ms = r["start_ms"].as<std::int64_t>();
  l.handle_code = r["handle_code"].as<int>();
  l.handle_msg = r["handle_msg"].as<std::string>();
  l.alarm_status = r["alarm_status"].as<int>();
  l.skipped = r["skipped"].as<bool>();
  if (!r["output"].is_null()) l.output = r["output"].as<std::string>();
  l.created_ms = r["created_ms"].as<std::int64_t>();
  l.status = r["status"].as<std::string>();
  return l;
}

ClaimedFire ClaimedFromRow(const pqxx::row& r) {
  return {.log_id = r["id"].as<std::int64_t>(),
          .job_id = r["job_id"].as<int>(),
          .scheduled_ms = r["scheduled_ms"].as<std::int64_t>(),
          .type = ParseTriggerType(r["trigger_type"].c_str()).value_or(TriggerType::kCron),
          .misfire_strategy =
              ParseMisfireStrategy(r["misfire_strategy"].c_str()).value_or(MisfireStrategy::kDoNothing),
          .param = r["executor_param"].as<std::string>(),
          .retry_count = r["retry_count"].as<int>(),
          .shard_index = r["shard_index"].as<int>(),
          .shard_total = r["shard_total"].as<int>()};
}

void WriteGrants(pqxx::transaction_base& tx, int user_id, const std::vector<GroupGrant>& grants) {
  tx.exec_params(R"sql(DELETE FROM app_user_group WHERE user_id = $1)sql", user_id);
  if (grants.empty()) return;
  std::vector<int> ids;
  std::vector<std::string> roles;
  ids.reserve(grants.size());
  roles.reserve(grants.size());
  for (const auto& g : grants) {
    ids.push_back(g.group_id);
    roles.emplace_back(ToString(g.role));
  }
  tx.exec_params(R"sql(
    INSERT INTO app_user_group (user_id, group_id, role)
    SELECT $1, g, r FROM unnest($2::int[], $3::text[]) AS v(g, r)
  )sql",
                 user_id, PgArray<int>(ids), PgTextArray(roles));
}

User ReadUser(pqxx::transaction_base& tx, int id) {
  return UserFromRow(
      tx.exec_params1(fmt::format("SELECT {} FROM app_user WHERE id = $1", UserColumns()), id));
}

}  // namespace cronwheel::admin
