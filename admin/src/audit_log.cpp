#include "admin/audit_log.hpp"

#include <spdlog/spdlog.h>

#include "pg_util.hpp"

namespace cronwheel::admin {

using nlohmann::json;

nlohmann::json ToJson(const AuditEntry& e) {
  return {{"id", e.id},
          {"at_ms", e.at_ms},
          {"user_id", e.user_id ? json(*e.user_id) : json(nullptr)},
          {"username", e.username},
          {"action", e.action},
          {"entity", e.entity},
          {"entity_id", e.entity_id},
          {"before", e.before},
          {"after", e.after}};
}

void AuditLog::Record(const Principal& who, std::string_view action, std::string_view entity,
                      std::string entity_id, const nlohmann::json& before, const nlohmann::json& after) {
  try {
    const auto dump = [](const json& j) -> std::optional<std::string> {
      if (j.is_null()) return std::nullopt;
      return j.dump(-1, ' ', false, json::error_handler_t::replace);
    };
    WithConnection(pool_, [&](pqxx::connection& conn) {
      pqxx::work tx(conn);
      tx.exec_params(
          "INSERT INTO audit_log (at_ms, user_id, username, action, entity, entity_id, before, after)"
          " VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb)",
          clock_.NowMs(), who.user_id > 0 ? std::optional(who.user_id) : std::nullopt,
          who.username.substr(0, 100), std::string(action), std::string(entity), entity_id, dump(before),
          dump(after));
      tx.commit();
    });
  } catch (const std::exception& e) {
    spdlog::error("audit: cannot record {} {} {} by {}: {}", action, entity, entity_id, who.username,
                  e.what());
  }
}

AuditPage AuditLog::List(const AuditQuery& q) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::string where = "WHERE true";
    if (q.entity) where += " AND entity = " + tx.quote(*q.entity);
    if (q.entity_id) where += " AND entity_id = " + tx.quote(*q.entity_id);
    if (q.action) where += " AND action = " + tx.quote(*q.action);
    if (q.username) where += " AND username = " + tx.quote(*q.username);
    AuditPage page;
    page.total = tx.exec1("SELECT count(*) FROM audit_log " + where)[0].as<std::int64_t>();
    for (const auto& r : tx.exec_params(
             "SELECT id, at_ms, user_id, username, action, entity, entity_id, before::text, after::text"
             " FROM audit_log " +
                 where + " ORDER BY at_ms DESC, id DESC LIMIT $1 OFFSET $2",
             q.limit, q.offset)) {
      AuditEntry e;
      e.id = r[0].as<std::int64_t>();
      e.at_ms = r[1].as<std::int64_t>();
      if (!r[2].is_null()) e.user_id = r[2].as<int>();
      e.username = r[3].as<std::string>();
      e.action = r[4].as<std::string>();
      e.entity = r[5].as<std::string>();
      e.entity_id = r[6].as<std::string>();
      e.before = r[7].is_null() ? json(nullptr) : json::parse(r[7].c_str());
      e.after = r[8].is_null() ? json(nullptr) : json::parse(r[8].c_str());
      page.items.push_back(std::move(e));
    }
    return page;
  });
}

}  // namespace cronwheel::admin
