#pragma once
// The executor's side of the admin API (docs/xxl-job-protocol.md §3): POST
// <admin>/api/<registry|registryRemove|callback> with the access token header, trying each configured admin
// in order and stopping at the first answer with code 200 (XXL-JOB's rule for both heartbeats and callbacks).
//
// HttpAdminClient keeps one keep-alive HTTP connection per admin (cronwheel/net/http_client.hpp: TCP_NODELAY,
// https verified, connect and read timeouts, default 3 s as XXL-JOB's), and respects the admin's base path:
// "http://host:8080/xxl-job-admin" posts to /xxl-job-admin/api/callback, "http://host:8080" to
// /api/callback. Any transport error, HTTP status other than 200, unparsable body or code other than 200
// counts as that admin failing (§1). A request that fails on a reused connection before any answer (the
// admin closed it as the request went out) is sent once more on a new connection first; the admin may then
// get the call twice, which it takes as it takes the spool's retries (a heartbeat repeats, a callback of a
// fire already recorded changes nothing).
//
// Thread-safety: Call() may be used from several threads at once (each admin's connection has a mutex).

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cronwheel/mutex.hpp"
#include "cronwheel/net/http_address.hpp"
#include "cronwheel/net/http_client.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::executor {

struct AdminReply {
  bool ok = false;
  std::string detail;      // the admin that accepted, or why each failed
  nlohmann::json content;  // the accepting admin's envelope content (null when none)
  bool too_large = false;  // an admin refused the body as larger than it takes (HTTP 413)
};

class AdminClient {
 public:
  virtual ~AdminClient() = default;
  // `api` is "registry", "registryRemove" or "callback".
  virtual AdminReply Call(std::string_view api, const nlohmann::json& body) = 0;
  // False when no admin is configured: registration and callbacks are off (XXL-JOB).
  [[nodiscard]] virtual bool HasAdmins() const = 0;

 protected:
  AdminClient() = default;
  AdminClient(const AdminClient&) = default;
  AdminClient& operator=(const AdminClient&) = default;
};

class HttpAdminClient final : public AdminClient {
 public:
  struct Settings {
    std::vector<std::string> addresses;       // admin base URLs, in the order tried
    std::string access_token;                 // sent as XXL-JOB-ACCESS-TOKEN when non-empty
    std::string app_name;                     // sent as XXL-JOB-APPNAME (dialect C wants it)
    std::chrono::milliseconds timeout{3000};  // connect and read, each
  };
  // Throws std::invalid_argument naming an address that does not parse.
  explicit HttpAdminClient(Settings settings);
  ~HttpAdminClient() override;
  HttpAdminClient(const HttpAdminClient&) = delete;
  HttpAdminClient& operator=(const HttpAdminClient&) = delete;

  AdminReply Call(std::string_view api, const nlohmann::json& body) override;
  [[nodiscard]] bool HasAdmins() const override { return !admins_.empty(); }

 private:
  struct Admin {
    std::string address;
    cronwheel::net::HttpAddress parsed;
    Mutex mu;  // one call at a time on the kept connection
    std::unique_ptr<cronwheel::net::HttpClient> client ABSL_GUARDED_BY(mu);
  };
  Settings settings_;
  std::vector<std::unique_ptr<Admin>> admins_;
};

}  // namespace cronwheel::executor
