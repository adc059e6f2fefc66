#include "admin/store/pg_familiar_addresses.hpp"

#include <fmt/format.h>
#include <sodium.h>

#include "store/pg_util.hpp"

namespace cronwheel::admin {
namespace {

constexpr std::string_view kKeyContext = "cronwheel login_familiar_address v1";

}  // namespace

PgFamiliarAddresses::Key PgFamiliarAddresses::KeyFrom(std::string_view secret) {
  Key key{};
  crypto_generichash(key.data(), key.size(), reinterpret_cast<const unsigned char*>(secret.data()),
                     secret.size(), reinterpret_cast<const unsigned char*>(kKeyContext.data()),
                     kKeyContext.size());
  return key;
}

std::string PgFamiliarAddresses::Hash(std::string_view address) const {
  std::array<unsigned char, 32> out{};
  crypto_generichash(out.data(), out.size(), reinterpret_cast<const unsigned char*>(address.data()),
                     address.size(), key_.data(), key_.size());
  std::string hex(out.size() * 2 + 1, '\0');
  sodium_bin2hex(hex.data(), hex.size(), out.data(), out.size());
  hex.pop_back();
  return hex;
}

bool PgFamiliarAddresses::Known(std::string_view user, std::string_view address, std::int64_t now_ms) {
  const auto hash = Hash(address);
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    return tx
        .exec_params1(R"sql(
          SELECT EXISTS (SELECT 1 FROM login_familiar_address f JOIN app_user u ON u.id = f.user_id
                          WHERE lower(u.username) = lower($1) AND f.address_hash = $2 AND f.last_ms > $3)
        )sql",
                      std::string(user), hash, now_ms - settings_.familiar_for.count())[0]
        .as<bool>();
  });
}

void PgFamiliarAddresses::Remember(std::string_view user, std::string_view address, std::int64_t now_ms) {
  if (settings_.per_user == 0) return;
  const auto hash = Hash(address);
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const std::string name(user);
    tx.exec_params(R"sql(
      INSERT INTO login_familiar_address (user_id, address_hash, last_ms)
      SELECT id, $2, $3 FROM app_user WHERE lower(username) = lower($1)
      ON CONFLICT (user_id, address_hash) DO UPDATE
        SET last_ms = GREATEST(login_familiar_address.last_ms, EXCLUDED.last_ms)
    )sql",
                   name, hash, now_ms);
    // The user's most recent per_user rows stay; so do other users' rows younger than familiar_for.
    tx.exec_params(R"sql(
      DELETE FROM login_familiar_address f
       WHERE f.last_ms <= $2
          OR (f.user_id IN (SELECT id FROM app_user WHERE lower(username) = lower($1))
              AND (f.user_id, f.address_hash) NOT IN (
                    SELECT k.user_id, k.address_hash FROM login_familiar_address k
                     WHERE k.user_id = f.user_id ORDER BY k.last_ms DESC, k.address_hash LIMIT $3))
    )sql",
                   name, now_ms - settings_.familiar_for.count(),
                   static_cast<std::int64_t>(settings_.per_user));
    tx.commit();
  });
}

}  // namespace cronwheel::admin
