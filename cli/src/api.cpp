#include "cwcli/api.hpp"

#include <fmt/format.h>

#include "cronwheel/net/http_address.hpp"
#include "cronwheel/net/http_client.hpp"
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
  try {
    client_ =
        std::make_unique<net::HttpClient>(*address, net::HttpClientSettings{
                                                        .connect_timeout = settings_.connect_timeout,
                                                        .timeout = settings_.timeout,
                                                        .default_headers = {{"Accept", "application/json"}},
                                                        .user_agent = "cronwheel-cli",
                                                        .ca_file = settings_.ca_file,
                                                    });
  } catch (const std::invalid_argument& e) {
    throw CommandError(kExitUsage, fmt::format("CRONWHEEL_CA_FILE: {}", e.what()));
  }
}

HttpApi::~HttpApi() = default;

ApiReply HttpApi::Send(const std::string& method, const std::string& target,
                       const std::optional<json>& body) {
  net::ClientRequest req{.method = method,
                         .target = base_path_ + target,
                         .headers = {{"Authorization", "Bearer " + settings_.token}}};
  if (body) {
    req.body = body->dump();
    req.content_type = "application/json";
  }
  ApiReply out;
  const auto res = client_->Send(req);
  if (!res.ok()) {
    out.error = std::string(res.status().message());
    return out;
  }
  out.status = res->status;
  out.body = res->body;
  return out;
}

}  // namespace cronwheel::cli
