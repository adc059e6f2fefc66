#include "cwcli/api.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include "cronwheel/net/http_address.hpp"
#include "cronwheel/net/http_message.hpp"
#include "cronwheel/text.hpp"

namespace cronwheel::cli {

using nlohmann::json;

std::optional<json> ApiReply::Json() const {
  if (body.empty()) return std::nullopt;
  auto j = json::parse(body, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

std::string DescribeFailure(const Api& api, const std::string& method, const std::string& target,
                            const ApiReply& reply) {
  if (reply.status == 0) {
    return fmt::format("cannot reach the admin at {} ({} {}: {}); check --admin / CRONWHEEL_ADMIN_URL",
                       api.Describe(), method, target, reply.error.empty() ? "no answer" : reply.error);
  }
  const auto body = reply.Json();
  std::string message;
  if (body && body->is_object() && body->contains("error") && body->at("error").is_string()) {
    message = body->at("error").get<std::string>();
  } else {
    message = reply.body.empty() ? "(no body)" : Utf8Truncate(std::string(Trim(reply.body)), 200);
  }
  auto out = fmt::format("{} {} -> HTTP {}: {}", method, target, reply.status, message);
  if (body && body->is_object() && body->contains("errors") && body->at("errors").is_array()) {
    for (const auto& e : body->at("errors")) {
      if (!e.is_object()) continue;
      const auto field = e.value("field", std::string());
      const auto text = e.value("message", std::string());
      out += fmt::format("\n  {}: {}", field.empty() ? "(body)" : field, text);
    }
  }
  return out;
}

json Call(Api& api, const std::string& method, const std::string& target, const std::optional<json>& body) {
  const auto reply = api.Send(method, target, body);
  if (reply.status >= 200 && reply.status < 300) {
    if (reply.body.empty()) return json::object();
    if (auto j = reply.Json()) return *std::move(j);
    throw CommandError(kExitUnavailable,
                       fmt::format("{} {} -> HTTP {} with a body that is not JSON: {}", method, target,
                                   reply.status, Utf8Truncate(reply.body, 200)));
  }
  const int code = reply.status >= 400 && reply.status < 500 ? kExitRefused : kExitUnavailable;
  throw CommandError(code, DescribeFailure(api, method, target, reply));
}

HttpApi::HttpApi(Settings settings) : settings_(std::move(settings)) {
  const auto address = net::ParseHttpAddress(settings_.admin_url);
  if (!address.ok()) {
    throw CommandError(kExitUsage, fmt::format("--admin / CRONWHEEL_ADMIN_URL: {}",
                                               std::string(address.status().message())));
  }
  base_path_ = address->base_path;
  client_ = std::make_unique<httplib::Client>(address->origin);
  if (!client_->is_valid()) {
    throw CommandError(kExitUsage, fmt::format("--admin / CRONWHEEL_ADMIN_URL: '{}' cannot be used: https "
                                               "needs a build with OpenSSL",
                                               settings_.admin_url));
  }
  const auto split = [](std::chrono::milliseconds d) {
    return std::pair{static_cast<time_t>(d.count() / 1000), static_cast<time_t>((d.count() % 1000) * 1000)};
  };
  const auto [cs, cus] = split(settings_.connect_timeout);
  const auto [ts, tus] = split(settings_.timeout);
  client_->set_connection_timeout(cs, cus);
  client_->set_read_timeout(ts, tus);
  client_->set_write_timeout(ts, tus);
  client_->set_tcp_nodelay(true);
  client_->set_keep_alive(true);
  client_->set_url_encode(false);  // targets are encoded by the caller (net::PercentEncode)
  client_->set_follow_location(false);
}

HttpApi::~HttpApi() = default;

ApiReply HttpApi::Send(const std::string& method, const std::string& target,
                       const std::optional<json>& body) {
  httplib::Request req;
  req.method = method;
  req.path = base_path_ + target;
  req.headers = {{"Authorization", "Bearer " + settings_.token},
                 {"Accept", "application/json"},
                 {"User-Agent", "cronwheel-cli"}};
  if (body) {
    req.body = body->dump();
    req.headers.emplace("Content-Type", "application/json");
  }
  ApiReply out;
  const auto res = client_->send(req);
  if (!res) {
    out.error = httplib::to_string(res.error());
    return out;
  }
  out.status = res->status;
  out.body = res->body;
  return out;
}

}  // namespace cronwheel::cli
