#pragma once
// FamiliarAddresses (auth/familiar_addresses.hpp) on PostgreSQL: the table login_familiar_address
// (sql/028_familiar_addresses.sql), so a user's familiar addresses survive a restart of the admin and are
// shared by the admins of a cluster (security review 2, F5 (b)).
//
// Addresses are personal data: only a keyed hash is stored, BLAKE2b-256 (libsodium's crypto_generichash) of
// the address under a 32-byte key. The admin derives the key from the cluster's access_token (KeyFrom), which
// every admin of a cluster has and the database does not: a copy of the table alone tells no address. A
// changed access_token makes every address unfamiliar until its user signs in from it again.
//
// Rows are per account (user_id; deleted with the user): a user name is matched in any case (lower()), as the
// throttle names users. Remember keeps the `per_user` most recent rows of the user and deletes every row
// older than `familiar_for`, of any user, in the same transaction.
//
// Thread-safety: safe from any thread (pooled connections). Errors: database failures throw.

#include <array>
#include <string>

#include "admin/auth/familiar_addresses.hpp"

namespace cronwheel::admin {

class PgPool;

class PgFamiliarAddresses final : public FamiliarAddresses {
 public:
  using Key = std::array<unsigned char, 32>;
  // `pool` must outlive this; max_users of `settings` is not used (rows are per account).
  PgFamiliarAddresses(PgPool& pool, const Key& key, FamiliarSettings settings)
      : pool_(pool), key_(key), settings_(settings) {}

  // The key of the hashes, derived from `secret` (the access_token) with BLAKE2b under a fixed context.
  static Key KeyFrom(std::string_view secret);

  bool Known(std::string_view user, std::string_view address, std::int64_t now_ms) override;
  void Remember(std::string_view user, std::string_view address, std::int64_t now_ms) override;

 private:
  [[nodiscard]] std::string Hash(std::string_view address) const;

  PgPool& pool_;
  Key key_;
  FamiliarSettings settings_;
};

}  // namespace cronwheel::admin
