#include "admin_client.hpp"

#include <fmt/format.h>
#include <httplib.h>

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
    admin->client = std::make_unique<httplib::Client>(admin->parsed.origin);
    auto& c = *admin->client;
    c.set_keep_alive(true);
    c.set_tcp_nodelay(true);
    c.set_connection_timeout(settings_.timeout);
    c.set_read_timeout(settings_.timeout);
    c.set_write_timeout(settings_.timeout);
    httplib::Headers headers;
    if (!settings_.access_token.empty()) headers.emplace(xxljob::kAccessTokenHeader, settings_.access_token);
    if (!settings_.app_name.empty()) headers.emplace(xxljob::kAppNameHeader, settings_.app_name);
    c.set_default_headers(std::move(headers));
    admins_.push_back(std::move(admin));
  }
}

HttpAdminClient::~HttpAdminClient() = default;

AdminReply HttpAdminClient::Call(std::string_view api, const nlohmann::json& body) {
  const std::string text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  AdminReply reply;
  if (admins_.empty()) {
    reply.detail = "no admin address is configured";
    return reply;
  }
  for (const auto& admin : admins_) {
    const std::string path = admin->parsed.Path("api/" + std::string(api));
    std::string why;
    {
      std::lock_guard lock(admin->mu);
      // A kept connection the admin closes as the request goes out (its idle timeout, 2 s for cronwheel's
      // admin, ending just then) fails the request before any answer, unprocessed: it is sent once more on
      // a new connection, as RFC 9112 §9.3.1 allows and browsers do. A fresh connection's failure is the
      // admin's. A read timeout on a reused connection is retried too (httplib reports both as Read); the
      // admin may then get the call twice, which it takes as it takes the spool's retries (a heartbeat
      // repeats, a callback of a fire already recorded changes nothing).
      const bool reused = admin->client->is_socket_open() != 0;
      auto res = admin->client->Post(path, text, "application/json;charset=UTF-8");
      if (!res && reused && (res.error() == httplib::Error::Write || res.error() == httplib::Error::Read)) {
        res = admin->client->Post(path, text, "application/json;charset=UTF-8");
      }
      if (!res) {
        why = fmt::format("remoting error ({})", httplib::to_string(res.error()));
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
