#include "admin/results/registry_service.hpp"

#include "cronwheel/net/http_address.hpp"
#include "store/pg_util.hpp"
#include "xxljob/token.hpp"

namespace cronwheel::admin {

RegistryService::RegistryService(ringwheel::Clock& clock, PgPool& pool, std::chrono::milliseconds dead_after,
                                 RegistryGuard guard)
    : clock_(clock), pool_(pool), dead_after_(dead_after), guard_(std::move(guard)) {}

Result<void> RegistryService::Register(const xxljob::RegistryParam& p) {
  if (auto why = guard_.CheckAddress(p.registry_value)) return Error::Forbidden(std::move(*why));
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(
      INSERT INTO executor_registry (registry_group, registry_key, registry_value, updated_ms)
      VALUES ($1, $2, $3, $4)
      ON CONFLICT (registry_group, registry_key, registry_value) DO UPDATE SET updated_ms = EXCLUDED.updated_ms
    )sql",
                   p.registry_group, p.registry_key, net::NormalizeAddress(p.registry_value), clock_.NowMs());
    tx.commit();
  });
  return {};
}

void RegistryService::Remove(const xxljob::RegistryParam& p) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(
      DELETE FROM executor_registry WHERE registry_group = $1 AND registry_key = $2 AND registry_value = $3
    )sql",
                   p.registry_group, p.registry_key, net::NormalizeAddress(p.registry_value));
    tx.commit();
  });
}

std::size_t RegistryService::ExpireDead() {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const auto n = tx.exec_params(R"sql(DELETE FROM executor_registry WHERE updated_ms < $1)sql",
                                  clock_.NowMs() - dead_after_.count())
                       .affected_rows();
    tx.commit();
    return static_cast<std::size_t>(n);
  });
}

std::optional<std::string> RegistryService::GroupToken(const std::string& app_name) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<std::string> {
    pqxx::read_transaction tx(conn);
    const auto rows =
        tx.exec_params(R"sql(SELECT access_token FROM job_group WHERE app_name = $1)sql", app_name);
    if (rows.empty() || rows[0]["access_token"].is_null()) return std::nullopt;
    return rows[0]["access_token"].as<std::string>();
  });
}

bool RegistryService::KnownToken(std::string_view token, const std::string& global_token) {
  if (xxljob::TokenMatches(token, global_token)) return true;
  const auto matches = [&] {
    bool any = false;
    for (const auto& t : group_tokens_)
      any = xxljob::TokenMatches(token, t) || any;  // no early exit: the time does not tell which
    return any;
  };
  std::lock_guard lock(tokens_mu_);
  const auto now = clock_.NowMs();
  const auto age = now - tokens_read_ms_;
  if (age < 1000) {
    if (matches()) return true;
    if (age < 100) return false;
  }
  group_tokens_ = WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<std::string> out;
    for (const auto& r :
         tx.exec(R"sql(SELECT access_token FROM job_group WHERE access_token IS NOT NULL)sql"))
      out.push_back(r[0].as<std::string>());
    return out;
  });
  tokens_read_ms_ = now;
  return matches();
}

}  // namespace cronwheel::admin
