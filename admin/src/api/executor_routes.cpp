// What executors call on the admin (docs/xxl-job-protocol.md §3): /api/registry, /api/registryRemove and
// /api/callback, answered with XXL-JOB's envelope (HTTP 200; code 500 and a message for bad input, which
// changes nothing). A request whose token is neither the global one nor any group's is refused before its
// body is read; the exact rule (the group's own token where it has one) is checked once the body is parsed.
#include <algorithm>

#include "admin/api/request_bodies.hpp"
#include "api/routes.hpp"
#include "xxljob/framing.hpp"
#include "xxljob/token.hpp"

namespace cronwheel::admin::api {

void RegisterExecutorRoutes(net::HttpServer& server, const RouteContext& ctx, const std::string& prefix) {
  auto& registry = ctx.services.registry;
  auto& callbacks = ctx.services.callbacks;
  const auto& global_token = ctx.settings.access_token;
  // Counts what executors send (nullptr in tests without metrics).
  const ExecutorApiMetrics* const m = ctx.services.executor_api_metrics;
  const auto count_registration = [m](bool remove, const char* result) {
    if (m != nullptr) m->registrations.Labels({remove ? "remove" : "registry", result}).Inc();
  };
  // registry and registryRemove: {"registryGroup","registryKey","registryValue"}.
  // Before the body: a caller without any executor token gets no byte of its body read, let alone parsed.
  // `refused` counts a refusal.
  const auto admitted_by_token = [&registry, &global_token](const std::function<void()>& refused) {
    return net::HttpServer::RouteOptions{
        .admit = [&registry, &global_token, refused](net::Request& req, net::Response& res) {
          if (registry.KnownToken(req.get_header_value(xxljob::kAccessTokenHeader), global_token)) {
            req.authenticated = true;  // an executor: its connection is not one a flood can crowd out
            return true;
          }
          refused();
          SendEnvelope(res, xxljob::Envelope::Fail(std::string(xxljob::kWrongTokenMsg)));
          return false;
        }};
  };
  const auto registration = [&](bool remove) {
    return [&, remove, count_registration](const net::Request& req, net::Response& res) {
      const auto p = xxljob::ParseRegistryParam(req.body);
      if (!p.ok()) {
        count_registration(remove, "invalid");
        return SendEnvelope(res, xxljob::Envelope::Fail(p.status()));
      }
      if (const auto ok = CheckRegistration(*p); !ok) {
        count_registration(remove, "invalid");
        return SendEnvelope(res, xxljob::Envelope::Fail(ok.error().message));
      }
      const auto token = req.get_header_value(xxljob::kAccessTokenHeader);
      const auto group_token = registry.GroupToken(p->registry_key);
      if (!xxljob::TokenMatches(token, group_token.value_or(global_token))) {
        count_registration(remove, "refused");
        return SendEnvelope(res, xxljob::Envelope::Fail(std::string(xxljob::kWrongTokenMsg)));
      }
      if (remove) {
        registry.Remove(*p);
      } else if (auto stored = registry.Register(*p); !stored) {
        // An address the registration guard refuses (issue 21): the executor learns why, nothing is stored.
        count_registration(remove, "refused");
        return SendEnvelope(res, xxljob::Envelope::Fail(stored.error().message));
      }
      count_registration(remove, "ok");
      auto ok = xxljob::Envelope::Success();
      // A cronwheel-executor measures its clock offset against this (XXL-JOB's get no content, as before).
      if (!remove && p->run_at)
        ok.content = nlohmann::json{{xxljob::kRegistryClockField, registry.ClockMs()}};
      SendEnvelope(res, ok);
    };
  };
  server.Post(prefix + "/api/registry", registration(false),
              admitted_by_token([=] { count_registration(false, "refused"); }));
  server.Post(prefix + "/api/registryRemove", registration(true),
              admitted_by_token([=] { count_registration(true, "refused"); }));
  server.Post(
      prefix + "/api/callback",
      [&, m](const net::Request& req, net::Response& res) {
        const auto list = xxljob::ParseCallbackList(req.body);
        if (!list.ok()) {
          if (m != nullptr) m->callbacks_invalid.Inc();
          return SendEnvelope(res, xxljob::Envelope::Fail(list.status()));
        }
        const auto token = req.get_header_value(xxljob::kAccessTokenHeader);
        if (!callbacks.Authorized(*list, token, global_token)) {
          if (m != nullptr) m->callbacks_refused.Inc(list->size());
          return SendEnvelope(res, xxljob::Envelope::Fail(std::string(xxljob::kWrongTokenMsg)));
        }
        const auto outcome = callbacks.Handle(*list);
        if (m != nullptr) {
          m->callbacks_recorded.Inc(static_cast<std::uint64_t>(outcome.recorded));
          m->callbacks_ignored.Inc(static_cast<std::uint64_t>(outcome.ignored));
          for (const auto lag_ms : outcome.start_lags_ms)
            m->fire_start_lag.Observe(static_cast<double>(std::max<std::int64_t>(lag_ms, 0)) / 1000.0);
          m->outputs_pushed_archived.Inc(static_cast<std::uint64_t>(outcome.logs_archived));
          m->outputs_pushed_truncated.Inc(static_cast<std::uint64_t>(outcome.logs_truncated));
        }
        SendEnvelope(res, xxljob::Envelope::Success());
      },
      admitted_by_token([m] {
        if (m != nullptr)
          m->callbacks_refused.Inc();  // a request refused unread: its callbacks are not known
      }));
  // Anything else under the executor API: XXL-JOB's admin answers a code-500 envelope.
  server.Post(prefix + R"(/api/([^/]+))", [](const net::Request& req, net::Response& res) {
    SendEnvelope(res, xxljob::Envelope::Fail(xxljob::UriNotFound(req.path)));
  });
}

}  // namespace cronwheel::admin::api
