#include "admin/auth/password_hasher.hpp"

#include <sodium.h>

#include <algorithm>
#include <stdexcept>

#include "auth/secrets.hpp"

namespace cronwheel::admin {

PasswordHasher::PasswordHasher(Settings settings)
    : settings_(settings), slots_(std::clamp(settings.max_concurrent, 1, 1024)) {
  InitSodium();
  dummy_hash_ = Hash(RandomSecret());
}

std::string PasswordHasher::Hash(std::string_view password) {
  char out[crypto_pwhash_STRBYTES];
  slots_.acquire();
  const int rc = crypto_pwhash_str_alg(out, password.data(), password.size(), settings_.ops_limit,
                                       settings_.mem_limit, crypto_pwhash_ALG_ARGON2ID13);
  slots_.release();
  if (rc != 0) throw std::runtime_error("cannot hash a password: out of memory");
  return out;
}

bool PasswordHasher::Verify(std::string_view password, const std::string& hash) {
  slots_.acquire();
  const bool ok = crypto_pwhash_str_verify(hash.c_str(), password.data(), password.size()) == 0;
  slots_.release();
  return ok;
}

void PasswordHasher::VerifyDummy(std::string_view password) {
  (void)Verify(password, dummy_hash_);
}

bool PasswordHasher::NeedsRehash(const std::string& hash) const {
  return crypto_pwhash_str_needs_rehash(hash.c_str(), settings_.ops_limit, settings_.mem_limit) != 0;
}

}  // namespace cronwheel::admin
