#pragma once
// HTTP helpers for the e2e tests that talk to the admin's REST API and to the XXL-JOB protocol endpoints
// the way an outside client would: any method, a raw (already encoded) target, any headers and body; a
// reply that records a transport failure instead of throwing. Plus logging in to the console and reading
// the session cookie.
//
// Thread-safety: an HttpCaller belongs to one thread (it keeps one keep-alive connection).

#include <httplib.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace cwtest {

struct HttpReply {
  int status = 0;  // 0 = no HTTP answer (see error)
  std::string body;
  httplib::Headers headers;
  std::string error;  // the transport error when status is 0

  // The body as JSON; nullopt when it is not JSON.
  [[nodiscard]] std::optional<nlohmann::json> Json() const {
    auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return j;
  }
  [[nodiscard]] std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

class HttpCaller {
 public:
  explicit HttpCaller(int port) : client_("127.0.0.1", port) {
    client_.set_tcp_nodelay(true);
    client_.set_url_encode(false);  // targets are sent exactly as given (tests encode tricks themselves)
    client_.set_connection_timeout(5, 0);
    client_.set_read_timeout(30, 0);
    client_.set_write_timeout(30, 0);
  }

  // `target` is the path and query, sent as is. A Content-Type is added when `content_type` is not empty.
  HttpReply Send(const std::string& method, const std::string& target, const httplib::Headers& headers = {},
                 const std::string& body = "", const std::string& content_type = "application/json") {
    httplib::Request req;
    req.method = method;
    req.path = target;
    req.headers = headers;
    if (!content_type.empty() && !req.has_header("Content-Type"))
      req.headers.emplace("Content-Type", content_type);
    req.body = body;
    HttpReply out;
    auto res = client_.send(req);
    if (!res) {
      out.error = httplib::to_string(res.error());
      return out;
    }
    out.status = res->status;
    out.body = res->body;
    out.headers = res->headers;
    return out;
  }

 private:
  httplib::Client client_;
};

// A console session: the cw_session cookie and the CSRF token login returned.
struct Session {
  std::string cookie;  // "cw_session=<secret>"
  std::string csrf;
  int user_id = 0;
  std::string set_cookie;  // the whole Set-Cookie header of the login answer
};

// Logs in with POST /api/v1/auth/login; nullopt (and the reply in *reply) when that fails.
inline std::optional<Session> Login(HttpCaller& http, const std::string& username,
                                    const std::string& password, HttpReply* reply = nullptr) {
  const auto r = http.Send("POST", "/api/v1/auth/login", {},
                           nlohmann::json{{"username", username}, {"password", password}}.dump());
  if (reply != nullptr) *reply = r;
  const auto body = r.Json();
  if (r.status != 200 || !body || !body->contains("csrf_token")) return std::nullopt;
  Session s;
  s.set_cookie = r.Header("Set-Cookie");
  s.cookie = s.set_cookie.substr(0, s.set_cookie.find(';'));
  s.csrf = body->at("csrf_token").get<std::string>();
  s.user_id = body->at("user").at("id").get<int>();
  return s;
}

inline httplib::Headers SessionHeaders(const Session& s, bool with_csrf = true) {
  httplib::Headers h{{"Cookie", s.cookie}};
  if (with_csrf) h.emplace("X-CSRF-Token", s.csrf);
  return h;
}

inline httplib::Headers BearerHeaders(const std::string& token) {
  return {{"Authorization", "Bearer " + token}};
}

}  // namespace cwtest

// The names the e2e tests that drive a cluster over HTTP share: `using namespace cwtest::e2e;` brings the
// cwtest helpers, nlohmann::json and the chrono literals.
namespace cwtest::e2e {
using namespace cwtest;
using namespace std::chrono_literals;
using nlohmann::json;
}  // namespace cwtest::e2e
