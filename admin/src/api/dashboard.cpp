// GET /api/v1/dashboard: counts of jobs and fires per day, and executors online, over the groups the
// caller may see.
#include <set>

#include "api/routes.hpp"

namespace cronwheel::admin::api {
namespace {

// Registered addresses of the groups the caller may see (admins: every registration).
std::size_t ExecutorsOnline(const RouteContext& ctx, const Principal& who) {
  std::set<std::string> online;
  const auto registry = ctx.services.catalog.Registry();
  if (who.admin) {
    for (const auto& [app, addresses] : registry)
      online.insert(addresses.begin(), addresses.end());
    return online.size();
  }
  for (const auto& g : ctx.services.groups.ListGroups()) {
    if (!who.SeesGroup(g.id)) continue;
    if (auto it = registry.find(g.app_name); it != registry.end())
      online.insert(it->second.begin(), it->second.end());
  }
  return online.size();
}

}  // namespace

void RegisterDashboardRoutes(Routes& s, const RouteContext& ctx) {
  s.Get("/api/v1/dashboard", [&](const Principal& who, const net::Request& req, net::Response& res) {
    FieldErrors errors;
    const int days = static_cast<int>(QueryInt(req, "days", 1, 90, errors).value_or(7));
    if (!errors.empty()) return SendError(res, Error::Invalid("invalid query", std::move(errors)));
    const auto counts = ctx.services.console->store.Dashboard(
        days, who.admin ? std::nullopt : std::optional<std::vector<int>>(who.GroupIds()));
    json per_day = json::array();
    for (const auto& d : counts.days) {
      per_day.push_back(
          {{"day", d.day}, {"running", d.running}, {"success", d.success}, {"failed", d.failed}});
    }
    SendJson(res, 200,
             {{"totals",
               {{"jobs", counts.jobs},
                {"enabled_jobs", counts.enabled_jobs},
                {"fires_today", counts.fires_today},
                {"executors_online", ExecutorsOnline(ctx, who)}}},
              {"days", per_day}});
  });
}

}  // namespace cronwheel::admin::api
