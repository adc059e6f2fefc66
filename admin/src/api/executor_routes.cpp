// What executors call on the admin (docs/xxl-job-protocol.md §3): /api/registry, /api/registryRemove and
// /api/callback, answered with XXL-JOB's envelope (HTTP 200; code 500 and a message for bad input, which
// changes nothing).
#include "admin/api/request_bodies.hpp"
#include "api/routes.hpp"
#include "xxljob/framing.hpp"
#include "xxljob/token.hpp"

namespace cronwheel::admin::api {

void RegisterExecutorRoutes(httplib::Server& server, const RouteContext& ctx, const std::string& prefix) {
  auto& registry = ctx.services.registry;
  auto& callbacks = ctx.services.callbacks;
  const auto& global_token = ctx.settings.access_token;
  // registry and registryRemove: {"registryGroup","registryKey","registryValue"}.
  const auto registration = [&](bool remove) {
    return [&, remove](const httplib::Request& req, httplib::Response& res) {
      std::string error;
      const auto p = xxljob::ParseRegistryParam(req.body, &error);
      if (!p) return SendEnvelope(res, xxljob::Envelope::Fail(error));
      if (const auto ok = CheckRegistration(*p); !ok) {
        return SendEnvelope(res, xxljob::Envelope::Fail(ok.error().message));
      }
      const auto token = req.get_header_value(xxljob::kAccessTokenHeader);
      const auto group_token = registry.GroupToken(p->registry_key);
      if (!xxljob::TokenMatches(token, group_token.value_or(global_token))) {
        return SendEnvelope(res, xxljob::Envelope::Fail(std::string(xxljob::kWrongTokenMsg)));
      }
      if (remove) {
        registry.Remove(*p);
      } else {
        registry.Register(*p);
      }
      SendEnvelope(res, xxljob::Envelope::Success());
    };
  };
  server.Post(prefix + "/api/registry", registration(false));
  server.Post(prefix + "/api/registryRemove", registration(true));
  server.Post(prefix + "/api/callback", [&](const httplib::Request& req, httplib::Response& res) {
    std::string error;
    const auto list = xxljob::ParseCallbackList(req.body, &error);
    if (!list) return SendEnvelope(res, xxljob::Envelope::Fail(error));
    const auto token = req.get_header_value(xxljob::kAccessTokenHeader);
    if (!callbacks.Authorized(*list, token, global_token)) {
      return SendEnvelope(res, xxljob::Envelope::Fail(std::string(xxljob::kWrongTokenMsg)));
    }
    callbacks.Handle(*list);
    SendEnvelope(res, xxljob::Envelope::Success());
  });
  // Anything else under the executor API: XXL-JOB's admin answers a code-500 envelope.
  server.Post(prefix + R"(/api/([^/]+))", [](const httplib::Request& req, httplib::Response& res) {
    SendEnvelope(res, xxljob::Envelope::Fail(xxljob::UriNotFound(req.path)));
  });
}

}  // namespace cronwheel::admin::api
