#include "admin/api/json_views.hpp"

#include "admin/schedule/next_fire.hpp"
#include "ringwheel/calendar.hpp"

namespace cronwheel::admin {

using nlohmann::json;

nlohmann::json ToJson(const JobGroup& g, bool include_token) {
  json j{{"id", g.id},
         {"app_name", g.app_name},
         {"title", g.title},
         {"address_type", ToString(g.address_type)},
         {"addresses", g.addresses},
         {"has_access_token", g.access_token.has_value()},
         {"alert_channel_ids", g.alert_channel_ids},
         {"allow_scripts", g.allow_scripts},
         {"created_ms", g.created_ms},
         {"updated_ms", g.updated_ms}};
  if (include_token) j["access_token"] = g.access_token ? json(*g.access_token) : json(nullptr);
  return j;
}

nlohmann::json ToJson(const AlertChannel& c, bool include_target) {
  json j{{"id", c.id},
         {"name", c.name},
         {"kind", ToString(c.kind)},
         {"preset", c.kind == AlertKind::kWebhook ? json(ToString(c.preset)) : json(nullptr)},
         {"has_secret", !c.secret.empty()},
         {"events", c.events},
         {"threshold", c.threshold},
         {"silence_s", c.silence_s},
         {"created_ms", c.created_ms},
         {"updated_ms", c.updated_ms}};
  if (include_target) {
    j["target"] = c.target;
    j["body_template"] = c.body_template;
  }
  return j;
}

nlohmann::json ToJson(const JobCalendar& c, int jobs) {
  json days = json::array();
  for (const auto& d : c.days)
    days.push_back({{"date", ringwheel::FormatDate(d.day)}, {"name", d.name}});
  return {{"id", c.id},
          {"name", c.name},
          {"description", c.description},
          {"kind", ToString(c.kind)},
          {"time_zone", c.time_zone},
          {"days", days},
          {"jobs", jobs},
          {"created_ms", c.created_ms},
          {"updated_ms", c.updated_ms}};
}

nlohmann::json ToJson(const Job& j) {
  return {{"id", j.id},
          {"group_id", j.group_id},
          {"description", j.description},
          {"author", j.author},
          {"alarm_email", j.alarm_email},
          {"alarm_webhook", j.alarm_webhook},
          {"schedule_type", j.schedule_type},
          {"schedule_conf", j.schedule_conf},
          {"time_zone", j.time_zone},
          {"misfire_strategy", ToString(j.misfire_strategy)},
          {"route_strategy", ToString(j.route_strategy)},
          {"handler", j.handler},
          {"param", j.param},
          {"block_strategy", ToString(j.block_strategy)},
          {"timeout_s", j.timeout_s},
          {"retry_count", j.retry_count},
          {"retry_backoff_s", j.retry_backoff_s},
          {"glue_type", ToString(j.glue_type)},
          {"glue_source", j.glue_source},
          {"glue_remark", j.glue_remark},
          {"glue_updated_ms", j.glue_updated_ms},
          {"child_job_ids", j.child_job_ids},
          {"tags", j.tags},
          {"alert_channel_ids", j.alert_channel_ids},
          {"calendar_ids", j.calendar_ids},
          {"start_ms", j.start_ms},
          {"end_ms", j.end_ms},
          {"concurrency_policy", ToString(j.concurrency_policy)},
          {"max_concurrent", j.max_concurrent},
          {"enabled", j.enabled},
          {"next_fire_ms", j.next_fire_ms == kAwaitingCompletion ? 0 : j.next_fire_ms},
          {"last_fire_ms", j.last_fire_ms},
          {"stop_reason", j.stop_reason},
          {"created_ms", j.created_ms},
          {"updated_ms", j.updated_ms}};
}

nlohmann::json ToJson(const RunOnce& r) {
  return {{"id", r.id},
          {"job_id", r.job_id},
          {"fire_at_ms", r.fire_at_ms},
          {"param", r.param ? nlohmann::json(*r.param) : nlohmann::json(nullptr)},
          {"state", r.State()},
          {"log_id", r.log_id == 0 ? nlohmann::json(nullptr) : nlohmann::json(r.log_id)},
          {"cancelled_ms", r.cancelled_ms},
          {"cancelled_by", r.cancelled_by},
          {"created_by", r.created_by},
          {"created_ms", r.created_ms}};
}

nlohmann::json ToJson(const JobLog& l) {
  return {{"id", l.id},
          {"job_id", l.job_id},
          {"group_id", l.group_id},
          {"trigger_type", ToString(l.trigger_type)},
          {"scheduled_ms", l.scheduled_ms},
          {"status", l.status},
          {"executor_address", l.executor_address},
          {"executor_handler", l.executor_handler},
          {"executor_param", l.executor_param},
          {"shard_index", l.shard_index},
          {"shard_total", l.shard_total},
          {"retry_count", l.retry_count},
          {"parent_log_id", l.parent_log_id ? json(*l.parent_log_id) : json(nullptr)},
          {"trigger_ms", l.trigger_ms},
          {"trigger_code", l.trigger_code},
          {"trigger_msg", l.trigger_msg},
          {"start_ms", l.start_ms},
          {"handle_ms", l.handle_ms},
          {"handle_code", l.handle_code},
          {"handle_msg", l.handle_msg},
          {"output", l.output ? nlohmann::json::parse(*l.output, nullptr, false) : nlohmann::json()},
          {"alarm_status", l.alarm_status},
          {"owner_node", l.owner_node}};
}

void AddGroupRoles(nlohmann::json& user, const std::vector<GroupGrant>& groups) {
  auto ids = nlohmann::json::array();
  auto roles = nlohmann::json::array();
  for (const auto& g : groups) {
    ids.push_back(g.group_id);
    roles.push_back({{"group_id", g.group_id}, {"role", ToString(g.role)}});
  }
  user["permitted_group_ids"] = std::move(ids);
  user["group_roles"] = std::move(roles);
}

nlohmann::json ToJson(const User& u) {
  nlohmann::json out{{"id", u.id},
                     {"username", u.username},
                     {"role", u.admin ? "ADMIN" : "USER"},
                     {"login_source", u.login_source},
                     {"external_subject", u.external_subject.empty() ? nlohmann::json(nullptr)
                                                                     : nlohmann::json(u.external_subject)},
                     {"created_ms", u.created_ms},
                     {"updated_ms", u.updated_ms}};
  AddGroupRoles(out, u.groups);
  return out;
}

nlohmann::json ToJson(const ApiToken& t) {
  return {{"id", t.id},
          {"user_id", t.user_id},
          {"username", t.username},
          {"name", t.name},
          {"scope", ToString(t.scope)},
          {"created_ms", t.created_ms},
          {"last_used_ms", t.last_used_ms},
          {"expires_ms", t.expires_ms},
          {"revoked_ms", t.revoked_ms},
          {"revoked_reason", t.revoked_reason},
          {"state", t.state}};
}

nlohmann::json ToJson(const AuditEntry& e) {
  return {{"id", e.id},
          {"at_ms", e.at_ms},
          {"user_id", e.user_id ? json(*e.user_id) : json(nullptr)},
          {"username", e.username},
          {"action", e.action},
          {"entity", e.entity},
          {"entity_id", e.entity_id},
          {"before", e.before},
          {"after", e.after},
          {"via", e.via}};
}

}  // namespace cronwheel::admin
