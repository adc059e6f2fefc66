#include "admin/store/pg_registry_store.hpp"

#include "store/pg_util.hpp"

namespace cronwheel::admin {

void PgRegistryStore::Upsert(const RegistryEntry& entry, std::int64_t now_ms) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(
      INSERT INTO executor_registry (registry_group, registry_key, registry_value, updated_ms, run_at,
                                     clock_offset_ms, clock_error_ms)
      VALUES ($1, $2, $3, $4, $5, $6, $7)
      ON CONFLICT (registry_group, registry_key, registry_value) DO UPDATE
        SET updated_ms = EXCLUDED.updated_ms, run_at = EXCLUDED.run_at,
            clock_offset_ms = EXCLUDED.clock_offset_ms, clock_error_ms = EXCLUDED.clock_error_ms
    )sql",
                   entry.group, entry.key, entry.value, now_ms, entry.run_at, entry.clock_offset_ms,
                   entry.clock_error_ms);
    tx.commit();
  });
}

void PgRegistryStore::Remove(const RegistryEntry& entry) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(
      DELETE FROM executor_registry WHERE registry_group = $1 AND registry_key = $2 AND registry_value = $3
    )sql",
                   entry.group, entry.key, entry.value);
    tx.commit();
  });
}

std::size_t PgRegistryStore::RemoveNotRenewedSince(std::int64_t updated_before_ms) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const auto n =
        tx.exec_params(R"sql(DELETE FROM executor_registry WHERE updated_ms < $1)sql", updated_before_ms)
            .affected_rows();
    tx.commit();
    return static_cast<std::size_t>(n);
  });
}

std::optional<std::string> PgRegistryStore::GroupToken(const std::string& app_name) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<std::string> {
    pqxx::read_transaction tx(conn);
    const auto rows =
        tx.exec_params(R"sql(SELECT access_token FROM job_group WHERE app_name = $1)sql", app_name);
    if (rows.empty() || rows[0]["access_token"].is_null()) return std::nullopt;
    return rows[0]["access_token"].as<std::string>();
  });
}

std::vector<std::string> PgRegistryStore::GroupTokens() {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<std::string> out;
    for (const auto& r :
         tx.exec(R"sql(SELECT access_token FROM job_group WHERE access_token IS NOT NULL)sql"))
      out.push_back(r[0].as<std::string>());
    return out;
  });
}

}  // namespace cronwheel::admin
