#pragma once
// GET /metrics of the admin and the executor: who may read it, and the answer.
//
// Metrics say how busy a scheduler is, which executor groups exist and how many executors each has: not
// for everyone. A request is served when
//   1. its peer address is in `allow` (the setting metrics_allow; default loopback: 127.0.0.1/8, ::1) and
//      its Host header names this server in a way no one else can rebind: an IP literal ("127.0.0.1:8080",
//      "[::1]:9999"), "localhost", or a name in `hosts` (the setting metrics_hosts), compared
//      case-insensitively without the port (issue 21: DNS rebinding. A web page on
//      http://attacker.test:8080/ whose name the attacker then points at 127.0.0.1 makes the visitor's
//      browser a loopback peer, but the Host it sends still names attacker.test), or
//   2. it carries `Authorization: Bearer <token>` with the setting metrics_token (non-empty), compared in
//      constant time by the injected check (xxljob::TokenMatches), or
//   3. the process's own extra check says yes (the admin: a console session or API token of an ADMIN).
// Anything else gets 403 with a message saying which settings allow access (never the allow list itself or
// the token). An empty metrics_token turns the token path off (it never means "any token"). The token and
// the process's own check do not depend on the Host: a browser on a rebound name has neither.
//
// Thread-safety: immutable after construction; Serve may be called from any number of HTTP threads.
// Lifetime: the registry must outlive the endpoint.

#include <absl/status/status.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cronwheel/metrics.hpp"
#include "cronwheel/net/address_allow_list.hpp"
#include "cronwheel/net/http_message.hpp"

namespace cronwheel {

// The default of metrics_allow: loopback only (127.0.0.1/8, ::1).
std::vector<std::string> DefaultMetricsAllow();

class MetricsEndpoint final {
 public:
  struct Settings {
    std::vector<std::string> allow = DefaultMetricsAllow();  // metrics_allow
    std::string token;                                       // metrics_token; "" = no token access
    // metrics_hosts: host names (besides IP literals and localhost) a request allowed by its address may
    // name in its Host header, e.g. the names Prometheus scrapes ("admin-1").
    std::vector<std::string> hosts;
  };
  // Constant-time comparison of a given token with the configured one (xxljob::TokenMatches).
  using TokenCheck = std::function<bool(std::string_view given, std::string_view expected)>;
  // Extra permission of the process (nullptr = none): true to serve the request.
  using ExtraCheck = std::function<bool(const net::Request&)>;

  // Throws std::invalid_argument naming metrics_allow or metrics_hosts and the entry when an entry does
  // not parse (CheckHostNames).
  MetricsEndpoint(const metrics::Registry& registry, Settings settings, TokenCheck token_check,
                  ExtraCheck extra = nullptr);

  // OK when every entry of metrics_hosts is a host name (letters, digits, '-', '.'; no port); otherwise an
  // InvalidArgument status naming the first one that is not: "metrics_hosts: 'a:1' is not valid: use host
  // names without a port, e.g. admin-1,metrics.internal (IP addresses and localhost are always accepted)".
  static absl::Status CheckHostNames(const std::vector<std::string>& hosts);

  enum class Decision {
    kAllowedByAddress,
    kAllowedByToken,
    kAllowedByExtra,
    kForbidden,
    kForbiddenHost,  // the address is allowed, the Host header is not (see above)
  };
  // Decides for a request from `remote_address` with the given Host and Authorization header values ("" =
  // none).
  [[nodiscard]] Decision Check(std::string_view remote_address, std::string_view host,
                               std::string_view authorization) const;
  // Whether a Host header value (host[:port]) is one access by address accepts.
  [[nodiscard]] bool HostAccepted(std::string_view host) const;

  // Answers a GET /metrics: 200 with the exposition (kContentType) or 403 with a plain-text reason.
  void Serve(const net::Request& req, net::Response& res) const;

 private:
  const metrics::Registry& registry_;
  net::AddressAllowList allow_;
  std::vector<std::string> hosts_;  // lower case
  std::string token_;
  TokenCheck token_check_;
  ExtraCheck extra_;
};

}  // namespace cronwheel
