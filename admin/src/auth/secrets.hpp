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

}  // namespace cronwheel::admin
