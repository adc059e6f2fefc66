#pragma once
// The secrets of console sessions and API tokens (libsodium). Private to admin/src/auth.

#include <string>
#include <string_view>

namespace cronwheel::admin {

// Initialises libsodium once (thread-safe); throws std::runtime_error when it cannot.
void InitSodium();
// 32 random bytes (randombytes_buf), base64url without padding: 43 characters.
std::string RandomSecret();
// Hex SHA-256 of a high-entropy secret (session or API token): what the database keeps.
std::string SecretHash(std::string_view secret);
// The PKCE S256 challenge of `verifier` (RFC 7636 §4.2): BASE64URL(SHA-256(verifier)) without padding.
std::string PkceChallenge(std::string_view verifier);
// Whether two strings are equal, in time that depends on their length only (sodium_memcmp).
bool SameSecret(std::string_view a, std::string_view b);

}  // namespace cronwheel::admin
