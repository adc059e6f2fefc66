// /api/v1/calendars: days on which the jobs that keep a calendar do not fire (docs/operations.md, "Calendars
// and windows"). Anyone signed in lists and reads them (to keep them on jobs and preview a schedule); only
// admins create, change or delete one. A body may carry an iCalendar file's text (`ics`) to import.
// POST /api/v1/schedules/preview takes the calendars of its `calendar_ids` from here.
#include <fmt/format.h>
#include <malloc.h>

#include "admin/api/json_views.hpp"
#include "admin/api/request_bodies.hpp"
#include "admin/catalog/calendar_service.hpp"
#include "api/routes.hpp"

namespace cronwheel::admin::api {

namespace {

// Gives the heap a request freed back to the system when the handler returns. A calendar's body may carry a
// megabyte of iCalendar text, parsed into JSON and into libical's tree (model/ics_import.hpp); glibc keeps
// what they freed in the handler thread's arena, and the admin has hundreds of threads, so each import grew
// the process for good (security review 2, N5). Declared first in a handler, it runs after the body is gone.
struct TrimHeapOnReturn {
  TrimHeapOnReturn() = default;
  TrimHeapOnReturn(const TrimHeapOnReturn&) = delete;
  TrimHeapOnReturn& operator=(const TrimHeapOnReturn&) = delete;
  ~TrimHeapOnReturn() { malloc_trim(0); }
};

// The calendar `text` names, or a 404 answered.
std::optional<CalendarListing> FoundCalendar(CalendarService& calendars, const std::string& text,
                                             net::Response& res) {
  const auto id = ParseId(text);
  auto c = id ? calendars.Get(static_cast<int>(*id)) : std::nullopt;
  if (!c) SendError(res, Error::NotFound(fmt::format("calendar '{}' not found", Shorten(text))));
  return c;
}

}  // namespace

void RegisterCalendarRoutes(Routes& s, const RouteContext& ctx) {
  if (ctx.services.calendars == nullptr) return;
  auto& calendars = *ctx.services.calendars;

  s.Get("/api/v1/calendars", [&](const Principal&, const net::Request&, net::Response& res) {
    json items = json::array();
    for (const auto& c : calendars.List())
      items.push_back(ToJson(c.calendar, c.jobs));
    SendJson(res, 200, {{"items", items}});
  });
  s.Post(
      "/api/v1/calendars",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const TrimHeapOnReturn trim;
        const auto body = ParseBody(req, false);
        if (Failed(res, body)) return;
        const auto read = ReadCalendarBody(*body, JobCalendar{}, true, ctx.clock);
        if (Failed(res, read)) return;
        const auto c = calendars.Create(*read);
        if (Failed(res, c)) return;
        ctx.Audit(who, "calendar.create", "calendar", std::to_string(c->id), nullptr, ToJson(*c, 0));
        SendJson(res, 201, ToJson(*c, 0));
      },
      Access::kAdmin);
  s.Get("/api/v1/calendars/{id}", [&](const Principal&, const net::Request& req, net::Response& res) {
    if (const auto c = FoundCalendar(calendars, req.matches[1], res))
      SendJson(res, 200, ToJson(c->calendar, c->jobs));
  });
  s.Put(
      "/api/v1/calendars/{id}",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const TrimHeapOnReturn trim;
        const auto before = FoundCalendar(calendars, req.matches[1], res);
        if (!before) return;
        const auto body = ParseBody(req, false);
        if (Failed(res, body)) return;
        const auto c = calendars.Update(before->calendar.id, [&](JobCalendar& stored) -> Result<void> {
          auto read = ReadCalendarBody(*body, stored, false, ctx.clock);
          if (!read) return read.error();
          stored = std::move(*read);
          return {};
        });
        if (Failed(res, c)) return;
        ctx.Audit(who, "calendar.update", "calendar", std::to_string(c->id),
                  ToJson(before->calendar, before->jobs), ToJson(*c, before->jobs));
        SendJson(res, 200, ToJson(*c, before->jobs));
      },
      Access::kAdmin);
  s.Delete(
      "/api/v1/calendars/{id}",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto before = FoundCalendar(calendars, req.matches[1], res);
        if (!before) return;
        if (Failed(res, calendars.Delete(before->calendar.id))) return;
        ctx.Audit(who, "calendar.delete", "calendar", std::to_string(before->calendar.id),
                  ToJson(before->calendar, before->jobs), nullptr);
        SendJson(res, 200, {{"deleted", before->calendar.id}});
      },
      Access::kAdmin);
}

}  // namespace cronwheel::admin::api
