// POST /api/v1/schedules/preview: the next fires of a schedule in its time zone (the console's live cron
// preview; XXL-JOB's nextTriggerTime, docs/xxl-job-protocol.md §12).
#include "admin/api/request_bodies.hpp"
#include "api/routes.hpp"

namespace cronwheel::admin::api {

void RegisterScheduleRoutes(Routes& s, const RouteContext& ctx) {
  s.Post("/api/v1/schedules/preview", [&](const Principal&, const net::Request& req, net::Response& res) {
    const auto body = ParseBody(req, false);
    if (Failed(res, body)) return;
    const auto preview = ReadPreviewBody(*body);
    if (Failed(res, preview)) return;
    const auto fires = PreviewFires(*preview, ctx.clock.NowMs());
    if (Failed(res, fires)) return;
    SendJson(res, 200, *fires);
  });
}

}  // namespace cronwheel::admin::api
