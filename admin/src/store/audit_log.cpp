#include "admin/store/audit_log.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cronwheel/json.hpp"
#include "store/pg_util.hpp"

namespace cronwheel::admin {

using nlohmann::json;

void AuditLog::Record(const Principal& who, std::string_view action, std::string_view entity,
                      std::string entity_id, const nlohmann::json& before, const nlohmann::json& after) {
  try {
    const auto dump = [](const json& j) -> std::optional<std::string> {
      if (j.is_null()) return std::nullopt;
      return DumpLossy(j);
    };
    WithConnection(pool_, [&](pqxx::connection& conn) {
      pqxx::work tx(conn);
      tx.exec_params(R"sql(
        INSERT INTO audit_log (at_ms, user_id, username, action, entity, entity_id, before, after, via)
        VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9)
      )sql",
                     clock_.NowMs(), who.user_id > 0 ? std::optional(who.user_id) : std::nullopt,
                     who.username.substr(0, 100), std::string(action), std::string(entity), entity_id,
                     dump(before), dump(after), who.Login().substr(0, 200));
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
    page.total = tx.exec1(R"sql(SELECT count(*) FROM audit_log )sql" + where)[0].as<std::int64_t>();
    for (const auto& r : tx.exec_params(fmt::format(R"sql(
           SELECT id, at_ms, user_id, username, action, entity, entity_id, before::text AS before,
                  after::text AS after, via
             FROM audit_log {} ORDER BY at_ms DESC, id DESC LIMIT $1 OFFSET $2
         )sql",
                                                    where),
                                        q.limit, q.offset)) {
      AuditEntry e;
      e.id = r["id"].as<std::int64_t>();
      e.at_ms = r["at_ms"].as<std::int64_t>();
      if (!r["user_id"].is_null()) e.user_id = r["user_id"].as<int>();
      e.username = r["username"].as<std::string>();
      e.action = r["action"].as<std::string>();
      e.entity = r["entity"].as<std::string>();
      e.entity_id = r["entity_id"].as<std::string>();
      e.before = r["before"].is_null() ? json(nullptr) : json::parse(r["before"].c_str());
      e.after = r["after"].is_null() ? json(nullptr) : json::parse(r["after"].c_str());
      e.via = r["via"].as<std::string>();
      page.items.push_back(std::move(e));
    }
    return page;
  });
}

}  // namespace cronwheel::admin
