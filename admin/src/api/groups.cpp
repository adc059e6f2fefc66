// /api/v1/groups: executor groups. Read: the groups the caller sees; create and delete: admins; change and
// drain: admins and the group's ADMINs (who may change its title and alert channels, not where its fires go
// or how its executors authenticate: docs/operations.md, "Roles").
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "admin/api/json_views.hpp"
#include "admin/api/request_bodies.hpp"
#include "api/routes.hpp"

namespace cronwheel::admin::api {

namespace {

// Asks one of the group's online executors to drain (POST /drain, docs/operations.md "Draining an
// executor"): the address must be one the registry or the group's configuration holds, and the request
// goes to that stored address, never to what the caller typed.
void RegisterDrainRoute(Routes& s, const RouteContext& ctx) {
  auto& catalog = ctx.services.catalog;
  s.Post(
      "/api/v1/groups/{id}/drain",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto g = ctx.VisibleGroup(who, req.matches[1], res);
        if (!g) return;
        const auto body = ParseBody(req, false);
        if (Failed(res, body)) return;
        const auto drain = ReadDrainBody(*body);
        if (Failed(res, drain)) return;
        const auto address = ctx.GroupAddress(*g, drain->address);
        if (!address) {
          const auto online = catalog.Addresses(*g);
          const auto list = online.empty() ? std::string("none") : fmt::format("{}", fmt::join(online, ", "));
          return SendError(res, Error::Invalid("the drain request is not valid",
                                               {{"address",
                                                 fmt::format("'{}' is not an online executor of group {}; "
                                                             "online: {}",
                                                             drain->address.substr(0, 200), g->id, list),
                                                 "not_found",
                                                 {{"online", list}}}}));
        }
        const auto env = ctx.services.console->executors.Drain(*address, ctx.ExecutorToken(g->id));
        if (!env.ok()) {
          return SendError(res, 502,
                           fmt::format("the executor {} did not start a drain: {}", *address,
                                       env.msg.value_or("no message")));
        }
        ctx.Audit(who, "executor.drain", "group", std::to_string(g->id), nullptr,
                  {{"address", *address}, {"msg", env.msg.value_or("")}});
        SendJson(res, 200, {{"address", *address}, {"msg", env.msg.value_or("")}});
      },
      Access::kUser, TokenScope::kAdmin);
}

// The fields of a group only a global ADMIN may change: what decides where its fires go and how its
// executors authenticate. The first that `after` changes, or nullopt.
std::optional<std::string> GlobalAdminField(const JobGroup& before, const JobGroup& after) {
  if (after.app_name != before.app_name) return "app_name";
  if (after.address_type != before.address_type) return "address_type";
  if (after.addresses != before.addresses) return "addresses";
  if (after.access_token != before.access_token) return "access_token";
  if (after.allow_scripts != before.allow_scripts) return "allow_scripts";
  return std::nullopt;
}

}  // namespace

void RegisterGroupRoutes(Routes& s, const RouteContext& ctx) {
  auto& groups = ctx.services.groups;
  auto& catalog = ctx.services.catalog;
  const auto with_online = [&catalog](const JobGroup& g, bool include_token) {
    auto j = ToJson(g, include_token);
    j["online_addresses"] = catalog.Addresses(g);
    return j;
  };

  s.Get("/api/v1/groups", [&, with_online](const Principal& who, const net::Request&, net::Response& res) {
    json items = json::array();
    for (const auto& g : groups.ListGroups()) {
      if (who.SeesGroup(g.id)) items.push_back(with_online(g, false));
    }
    SendJson(res, 200, {{"items", items}});
  });
  s.Post(
      "/api/v1/groups",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto body = ParseBody(req, false);
        if (Failed(res, body)) return;
        const auto read = ReadGroupBody(*body, JobGroup{}, true);
        if (Failed(res, read)) return;
        const auto g = groups.CreateGroup(*read);
        if (Failed(res, g)) return;
        ctx.Audit(who, "group.create", "group", std::to_string(g->id), nullptr, ToJson(*g));
        SendJson(res, 201, ToJson(*g));
      },
      Access::kAdmin);
  s.Get("/api/v1/groups/{id}",
        [&, with_online](const Principal& who, const net::Request& req, net::Response& res) {
          if (const auto g = ctx.VisibleGroup(who, req.matches[1], res))
            SendJson(res, 200, with_online(*g, who.admin));
        });
  s.Put(
      "/api/v1/groups/{id}",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto before = ctx.VisibleGroup(who, req.matches[1], res);
        if (!before) return;
        const auto body = ParseBody(req, false);
        if (Failed(res, body)) return;
        const auto g = groups.UpdateGroup(before->id, [&](JobGroup& group) -> Result<void> {
          auto read = ReadGroupBody(*body, group, false);
          if (!read) return read.error();
          if (const auto field = GlobalAdminField(group, *read); field && !who.admin) {
            return Error{
                .kind = ErrorKind::kForbidden,
                .message = fmt::format("changing a group's {} needs the global ADMIN role: a group's "
                                       "ADMIN may change its title and alert channels",
                                       *field),
                .fields = {{.field = *field,
                            .message = "only a global ADMIN may change this",
                            .code = "role",
                            .params = {{"role", "ADMIN"}}}}};
          }
          group = std::move(*read);
          return {};
        });
        if (Failed(res, g)) return;
        ctx.Audit(who, "group.update", "group", std::to_string(g->id), ToJson(*before), ToJson(*g));
        SendJson(res, 200, ToJson(*g));
      },
      Access::kUser, TokenScope::kAdmin);
  // Asks one of the group's online executors to drain (with the console's services: they hold the
  // executor client).
  if (ctx.services.console != nullptr) RegisterDrainRoute(s, ctx);
  s.Delete(
      "/api/v1/groups/{id}",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto before = ctx.VisibleGroup(who, req.matches[1], res);
        if (!before) return;
        if (Failed(res, groups.DeleteGroup(before->id))) return;
        ctx.Audit(who, "group.delete", "group", std::to_string(before->id), ToJson(*before), nullptr);
        SendJson(res, 200, {{"deleted", before->id}});
      },
      Access::kAdmin);
}

}  // namespace cronwheel::admin::api
