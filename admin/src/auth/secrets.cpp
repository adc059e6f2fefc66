#include "auth/secrets.hpp"

#include <sodium.h>

#include <stdexcept>

namespace cronwheel::admin {
namespace {

constexpr std::size_t kSecretBytes = 32;

}  // namespace

void InitSodium() {
  static const int init = sodium_init();
  if (init < 0) throw std::runtime_error("libsodium cannot be initialised");
}

std::string RandomSecret() {
  InitSodium();
  unsigned char bytes[kSecretBytes];
  randombytes_buf(bytes, sizeof bytes);
  char out[sodium_base64_ENCODED_LEN(kSecretBytes, sodium_base64_VARIANT_URLSAFE_NO_PADDING)];
  sodium_bin2base64(out, sizeof out, bytes, sizeof bytes, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  sodium_memzero(bytes, sizeof bytes);
  return out;
}

std::string SecretHash(std::string_view secret) {
  InitSodium();
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(secret.data()), secret.size());
  char hex[crypto_hash_sha256_BYTES * 2 + 1];
  sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
  return hex;
}

std::string PkceChallenge(std::string_view verifier) {
  InitSodium();
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(verifier.data()), verifier.size());
  char out[sodium_base64_ENCODED_LEN(crypto_hash_sha256_BYTES, sodium_base64_VARIANT_URLSAFE_NO_PADDING)];
  sodium_bin2base64(out, sizeof out, digest, sizeof digest, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  return out;
}

bool SameSecret(std::string_view a, std::string_view b) {
  return a.size() == b.size() && sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace cronwheel::admin
