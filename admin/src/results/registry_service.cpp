#include "admin/results/registry_service.hpp"

#include "cronwheel/mutex.hpp"
#include "cronwheel/net/http_address.hpp"
#include "xxljob/token.hpp"

namespace cronwheel::admin {

RegistryService::RegistryService(ringwheel::Clock& clock, RegistryStore& store,
                                 std::chrono::milliseconds dead_after, RegistryGuard guard)
    : clock_(clock), store_(store), dead_after_(dead_after), guard_(std::move(guard)) {}

Result<void> RegistryService::Register(const xxljob::RegistryParam& p) {
  if (auto allowed = guard_.CheckAddress(p.registry_value); !allowed) return allowed.error();
  store_.Upsert({p.registry_group, p.registry_key, net::NormalizeAddress(p.registry_value), p.run_at,
                 p.clock_offset_ms, p.clock_error_ms},
                clock_.NowMs());
  return {};
}

void RegistryService::Remove(const xxljob::RegistryParam& p) {
  store_.Remove({p.registry_group, p.registry_key, net::NormalizeAddress(p.registry_value)});
}

std::size_t RegistryService::ExpireDead() {
  return store_.RemoveNotRenewedSince(clock_.NowMs() - dead_after_.count());
}

std::int64_t RegistryService::ClockMs() const {
  return clock_.NowMs();
}

std::optional<std::string> RegistryService::GroupToken(const std::string& app_name) {
  return store_.GroupToken(app_name);
}

bool RegistryService::KnownToken(std::string_view token, const std::string& global_token) {
  if (xxljob::TokenMatches(token, global_token)) return true;
  const auto matches = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(tokens_mu_) {
    bool any = false;
    for (const auto& t : group_tokens_)
      any = xxljob::TokenMatches(token, t) || any;  // no early exit: the time does not tell which
    return any;
  };
  cronwheel::MutexLock lock(tokens_mu_);
  const auto now = clock_.NowMs();
  const auto age = now - tokens_read_ms_;
  if (age < 1000) {
    if (matches()) return true;
    if (age < 100) return false;
  }
  group_tokens_ = store_.GroupTokens();
  tokens_read_ms_ = now;
  return matches();
}

}  // namespace cronwheel::admin
