#include "cronwheel/metrics_endpoint.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "cronwheel/text.hpp"

namespace cronwheel {
namespace {

// The credentials of "Bearer <token>" (scheme case-insensitive, RFC 9110 §11.1); "" when it is not one.
std::string_view BearerToken(std::string_view header) {
  header = Trim(header);
  constexpr std::string_view kScheme = "bearer ";
  if (header.size() <= kScheme.size()) return {};
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    const char c = header[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != kScheme[i]) return {};
  }
  return Trim(header.substr(kScheme.size()));
}

}  // namespace

std::vector<std::string> DefaultMetricsAllow() {
  return {"127.0.0.1/8", "::1"};
}

MetricsEndpoint::MetricsEndpoint(const metrics::Registry& registry, Settings settings, TokenCheck token_check,
                                 ExtraCheck extra)
    : registry_(registry),
      token_(std::move(settings.token)),
      token_check_(std::move(token_check)),
      extra_(std::move(extra)) {
  std::string error;
  auto list = net::AddressAllowList::Parse(settings.allow, &error);
  if (!list) throw std::invalid_argument("metrics_allow: " + error);
  allow_ = std::move(*list);
  if (!token_.empty() && !token_check_) throw std::invalid_argument("MetricsEndpoint: no token check given");
}

MetricsEndpoint::Decision MetricsEndpoint::Check(std::string_view remote_address,
                                                 std::string_view authorization) const {
  if (allow_.Allows(remote_address)) return Decision::kAllowedByAddress;
  if (!token_.empty()) {
    const auto given = BearerToken(authorization);
    // TokenMatches treats an empty expected token as "anything matches": token_ is never empty here.
    if (!given.empty() && token_check_(given, token_)) return Decision::kAllowedByToken;
  }
  return Decision::kForbidden;
}

void MetricsEndpoint::Serve(const net::Request& req, net::Response& res) const {
  auto decision = Check(req.remote_addr, req.get_header_value("Authorization"));
  if (decision == Decision::kForbidden && extra_ && extra_(req)) decision = Decision::kAllowedByExtra;
  res.set_header("Cache-Control", "no-store");
  if (decision == Decision::kForbidden) {
    res.status = 403;
    res.set_content(
        fmt::format(
            "403 forbidden: /metrics is readable from the addresses in the setting metrics_allow{}{}; "
            "{} is not among them\n",
            token_.empty() ? "" : ", or with the header 'Authorization: Bearer <metrics_token>'",
            extra_ ? ", or by a signed-in console administrator" : "", req.remote_addr.substr(0, 64)),
        "text/plain; charset=utf-8");
    return;
  }
  res.status = 200;
  res.set_content(registry_.Render(), std::string(metrics::kContentType));
}

}  // namespace cronwheel
