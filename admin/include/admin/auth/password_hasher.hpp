#pragma once
// Passwords: argon2id through libsodium's crypto_pwhash_str, with the INTERACTIVE limits (2 passes over 64
// MiB; about 0.1 s on one core here). MODERATE (3 passes, 256 MiB, ~0.7 s) would make a login cost a quarter
// GiB on a server whose HTTP pool runs up to `http_threads` requests at once; online guessing is bounded by
// the login throttle instead, and INTERACTIVE is libsodium's recommended baseline for interactive logins. At
// most `max_concurrent` hashes run at once (the rest wait), so a burst of logins cannot take the machine's
// memory. A stored hash made with other limits is upgraded on the next successful login (NeedsRehash). A
// login for a user that does not exist verifies against a dummy hash (VerifyDummy), so it costs the same time
// as a wrong password.

#include <cstddef>
#include <semaphore>
#include <string>
#include <string_view>

namespace cronwheel::admin {

// argon2id password hashes (libsodium). Thread-safe; `max_concurrent` bounds the memory in use.
class PasswordHasher final {
 public:
  struct Settings {
    unsigned long long ops_limit = 2;      // crypto_pwhash_OPSLIMIT_INTERACTIVE
    std::size_t mem_limit = 64ULL << 20U;  // crypto_pwhash_MEMLIMIT_INTERACTIVE, bytes
    int max_concurrent = 4;
  };
  explicit PasswordHasher(Settings settings);
  PasswordHasher(const PasswordHasher&) = delete;
  PasswordHasher& operator=(const PasswordHasher&) = delete;

  // "$argon2id$v=19$m=65536,t=2,p=1$...". Throws std::runtime_error when out of memory.
  std::string Hash(std::string_view password);
  // True when `password` matches `hash`. A malformed hash is false.
  bool Verify(std::string_view password, const std::string& hash);
  // Costs what Verify against a real hash costs; always false (for unknown users).
  void VerifyDummy(std::string_view password);
  // True when `hash` was made with other limits than these settings.
  bool NeedsRehash(const std::string& hash) const;

 private:
  Settings settings_;
  std::counting_semaphore<1024> slots_;
  std::string dummy_hash_;
};

}  // namespace cronwheel::admin
