// /api/v1/alert-channels: where alarms go (docs/operations.md, "Alert channels"). Anyone signed in lists
// them by name (to attach them to jobs); only admins see a channel's target and template, and create,
// change, delete or test one. A signing secret is never shown.
#include <fmt/format.h>

#include "admin/api/json_views.hpp"
#include "admin/api/request_bodies.hpp"
#include "admin/catalog/alert_channel_service.hpp"
#include "admin/results/alarm.hpp"
#include "api/routes.hpp"

namespace cronwheel::admin::api {

namespace {

// The channel `text` names, or a 404 answered.
std::optional<AlertChannel> FoundChannel(AlertChannelService& channels, const std::string& text,
                                         net::Response& res) {
  const auto id = ParseId(text);
  auto c = id ? channels.Get(static_cast<int>(*id)) : std::nullopt;
  if (!c) SendError(res, Error::NotFound(fmt::format("alert channel '{}' not found", Shorten(text))));
  return c;
}

// What a test alarm says: a made-up fire of a made-up job, marked as a test.
AlarmEvent TestEvent(const AlertChannel& c, std::int64_t now_ms) {
  return AlarmEvent{.log_id = 0,
                    .job_id = 0,
                    .job_description = fmt::format("test of alert channel '{}'", c.name),
                    .app_name = "cronwheel",
                    .trigger_type = "MANUAL",
                    .scheduled_ms = now_ms,
                    .trigger_code = 200,
                    .trigger_msg = "a test alarm, sent from the console or the API",
                    .handle_code = 500,
                    .handle_msg = "no job failed: this is a test",
                    .alarm_email = "",
                    .alarm_webhook = "",
                    .channels = {c}};
}

}  // namespace

void RegisterAlertChannelRoutes(Routes& s, const RouteContext& ctx) {
  if (ctx.services.alert_channels == nullptr) return;
  auto& channels = *ctx.services.alert_channels;
  const auto& allow = ctx.settings.webhook_allow;

  s.Get("/api/v1/alert-channels", [&](const Principal& who, const net::Request&, net::Response& res) {
    json items = json::array();
    for (const auto& c : channels.List())
      items.push_back(ToJson(c, who.admin));
    SendJson(res, 200, {{"items", items}});
  });
  s.Post(
      "/api/v1/alert-channels",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto body = ParseBody(req, false);
        if (Failed(res, body)) return;
        const auto read = ReadAlertChannelBody(*body, AlertChannel{}, true, allow);
        if (Failed(res, read)) return;
        const auto c = channels.Create(*read);
        if (Failed(res, c)) return;
        ctx.Audit(who, "alert_channel.create", "alert_channel", std::to_string(c->id), nullptr,
                  ToJson(*c, true));
        SendJson(res, 201, ToJson(*c, true));
      },
      Access::kAdmin);
  s.Get("/api/v1/alert-channels/{id}",
        [&](const Principal& who, const net::Request& req, net::Response& res) {
          if (const auto c = FoundChannel(channels, req.matches[1], res))
            SendJson(res, 200, ToJson(*c, who.admin));
        });
  s.Put(
      "/api/v1/alert-channels/{id}",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto before = FoundChannel(channels, req.matches[1], res);
        if (!before) return;
        const auto body = ParseBody(req, false);
        if (Failed(res, body)) return;
        const auto c = channels.Update(before->id, [&](AlertChannel& stored) -> Result<void> {
          auto read = ReadAlertChannelBody(*body, stored, false, allow);
          if (!read) return read.error();
          stored = std::move(*read);
          return {};
        });
        if (Failed(res, c)) return;
        ctx.Audit(who, "alert_channel.update", "alert_channel", std::to_string(c->id), ToJson(*before, true),
                  ToJson(*c, true));
        SendJson(res, 200, ToJson(*c, true));
      },
      Access::kAdmin);
  s.Delete(
      "/api/v1/alert-channels/{id}",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto before = FoundChannel(channels, req.matches[1], res);
        if (!before) return;
        if (Failed(res, channels.Delete(before->id))) return;
        ctx.Audit(who, "alert_channel.delete", "alert_channel", std::to_string(before->id),
                  ToJson(*before, true), nullptr);
        SendJson(res, 200, {{"deleted", before->id}});
      },
      Access::kAdmin);
  // The alerts decided, newest first: a USER sees those of its groups' jobs.
  s.Get("/api/v1/alerts", [&](const Principal& who, const net::Request& req, net::Response& res) {
    FieldErrors errors;
    const auto job = QueryInt(req, "job_id", 1, INT32_MAX, errors);
    const auto limit = QueryInt(req, "limit", 1, 1000, errors).value_or(100);
    if (!errors.empty()) return SendError(res, Error::Invalid("invalid query", std::move(errors)));
    json items = json::array();
    for (const auto& a :
         channels.ListAlerts(job ? std::optional<int>(static_cast<int>(*job)) : std::nullopt,
                             who.admin ? std::nullopt : std::optional<std::vector<int>>(who.GroupIds()),
                             static_cast<int>(limit))) {
      items.push_back({{"id", a.id},
                       {"job_id", a.job_id},
                       {"channel_id", a.channel_id},
                       {"channel_name", a.channel_name},
                       {"log_id", a.log_id},
                       {"event", a.event},
                       {"outcome", a.outcome},
                       {"attempts", a.attempts},
                       {"next_attempt_ms", a.next_attempt_ms},
                       {"message", a.message},
                       {"created_ms", a.created_ms},
                       {"updated_ms", a.updated_ms}});
    }
    SendJson(res, 200, {{"items", items}});
  });
  // Sends a test alarm through the channel now and says what happened (the service's refusal included).
  s.Action(
      "/api/v1/alert-channels/{id}/test",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto c = FoundChannel(channels, req.matches[1], res);
        if (!c) return;
        if (ctx.services.alarms == nullptr) {
          return SendError(res, 503, "this admin has no alarm sender");
        }
        const auto outcome = ctx.services.alarms->Send(TestEvent(*c, ctx.clock.NowMs()));
        ctx.Audit(who, "alert_channel.test", "alert_channel", std::to_string(c->id), nullptr,
                  {{"ok", outcome.ok}, {"message", outcome.message}});
        SendJson(res, 200, {{"ok", outcome.ok}, {"message", outcome.message}});
      },
      Access::kAdmin);
}

}  // namespace cronwheel::admin::api
