// Reading job and job_group rows (column lists kJobColumns / kGroupColumns).
#include <nlohmann/json.hpp>

#include "admin/job_catalog.hpp"

namespace cronwheel::admin {

const char* const kJobColumns =
    "id, group_id, description, author, alarm_email, alarm_webhook, schedule_type, schedule_conf, time_zone,"
    " misfire_strategy, route_strategy, handler, param, block_strategy, timeout_s, retry_count, "
    "retry_backoff_s,"
    " glue_type, glue_source, glue_remark, glue_updated_ms, to_json(child_job_ids), enabled, next_fire_ms,"
    " last_fire_ms, stop_reason, created_ms, updated_ms";

const char* const kGroupColumns =
    "id, app_name, title, address_type, to_json(addresses), access_token, created_ms, updated_ms";

Job JobFromRow(const pqxx::row& r) {
  Job j;
  j.id = r[0].as<int>();
  j.group_id = r[1].as<int>();
  j.description = r[2].as<std::string>();
  j.author = r[3].as<std::string>();
  j.alarm_email = r[4].as<std::string>();
  j.alarm_webhook = r[5].as<std::string>();
  j.schedule_type = r[6].as<std::string>();
  j.schedule_conf = r[7].as<std::string>();
  j.time_zone = r[8].as<std::string>();
  j.misfire_strategy = ParseMisfireStrategy(r[9].c_str()).value_or(MisfireStrategy::kDoNothing);
  j.route_strategy = ParseRouteStrategy(r[10].c_str()).value_or(RouteStrategy::kFirst);
  j.handler = r[11].as<std::string>();
  j.param = r[12].as<std::string>();
  j.block_strategy = ParseBlockStrategy(r[13].c_str()).value_or(BlockStrategy::kSerialExecution);
  j.timeout_s = r[14].as<int>();
  j.retry_count = r[15].as<int>();
  j.retry_backoff_s = r[16].as<int>();
  j.glue_type = ParseGlueType(r[17].c_str()).value_or(GlueType::kBean);
  j.glue_source = r[18].as<std::string>();
  j.glue_remark = r[19].as<std::string>();
  j.glue_updated_ms = r[20].as<std::int64_t>();
  j.child_job_ids = nlohmann::json::parse(r[21].c_str()).get<std::vector<int>>();
  j.enabled = r[22].as<bool>();
  j.next_fire_ms = r[23].as<std::int64_t>();
  j.last_fire_ms = r[24].as<std::int64_t>();
  j.stop_reason = r[25].as<std::string>();
  j.created_ms = r[26].as<std::int64_t>();
  j.updated_ms = r[27].as<std::int64_t>();
  return j;
}

JobGroup GroupFromRow(const pqxx::row& r) {
  JobGroup g;
  g.id = r[0].as<int>();
  g.app_name = r[1].as<std::string>();
  g.title = r[2].as<std::string>();
  g.address_type = ParseAddressType(r[3].c_str()).value_or(AddressType::kAuto);
  g.addresses = nlohmann::json::parse(r[4].c_str()).get<std::vector<std::string>>();
  if (!r[5].is_null()) g.access_token = r[5].as<std::string>();
  g.created_ms = r[6].as<std::int64_t>();
  g.updated_ms = r[7].as<std::int64_t>();
  return g;
}

}  // namespace cronwheel::admin
