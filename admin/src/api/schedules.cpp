// POST /api/v1/schedules/preview: the next fires of a schedule in its time zone (the console's live cron
// preview; XXL-JOB's nextTriggerTime, docs/xxl-job-protocol.md §12).
#include <fmt/format.h>

#include "admin/api/request_bodies.hpp"
#include "api/routes.hpp"

namespace cronwheel::admin::api {

void RegisterScheduleRoutes(Routes& s, const RouteContext& ctx) {
  s.Post(
      "/api/v1/schedules/preview",
      [&](const Principal&, const net::Request& req, net::Response& res) {
        const auto body = ParseBody(req, false);
        if (Failed(res, body)) return;
        const auto preview = ReadPreviewBody(*body);
        if (Failed(res, preview)) return;
        // The calendars it names, each as a job would keep it; one that does not exist is named.
        std::vector<JobCalendar> calendars;
        FieldErrors missing;
        for (const int id : preview->calendar_ids) {
          auto c = ctx.services.calendars != nullptr ? ctx.services.calendars->Get(id) : std::nullopt;
          if (!c) {
            missing.push_back(
                {"calendar_ids", fmt::format("calendar {} not found", id), "not_found", {{"id", id}}});
          } else {
            calendars.push_back(std::move(c->calendar));
          }
        }
        if (!missing.empty())
          return SendError(res, Error::Invalid("the preview request is not valid", std::move(missing)));
        const auto fires = PreviewFires(*preview, ctx.clock.NowMs(), calendars);
        if (Failed(res, fires)) return;
        SendJson(res, 200, *fires);
      },
      Access::kUser, TokenScope::kRead);
}

}  // namespace cronwheel::admin::api
