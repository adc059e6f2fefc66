#pragma once
// A user's familiar addresses: where the user signed in successfully lately. The login throttle
// (auth/login_throttle.hpp) holds a login from a familiar address to a key of its own, so that guesses from
// elsewhere, or by others sharing the address, do not lock the user out there (docs/security.md, "Sign-in,
// sessions and API tokens"). The port the throttle owns; implemented in memory here (tests, tools) and on
// PostgreSQL by PgFamiliarAddresses (admin/store/pg_familiar_addresses.hpp: kept across restarts and shared
// by the admins of a cluster; security review 2, F5 (b)).
//
// Users are named as the throttle names them: the user name in lower case (its first 100 bytes). An address
// is the peer's address as the HTTP server saw it.
//
// Thread-safety: every member may be called from any thread at once. Errors: infrastructure failures throw.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cronwheel/mutex.hpp"

namespace cronwheel::admin {

// How long an address stays familiar, and how many are kept per user.
struct FamiliarSettings {
  std::chrono::milliseconds familiar_for{std::chrono::hours(24 * 30)};  // since the last sign-in from it
  std::size_t per_user = 8;                                             // the most recent are kept
  std::size_t max_users = 10'000;  // in memory only: the user whose last sign-in is oldest goes first
};

class FamiliarAddresses {
 public:
  virtual ~FamiliarAddresses() = default;
  // Whether `user` signed in from `address` within familiar_for before `now_ms` (epoch ms).
  virtual bool Known(std::string_view user, std::string_view address, std::int64_t now_ms) = 0;
  // `user` signed in from `address` at `now_ms`: the address is familiar from now on, the oldest beyond
  // per_user and those older than familiar_for forgotten. A user name no account has is ignored by a store
  // that keeps addresses per account.
  virtual void Remember(std::string_view user, std::string_view address, std::int64_t now_ms) = 0;

 protected:
  FamiliarAddresses() = default;
  FamiliarAddresses(const FamiliarAddresses&) = default;
  FamiliarAddresses& operator=(const FamiliarAddresses&) = default;
};

// In this process's memory, bounded by max_users × per_user. Complexity: O(per_user) per call, and
// O(max_users) when a new user evicts the oldest.
class MemoryFamiliarAddresses final : public FamiliarAddresses {
 public:
  explicit MemoryFamiliarAddresses(FamiliarSettings settings) : settings_(settings) {}
  bool Known(std::string_view user, std::string_view address, std::int64_t now_ms) override;
  void Remember(std::string_view user, std::string_view address, std::int64_t now_ms) override;

 private:
  struct Address {
    std::string address;
    std::int64_t last_ms = 0;
  };
  struct UserAddresses {
    std::vector<Address> addresses;  // most recent last
    std::int64_t last_ms = 0;
  };
  FamiliarSettings settings_;
  cronwheel::Mutex mu_;
  std::unordered_map<std::string, UserAddresses> users_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cronwheel::admin
