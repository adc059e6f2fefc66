#include "cronwheel/metrics_endpoint.hpp"

#include <fmt/format.h>

#include <algorithm>
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

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  return out;
}

// The host of a Host header value: "[::1]:9999" -> "[::1]", "a.b:80" -> "a.b", "a.b" -> "a.b".
std::string_view HostPart(std::string_view value) {
  value = Trim(value);
  if (value.starts_with('[')) {
    const auto close = value.find(']');
    return close == std::string_view::npos ? value : value.substr(0, close + 1);
  }
  if (value.find(':') != value.rfind(':')) return value;  // a bare IPv6 address (not valid HTTP, but no name)
  return value.substr(0, value.find(':'));
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
  auto list = net::AddressAllowList::Parse(settings.allow);
  if (!list.ok()) throw std::invalid_argument("metrics_allow: " + std::string(list.status().message()));
  allow_ = *std::move(list);
  if (const absl::Status hosts = CheckHostNames(settings.hosts); !hosts.ok()) {
    throw std::invalid_argument(std::string(hosts.message()));
  }
  for (const auto& h : settings.hosts) {
    if (!Trim(h).empty()) hosts_.push_back(Lower(Trim(h)));
  }
  if (!token_.empty() && !token_check_) throw std::invalid_argument("MetricsEndpoint: no token check given");
}

absl::Status MetricsEndpoint::CheckHostNames(const std::vector<std::string>& hosts) {
  for (const auto& raw : hosts) {
    const auto h = Trim(raw);
    if (h.empty()) continue;
    const bool name =
        h.size() <= 253 && h.front() != '.' && h.front() != '-' &&
        h.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.") ==
            std::string_view::npos;
    if (!name) {
      return absl::InvalidArgumentError(fmt::format(
          "metrics_hosts: '{}' is not valid: use host names without a port, e.g. admin-1,metrics.internal "
          "(IP addresses and localhost are always accepted)",
          h.substr(0, 100)));
    }
  }
  return absl::OkStatus();
}

bool MetricsEndpoint::HostAccepted(std::string_view host) const {
  const auto h = HostPart(host);
  if (h.empty()) return false;              // HTTP/1.1 requires a Host: without one there is nothing to check
  if (net::ParseIpAddress(h)) return true;  // an IP literal cannot be rebound
  const auto lower = Lower(h);
  return lower == "localhost" || std::find(hosts_.begin(), hosts_.end(), lower) != hosts_.end();
}

MetricsEndpoint::Decision MetricsEndpoint::Check(std::string_view remote_address, std::string_view host,
                                                 std::string_view authorization) const {
  bool host_refused = false;
  if (allow_.Allows(remote_address)) {
    if (HostAccepted(host)) return Decision::kAllowedByAddress;
    host_refused = true;
  }
  if (!token_.empty()) {
    const auto given = BearerToken(authorization);
    // TokenMatches treats an empty expected token as "anything matches": token_ is never empty here.
    if (!given.empty() && token_check_(given, token_)) return Decision::kAllowedByToken;
  }
  return host_refused ? Decision::kForbiddenHost : Decision::kForbidden;
}

void MetricsEndpoint::Serve(const net::Request& req, net::Response& res) const {
  auto decision = Check(req.remote_addr, req.get_header_value("Host"), req.get_header_value("Authorization"));
  const bool forbidden = decision == Decision::kForbidden || decision == Decision::kForbiddenHost;
  if (forbidden && extra_ && extra_(req)) decision = Decision::kAllowedByExtra;
  res.set_header("Cache-Control", "no-store");
  if (decision == Decision::kForbiddenHost) {
    res.status = 403;
    res.set_content(
        fmt::format(
            "403 forbidden: /metrics is readable from this address only with a Host header that is an "
            "IP address, localhost or a name in the setting metrics_hosts (a guard against DNS "
            "rebinding){}; Host '{}' is none of them\n",
            token_.empty() ? "" : ", or with the header 'Authorization: Bearer <metrics_token>'",
            Trim(req.get_header_value("Host")).substr(0, 100)),
        "text/plain; charset=utf-8");
    return;
  }
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
