#pragma once
// The login throttle: failed password checks make later attempts wait, without letting anyone lock a user
// out. Counters live in this admin process (each admin of a cluster counts its own), bounded in memory.
//
// Keys. A login from address A for user name U (in any case) is held to:
//  * when A is familiar for U (U signed in successfully from A in the last `familiar_for`; kept by a
//    FamiliarAddresses store, auth/familiar_addresses.hpp: in PostgreSQL in production, so it survives a
//    restart), the key "familiar:U|A" alone. Neither A's failures for other names nor U's failures from
//    elsewhere touch it, and U's own typos at A are not charged to A (security review 2, F5 (a): A may be a
//    NAT or a proxy shared with others). It has the same back-off, so someone sharing A still gets no more
//    than that many guesses at U (and, summed over the users familiar at A, one budget per such user).
//  * otherwise both "client:A" (an address is limited by its own failures, whatever names it tries) and
//    "user:U" (guesses from every unfamiliar address share it, so many addresses cannot multiply the guesses
//    at one user). U's familiar addresses are not refused because of either ("smart lockout", as Microsoft
//    Entra ID's: familiar locations are locked out separately from unfamiliar ones).
// Other checks of a password (a user changing their own) use a key of their own (Begin with one key).
//
// Back-off. A key's first `max_failures` failures cost nothing. Each further failure makes the key wait
// `first_wait` doubled per failure beyond the first `max_failures`, at most `max_wait`: with the defaults 1 s
// after the 5th failure, 2 s after the 6th, 4 s after the 7th, ..., 15 min from the 15th on. A key's failures
// are forgotten once `forget_after` has passed since its last failure and its wait. Success forgets nothing
// (an attacker who has an account of their own must not reset an address's count by signing in with it); it
// makes the address familiar for the user.
//
// Atomic. An attempt takes its place on each of its keys under the lock before its password is verified
// (Begin), and gives it back with the outcome (Ticket::Failed, Ticket::Succeeded; a ticket dropped without an
// outcome, by an exception, counts as neither). A key admits attempts while its failures plus those in flight
// stay below max_failures and it is not waiting; beyond max_failures, one attempt at a time once its wait is
// over. So 30 wrong guesses at once check at most the allowed number, the rest answer 429 at once. Whether
// the address is familiar is asked of the store before the lock is taken (it may be a database).
//
// Memory: at most `max_keys` keys; beyond that, keys whose failures are forgotten go first, then the one with
// the oldest failure (never one with an attempt in flight). Familiar addresses: as the store keeps them (the
// in-memory one: at most `max_users` users). Time: the caller passes "now" (epoch ms); no clock here.
// Thread-safety: every member may be called from any thread; one mutex. Complexity: O(1) per attempt but
// for the eviction scan (O(max_keys), only when full), plus the store's look-up.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "admin/auth/familiar_addresses.hpp"
#include "cronwheel/mutex.hpp"

namespace cronwheel::admin {

class LoginThrottle final {
 public:
  struct Settings {
    int max_failures = 5;  // failures of a key before it must wait
    std::chrono::milliseconds first_wait{std::chrono::seconds(1)};
    std::chrono::milliseconds max_wait{std::chrono::minutes(15)};
    std::chrono::milliseconds forget_after{std::chrono::minutes(5)};  // after the last failure and its wait
    // While a key is at its limit with an attempt in flight, others are told to come back after this.
    std::chrono::milliseconds busy_wait{std::chrono::seconds(1)};
    std::size_t max_keys = 100'000;
    // Familiar addresses when the throttle keeps them itself (no FamiliarAddresses store given; a store has
    // its own FamiliarSettings, with the same defaults).
    std::chrono::milliseconds familiar_for{std::chrono::hours(24 * 30)};
    std::size_t familiar_per_user = 8;
    std::size_t max_users = 10'000;
  };

  class Ticket;
  // Begin's answer: a ticket (verify the password, then report the outcome on it), or the wait.
  struct Admission;

  // Familiar addresses are kept by `familiar` (which must outlive this), or, when null, in this throttle's
  // memory (MemoryFamiliarAddresses with familiar_for, familiar_per_user and max_users).
  explicit LoginThrottle(Settings settings, FamiliarAddresses* familiar = nullptr);
  LoginThrottle(const LoginThrottle&) = delete;
  LoginThrottle& operator=(const LoginThrottle&) = delete;

  // A login for `username` from `address` at `now_ms`: takes its place on the keys above. `username` is
  // compared in any case (its first 100 bytes). May throw what the familiar-address store throws.
  Admission BeginLogin(std::string_view username, std::string_view address, std::int64_t now_ms);
  // Any other password check, limited by `key` alone (e.g. "password:<user id>").
  Admission Begin(const std::string& key, std::int64_t now_ms);

  // Whether `address` is familiar for `username` at `now_ms` (for tests and the docs' examples).
  [[nodiscard]] bool Familiar(std::string_view username, std::string_view address, std::int64_t now_ms);
  // Keys held (for tests of the memory bound).
  [[nodiscard]] std::size_t KeyCount();

 private:
  struct KeyState {
    int failures = 0;
    int in_flight = 0;
    std::int64_t last_failure_ms = 0;
    std::int64_t wait_until_ms = 0;
  };

  Admission Admit(std::vector<std::string> keys, std::string user, std::string address, std::int64_t now_ms);
  void Finish(const Ticket& ticket, bool failed, std::int64_t now_ms);
  [[nodiscard]] bool Forgotten(const KeyState& s, std::int64_t now_ms) const;
  [[nodiscard]] std::int64_t WaitAfter(int failures) const;
  KeyState& Slot(const std::string& key, std::int64_t now_ms) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Settings settings_;
  std::unique_ptr<FamiliarAddresses> own_familiar_;  // when none was given
  FamiliarAddresses& familiar_;
  cronwheel::Mutex mu_;
  std::unordered_map<std::string, KeyState> keys_ ABSL_GUARDED_BY(mu_);
};

// An attempt's place on its keys. Move-only; report the outcome once (Failed or Succeeded, with the instant
// it was known); destroyed without one (an exception while checking), it gives its place back uncounted.
class LoginThrottle::Ticket final {
 public:
  Ticket(Ticket&& other) noexcept;
  Ticket& operator=(Ticket&& other) noexcept;
  Ticket(const Ticket&) = delete;
  Ticket& operator=(const Ticket&) = delete;
  ~Ticket();

  // The password was wrong: a failure on each key.
  void Failed(std::int64_t now_ms);
  // The password was right: the address becomes familiar for the user (a login's ticket). May throw what
  // the familiar-address store throws (the ticket is given back first).
  void Succeeded(std::int64_t now_ms);

 private:
  friend class LoginThrottle;
  Ticket(LoginThrottle* throttle, std::vector<std::string> keys, std::string user, std::string address)
      : throttle_(throttle), keys_(std::move(keys)), user_(std::move(user)), address_(std::move(address)) {}
  void Release(bool failed, bool succeeded, std::int64_t now_ms);

  LoginThrottle* throttle_;  // nullptr once reported or moved from
  std::vector<std::string> keys_;
  std::string user_;  // lower-cased; "" for a Begin(key) ticket
  std::string address_;
};

struct LoginThrottle::Admission {
  std::optional<Ticket> ticket;              // set: go ahead
  std::chrono::milliseconds retry_after{0};  // no ticket: try again after this (>= 1 ms)
};

}  // namespace cronwheel::admin
