#include "admin_client.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "cronwheel/net/http_address.hpp"

namespace cronwheel::executor {

HttpAdminClient::HttpAdminClient(Settings settings) : settings_(std::move(settings)) {
  for (const auto& address : settings_.addresses) {
    auto parsed = cronwheel::net::ParseHttpAddress(address);
    if (!parsed.ok())
      throw std::invalid_argument("admin_addresses: " + std::string(parsed.status().message()));
    auto admin = std::make_unique<Admin>();
    admin->address = address;
    admin->parsed = *std::move(parsed);
    cronwheel::net::HttpClientSettings client{.connect_timeout = settings_.timeout,
                                              .timeout = settings_.timeout,
                                              .user_agent = "cronwheel-executor"};
    if (!settings_.access_token.empty())
      client.default_headers.emplace_back(xxljob::kAccessTokenHeader, settings_.access_token);
    if (!settings_.app_name.empty())
      client.default_headers.emplace_back(xxljob::kAppNameHeader, settings_.app_name);
    MutexLock lock(admin->mu);  // not shared yet; the lock keeps the analysis whole
    admin->client = std::make_unique<cronwheel::net::HttpClient>(admin->parsed, std::move(client));
    admins_.push_back(std::move(admin));
  }
}

HttpAdminClient::~HttpAdminClient() = default;

AdminReply HttpAdminClient::Call(std::string_view api, const nlohmann::json& body) {
  cronwheel::net::ClientRequest request{
      .method = "POST",
      .body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
      .content_type = "application/json;charset=UTF-8"};
  AdminReply reply;
  if (admins_.empty()) {
    reply.detail = "no admin address is configured";
    return reply;
  }
  for (const auto& admin : admins_) {
    request.target = admin->parsed.Path("api/" + std::string(api));
    const auto& path = request.target;
    std::string why;
    {
      // One call at a time on the admin's kept connection; a kept connection the admin closed as the
      // request went out is retried on a new one by the client (see the header).
      MutexLock lock(admin->mu);
      const auto res = admin->client->Send(request);
      if (!res.ok()) {
        why = fmt::format("remoting error ({})", std::string(res.status().message()));
      } else if (res->status != 200) {
        why = fmt::format("HTTP status {}", res->status);
        if (res->status == 413) reply.too_large = true;
      } else {
        const auto envelope = xxljob::ParseEnvelope(res->body);
        if (!envelope.ok()) {
          why = fmt::format("response content invalid ({})", std::string(envelope.status().message()));
        } else if (!envelope->ok()) {
          why = fmt::format("code {}: {}", envelope->code, envelope->msg.value_or(""));
        } else {
          reply.ok = true;
          reply.detail = admin->address;
          reply.content = envelope->content;
          return reply;
        }
      }
    }
    if (!reply.detail.empty()) reply.detail += "; ";
    reply.detail += fmt::format("{}{}: {}", admin->parsed.origin, path, why);
  }
  return reply;
}

}  // namespace cronwheel::executor
