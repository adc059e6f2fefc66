// The commands about where jobs run and when they may not: `cronwheel groups list`, `executors list|drain`,
// `calendars list|import` (docs/cli.md). The job commands are commands.cpp's.
#include <fmt/format.h>

#include "commands_internal.hpp"
#include "cronwheel/json.hpp"
#include "cronwheel/text.hpp"
#include "cwcli/table.hpp"
#include "cwcli/text_util.hpp"

namespace cronwheel::cli::detail {
namespace {

using nlohmann::json;

std::vector<json> Groups(const Invocation& inv, Api& api) {
  if (inv.group_id) return {Call(api, "GET", fmt::format("/api/v1/groups/{}", *inv.group_id))};
  const auto r = Call(api, "GET", "/api/v1/groups");
  return r.at("items").get<std::vector<json>>();
}

std::vector<std::string> Strings(const json& j, const char* field) {
  std::vector<std::string> out;
  if (const auto it = j.find(field); it != j.end() && it->is_array()) {
    for (const auto& s : *it)
      out.push_back(s.is_string() ? s.get<std::string>() : DumpLossy(s));
  }
  return out;
}

void GroupsList(const Invocation& inv, Api& api, Console& c) {
  const auto groups = Groups(inv, api);
  if (inv.json) return PrintJson(c, {{"items", groups}});
  Table t({"ID", "APP NAME", "TITLE", "TYPE", "ONLINE", "ADDRESSES"});
  t.AlignRight(0).AlignRight(4).LimitWidth(2, 40).LimitWidth(5, 80);
  for (const auto& g : groups) {
    const auto online = Strings(g, "online_addresses");
    std::string addresses;
    for (const auto& a : online)
      addresses += (addresses.empty() ? "" : ", ") + a;
    t.AddRow({Text(g, "id"), Text(g, "app_name"), Text(g, "title"), Text(g, "address_type"),
              std::to_string(online.size()), addresses.empty() ? "-" : addresses});
  }
  c.out << t.Render();
}

void CalendarsList(const Invocation& inv, Api& api, Console& c) {
  const auto r = Call(api, "GET", "/api/v1/calendars");
  if (inv.json) return PrintJson(c, r);
  Table t({"ID", "NAME", "KIND", "ZONE", "DAYS", "FIRST", "LAST", "JOBS"});
  t.AlignRight(0).AlignRight(4).AlignRight(7).LimitWidth(1, 40);
  for (const auto& cal : r.value("items", json::array())) {
    const auto days = cal.value("days", json::array());
    t.AddRow({Text(cal, "id"), Text(cal, "name"), Text(cal, "kind"), Text(cal, "time_zone"),
              std::to_string(days.size()), days.empty() ? "-" : Text(days.front(), "date"),
              days.empty() ? "-" : Text(days.back(), "date"), Text(cal, "jobs")});
  }
  c.out << t.Render();
}

void CalendarsImport(const Invocation& inv, Api& api, Console& c) {
  const auto text = ReadTextFile(inv.file);
  if (!text.ok()) throw CommandError(kExitUsage, std::string(text.status().message()));
  json body{{"ics", *text}};
  if (!inv.name.empty()) body["name"] = inv.name;
  if (inv.calendar_kind) body["kind"] = *inv.calendar_kind;
  if (inv.calendar_zone) body["time_zone"] = *inv.calendar_zone;
  const auto cal = inv.calendar_id
                       ? Call(api, "PUT", fmt::format("/api/v1/calendars/{}", *inv.calendar_id), body)
                       : Call(api, "POST", "/api/v1/calendars", body);
  if (inv.json) return PrintJson(c, cal);
  c.out << fmt::format("{} calendar {} ({}, {}): {} days\n", inv.calendar_id ? "updated" : "created",
                       Text(cal, "id"), Text(cal, "name"), Text(cal, "kind"),
                       cal.value("days", json::array()).size());
}

void ExecutorsList(const Invocation& inv, Api& api, Console& c) {
  const auto groups = Groups(inv, api);
  if (inv.json) return PrintJson(c, {{"items", groups}});
  Table t({"GROUP", "APP NAME", "SOURCE", "ADDRESS"});
  t.AlignRight(0);
  for (const auto& g : groups) {
    // The API's online_addresses: registered by heartbeat (AUTO) or configured (MANUAL).
    const auto source = Text(g, "address_type") == "MANUAL" ? "configured" : "registered";
    const auto online = Strings(g, "online_addresses");
    if (online.empty()) t.AddRow({Text(g, "id"), Text(g, "app_name"), source, "(none)"});
    for (const auto& a : online)
      t.AddRow({Text(g, "id"), Text(g, "app_name"), source, a});
  }
  c.out << t.Render();
}

void ExecutorsDrain(const Invocation& inv, Api& api, Console& c) {
  const auto r = Call(api, "POST", fmt::format("/api/v1/groups/{}/drain", inv.group_id.value_or(0)),
                      json{{"address", inv.address.value_or("")}});
  if (inv.json) return PrintJson(c, r);
  c.out << fmt::format("{}: {}\n", Text(r, "address"), Text(r, "msg"));
}

}  // namespace

void RunGroupCommand(const Invocation& inv, Api& api, Console& c) {
  switch (inv.command) {
    case Command::kGroupsList:
      return GroupsList(inv, api, c);
    case Command::kCalendarsList:
      return CalendarsList(inv, api, c);
    case Command::kCalendarsImport:
      return CalendarsImport(inv, api, c);
    case Command::kExecutorsList:
      return ExecutorsList(inv, api, c);
    case Command::kExecutorsDrain:
      return ExecutorsDrain(inv, api, c);
    default:
      throw CommandError(kExitUsage, "not a group, executor or calendar command");
  }
}

}  // namespace cronwheel::cli::detail
