#pragma once
// Helpers shared by the admin's HTTP handlers: JSON responses, body and path parsing, and the
// authentication step of every /api/v1 route.
#include <fmt/format.h>
#include <httplib.h>

#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "admin/auth.hpp"
#include "admin/job_repository.hpp"
#include "cronwheel/json.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::admin::api {

using nlohmann::json;

inline void SendJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

inline void SendError(httplib::Response& res, int status, const std::string& message,
                      const FieldErrors& errors = {}) {
  json body{{"error", message}};
  if (!errors.empty()) body["errors"] = ToJson(errors);
  SendJson(res, status, body);
}

// A page of items as {"total": n, "items": [ToJson(item)...]}.
template <class Page>
void SendPage(httplib::Response& res, const Page& page) {
  json items = json::array();
  for (const auto& item : page.items)
    items.push_back(ToJson(item));
  SendJson(res, 200, {{"total", page.total}, {"items", items}});
}

inline void SendEnvelope(httplib::Response& res, const xxljob::Envelope& e) {
  res.status = 200;
  res.set_content(xxljob::ToJson(e).dump(), "application/json;charset=UTF-8");
}

// The request body as JSON (any JSON value; each route checks its shape), or nullopt after answering 400:
// a syntax error, a number beyond a double (1e400) or nesting deeper than cronwheel::kMaxJsonDepth.
inline std::optional<json> ParseBody(const httplib::Request& req, httplib::Response& res, bool allow_empty) {
  if (req.body.empty() && allow_empty) return json::object();
  std::string error;
  auto body = cronwheel::ParseJson(req.body, &error);
  if (!body) SendError(res, 400, error);
  return body;
}

// A path id: decimal digits only, within the column's range.
template <class Int>
std::optional<Int> ParseId(const std::string& text) {
  Int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v <= 0) return std::nullopt;
  return v;
}

// Optional integer query parameter; records an error when present but invalid.
template <class Int>
std::optional<Int> QueryInt(const httplib::Request& req, const char* name, Int min, Int max,
                            FieldErrors& errors) {
  if (!req.has_param(name)) return std::nullopt;
  const auto text = req.get_param_value(name);
  Int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v < min || v > max) {
    errors.push_back(
        {name, fmt::format("'{}' is not valid: an integer from {} to {}", text.substr(0, 40), min, max)});
    return std::nullopt;
  }
  return v;
}

// Authenticates the caller of a REST route; on failure answers 401/403 and returns nullopt.
inline std::optional<Principal> Authenticate(Authenticator& auth, const httplib::Request& req,
                                             httplib::Response& res) {
  auto who = auth.Authenticate(req);
  if (auto* failure = std::get_if<AuthFailure>(&who)) {
    SendError(res, failure->status, failure->message);
    return std::nullopt;
  }
  return std::get<Principal>(std::move(who));
}

// Answers 403 unless the principal is an admin.
inline bool RequireAdmin(const Principal& p, httplib::Response& res) {
  if (p.admin) return true;
  SendError(res, 403, "this needs the ADMIN role");
  return false;
}

}  // namespace cronwheel::admin::api
