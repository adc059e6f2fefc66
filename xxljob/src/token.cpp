#include "xxljob/token.hpp"

#include <sodium.h>

namespace cronwheel::xxljob {

bool TokenMatches(std::string_view given, std::string_view expected) {
  if (expected.empty()) return true;
  static const int init = sodium_init();  // idempotent; selects the implementations
  (void)init;
  unsigned char a[crypto_hash_sha256_BYTES];
  unsigned char b[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(a, reinterpret_cast<const unsigned char*>(given.data()), given.size());
  crypto_hash_sha256(b, reinterpret_cast<const unsigned char*>(expected.data()), expected.size());
  return sodium_memcmp(a, b, sizeof a) == 0;
}

}  // namespace cronwheel::xxljob
