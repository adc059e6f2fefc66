#include "cwcli/commands.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <istream>
#include <map>
#include <ostream>
#include <set>

#include "commands_internal.hpp"
#include "cronwheel/json.hpp"
#include "cronwheel/net/http_message.hpp"
#include "cronwheel/text.hpp"
#include "cwcli/login.hpp"
#include "cwcli/table.hpp"
#include "cwcli/text_util.hpp"

namespace cronwheel::cli {

using nlohmann::json;

namespace detail {

void PrintJson(Console& c, const json& j) {
  c.out << DumpLossy(j) << '\n';
}

std::string Text(const json& j, const char* field) {
  const auto it = j.find(field);
  if (it == j.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : DumpLossy(*it);
}

std::string Schedule(const json& job) {
  auto type = Text(job, "schedule_type");
  if (type == "NONE") return type;
  auto out = fmt::format("{} {}", type, Text(job, "schedule_conf"));
  const auto zone = Text(job, "time_zone");
  if (!zone.empty() && zone != "UTC") out += fmt::format(" ({})", zone);
  return out;
}

void NeedTerminal(const Console& c, const std::string& what) {
  if (c.interactive) return;
  throw CommandError(
      kExitUsage,
      fmt::format("refusing to delete {} without --yes: stdin is not a terminal to ask on", what));
}

bool Confirmed(Console& c, const std::string& question) {
  c.err << question << " [y/N] ";
  c.err.flush();
  std::string answer;
  std::getline(c.in, answer);
  if (answer == "y" || answer == "Y" || answer == "yes") return true;
  c.err << "not deleted\n";
  return false;
}

void Warn(Console& c, const std::vector<std::string>& warnings) {
  for (const auto& w : warnings)
    c.err << "cronwheel: warning: " << w << '\n';
}

std::string JobPath(int id) {
  return fmt::format("/api/v1/jobs/{}", id);
}

// Every item of a paged list ({"total", "items"}), asking for `target` page by page.
std::vector<json> FetchAll(Api& api, const std::string& target) {
  constexpr int kPageSize = 1000;  // the API's largest page (GET /api/v1/jobs limit)
  std::vector<json> items;
  const char sep = target.find('?') == std::string::npos ? '?' : '&';
  for (;;) {
    const auto page =
        Call(api, "GET", fmt::format("{}{}limit={}&offset={}", target, sep, kPageSize, items.size()));
    const auto& got = page.at("items");
    for (const auto& item : got)
      items.push_back(item);
    if (got.empty() || items.size() >= page.at("total").get<std::size_t>()) break;
  }
  return items;
}

std::vector<json> GroupJobs(Api& api, int group_id) {
  return FetchAll(api, fmt::format("/api/v1/jobs?group_id={}", group_id));
}

}  // namespace detail

namespace {

using detail::Confirmed;
using detail::FetchAll;
using detail::JobPath;
using detail::NeedTerminal;
using detail::PrintJson;
using detail::Schedule;
using detail::Text;

std::string Handler(const json& job) {
  const auto glue = Text(job, "glue_type");
  return glue == "BEAN" || glue.empty() ? Text(job, "handler") : glue;
}

std::string State(const json& job) {
  return job.value("enabled", false) ? "running" : "stopped";
}

// --- jobs --------------------------------------------------------------------------------------------------

// "team:payments, nightly"; "-" for none.
std::string Tags(const json& job) {
  std::string out;
  for (const auto& t : job.value("tags", json::array())) {
    if (!out.empty()) out += ", ";
    out += t.is_string() ? t.get<std::string>() : t.dump();
  }
  return out.empty() ? "-" : out;
}

void PrintJobTable(Console& c, const std::vector<json>& jobs) {
  Table t({"ID", "GROUP", "DESCRIPTION", "SCHEDULE", "HANDLER", "STATE", "NEXT FIRE (UTC)", "TAGS"});
  t.AlignRight(0).AlignRight(1).LimitWidth(2, 48).LimitWidth(3, 40).LimitWidth(4, 32).LimitWidth(7, 40);
  for (const auto& j : jobs) {
    t.AddRow({Text(j, "id"), Text(j, "group_id"), Text(j, "description"), Schedule(j), Handler(j), State(j),
              FormatUtcMs(j.value("next_fire_ms", std::int64_t{0})), Tags(j)});
  }
  c.out << t.Render();
}

void PrintJob(Console& c, const json& job) {
  static const std::vector<std::string> kServerFields = {"id", "group_id"};
  static const std::vector<std::string> kTrailing = {"glue_updated_ms", "next_fire_ms", "last_fire_ms",
                                                     "stop_reason",     "created_ms",   "updated_ms"};
  std::vector<std::string> order = kServerFields;
  for (const auto& f : JobInputFields()) {
    if (f.name != "group_id") order.emplace_back(f.name);
  }
  order.insert(order.end(), kTrailing.begin(), kTrailing.end());
  for (const auto& [name, _] : job.items()) {
    if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
  }
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& name : order) {
    if (!job.contains(name)) continue;
    const auto& v = job.at(name);
    if (name.ends_with("_ms") && v.is_number_integer()) {
      rows.emplace_back(name, FormatUtcMs(v.get<std::int64_t>()));
    } else {
      rows.emplace_back(name, Text(job, name.c_str()));
    }
  }
  c.out << RenderFields(rows);
}

json JobBodyFromFile(const Invocation& inv) {
  Problems problems;
  auto body = ReadJobFile(inv.file, inv.format, problems);
  if (!body) {
    throw CommandError(kExitRefused,
                       fmt::format("{} is not a valid job:\n{}", inv.file, FormatProblems(problems)));
  }
  return *std::move(body);
}

void JobsList(const Invocation& inv, Api& api, Console& c) {
  std::string query;
  if (inv.group_id) query += fmt::format("&group_id={}", *inv.group_id);
  for (const auto& tag : inv.tags)
    query += "&tag=" + net::PercentEncode(tag);
  if (inv.search) query += "&q=" + net::PercentEncode(*inv.search);
  if (!query.empty()) query[0] = '?';
  const auto jobs = FetchAll(api, "/api/v1/jobs" + query);
  if (inv.json) return PrintJson(c, {{"total", jobs.size()}, {"items", jobs}});
  PrintJobTable(c, jobs);
}

void JobsShow(const Invocation& inv, Api& api, Console& c) {
  const auto job = Call(api, "GET", JobPath(inv.job_id));
  if (inv.json) return PrintJson(c, job);
  PrintJob(c, job);
}

void JobsCreate(const Invocation& inv, Api& api, Console& c) {
  auto body = JobBodyFromFile(inv);
  if (inv.group_id) body["group_id"] = *inv.group_id;
  const auto job = Call(api, "POST", "/api/v1/jobs", body);
  if (inv.json) return PrintJson(c, job);
  c.out << fmt::format("created job {} in group {} ({}): {}\n", Text(job, "id"), Text(job, "group_id"),
                       State(job), Text(job, "description"));
}

void JobsUpdate(const Invocation& inv, Api& api, Console& c) {
  const auto job = Call(api, "PUT", JobPath(inv.job_id), JobBodyFromFile(inv));
  if (inv.json) return PrintJson(c, job);
  c.out << fmt::format("updated job {} ({}): {}\n", Text(job, "id"), State(job), Text(job, "description"));
}

void JobsStartStop(const Invocation& inv, Api& api, Console& c, bool start) {
  // No body at all: the action routes take none (RFC 9112 §6.3).
  const auto job = Call(api, "POST", fmt::format("{}/{}", JobPath(inv.job_id), start ? "start" : "stop"));
  if (inv.json) return PrintJson(c, job);
  if (start) {
    c.out << fmt::format("job {} started; next fire {}\n", inv.job_id,
                         FormatUtcMs(job.value("next_fire_ms", std::int64_t{0})));
  } else {
    c.out << fmt::format("job {} stopped\n", inv.job_id);
  }
}

void JobsTrigger(const Invocation& inv, Api& api, Console& c) {
  std::optional<json> body;
  if (inv.param || inv.address) {
    body = json::object();
    if (inv.param) (*body)["param"] = *inv.param;
    if (inv.address) (*body)["address"] = *inv.address;
  }
  const auto r = Call(api, "POST", fmt::format("{}/trigger", JobPath(inv.job_id)), body);
  if (inv.json) return PrintJson(c, r);
  const auto log_id = Text(r, "log_id");
  c.out << fmt::format("triggered job {}: fire {} (follow it: cronwheel logs tail {} --follow)\n", inv.job_id,
                       log_id, log_id);
}

void JobsRunOnce(const Invocation& inv, Api& api, Console& c) {
  if (!inv.at_ms && !inv.delay_ms) {
    throw CommandError(kExitUsage, "jobs run-once: say when, with --at INSTANT or --in DURATION");
  }
  json body = json::object();
  if (inv.at_ms) body["at_ms"] = *inv.at_ms;
  if (inv.delay_ms) body["delay_ms"] = *inv.delay_ms;
  if (inv.param) body["param"] = *inv.param;
  const auto r = Call(api, "POST", fmt::format("{}/run-once", JobPath(inv.job_id)), body);
  if (inv.json) return PrintJson(c, r);
  const auto id = Text(r, "id");
  c.out << fmt::format(
      "run once {} of job {}: fires at {} (cancel it: cronwheel jobs run-once-cancel {} {})\n", id,
      inv.job_id, FormatUtcMs(r.value("fire_at_ms", std::int64_t{0})), inv.job_id, id);
}

void JobsRunOnceList(const Invocation& inv, Api& api, Console& c) {
  const auto r = Call(api, "GET", fmt::format("{}/run-once?limit={}", JobPath(inv.job_id), inv.limit));
  if (inv.json) return PrintJson(c, r);
  Table t({"ID", "FIRE AT (UTC)", "STATE", "FIRE", "PARAM", "BY"});
  t.AlignRight(0).AlignRight(3).LimitWidth(4, 40);
  for (const auto& o : r.at("items")) {
    const auto param = o.value("param", json());
    t.AddRow({Text(o, "id"), FormatUtcMs(o.value("fire_at_ms", std::int64_t{0})), Text(o, "state"),
              o.value("log_id", json()).is_null() ? "-" : Text(o, "log_id"),
              param.is_string() ? param.get<std::string>() : "(the job's)",
              Text(o, Text(o, "state") == "CANCELLED" ? "cancelled_by" : "created_by")});
  }
  c.out << t.Render();
}

void JobsRunOnceCancel(const Invocation& inv, Api& api, Console& c) {
  const auto r = Call(api, "DELETE", fmt::format("{}/run-once/{}", JobPath(inv.job_id), inv.run_id));
  if (inv.json) return PrintJson(c, r);
  c.out << fmt::format("run once {} of job {} cancelled (it was to fire at {})\n", inv.run_id, inv.job_id,
                       FormatUtcMs(r.value("fire_at_ms", std::int64_t{0})));
}

void JobsDelete(const Invocation& inv, Api& api, Console& c) {
  if (!inv.yes) {
    NeedTerminal(c, fmt::format("job {}", inv.job_id));
    const auto job = Call(api, "GET", JobPath(inv.job_id));
    if (!Confirmed(c, fmt::format("Delete job {} '{}' with its fires and glue versions?", inv.job_id,
                                  Text(job, "description")))) {
      return;
    }
  }
  const auto r = Call(api, "DELETE", JobPath(inv.job_id));
  if (inv.json) return PrintJson(c, r);
  c.out << fmt::format("deleted job {}\n", inv.job_id);
}

void JobsBulk(const Invocation& inv, Api& api, Console& c) {
  const bool tagging = inv.bulk_action == "tag" || inv.bulk_action == "untag";
  if (tagging && inv.tags.empty()) {
    throw CommandError(kExitUsage, fmt::format("jobs bulk {} needs at least one --tag TAG", inv.bulk_action));
  }
  if (!tagging && !inv.tags.empty()) {
    throw CommandError(kExitUsage,
                       fmt::format("--tag is for jobs bulk tag and untag, not {}", inv.bulk_action));
  }
  if (inv.bulk_action == "delete" && !inv.yes) {
    NeedTerminal(c, fmt::format("{} job(s)", inv.job_ids.size()));
    if (!Confirmed(c,
                   fmt::format("Delete {} job(s) with their fires and glue versions?", inv.job_ids.size()))) {
      return;
    }
  }
  std::string action = inv.bulk_action;
  std::transform(action.begin(), action.end(), action.begin(),
                 [](unsigned char ch) { return std::toupper(ch); });
  json body{{"action", action}, {"job_ids", inv.job_ids}};
  if (inv.param) body["param"] = *inv.param;
  if (!inv.tags.empty()) body["tags"] = inv.tags;
  const auto r = Call(api, "POST", "/api/v1/jobs/bulk", body);
  const auto failed = r.value("failed", 0);
  if (inv.json) {
    PrintJson(c, r);
  } else {
    Table t({"JOB", "STATUS", "RESULT"});
    t.AlignRight(0).AlignRight(1).LimitWidth(2, 100);
    for (const auto& item : r.at("results")) {
      const auto status = item.value("status", 0);
      std::string result;
      if (status >= 400) {
        result = Text(item, "error");
        for (const auto& e : item.value("errors", json::array()))
          result += fmt::format("; {}: {}", Text(e, "field"), Text(e, "message"));
      } else if (item.contains("log_id")) {
        result = fmt::format("fire {}", Text(item, "log_id"));
      } else if (item.contains("deleted")) {
        result = "deleted";
      } else if (inv.bulk_action == "tag" || inv.bulk_action == "untag") {
        result = fmt::format("tags: {}", Tags(item.value("job", json::object())));
      } else {
        const auto job = item.value("job", json::object());
        result = job.value("enabled", false) ? "running" : "stopped";
      }
      t.AddRow({Text(item, "job_id"), std::to_string(status), result});
    }
    c.out << t.Render();
    c.err << fmt::format("{}: {} of {} job(s) done, {} failed\n", inv.bulk_action, r.value("succeeded", 0),
                         inv.job_ids.size(), failed);
  }
  if (failed > 0) throw CommandError(kExitRefused, fmt::format("{} job(s) failed", failed));
}

// The job's next fires as the scheduler will walk them: its schedule within its window and calendars.
void JobsNext(const Invocation& inv, Api& api, Console& c) {
  const auto job = Call(api, "GET", JobPath(inv.job_id));
  const json body{{"schedule_type", job.value("schedule_type", "NONE")},
                  {"schedule_conf", job.value("schedule_conf", "")},
                  {"time_zone", job.value("time_zone", "UTC")},
                  {"count", inv.count},
                  {"calendar_ids", job.value("calendar_ids", json::array())},
                  {"start_ms", job.value("start_ms", std::int64_t{0})},
                  {"end_ms", job.value("end_ms", std::int64_t{0})}};
  const auto r = Call(api, "POST", "/api/v1/schedules/preview", body);
  if (inv.json) return PrintJson(c, r);
  const auto fires = r.value("fires", json::array());
  if (fires.empty()) c.out << fmt::format("job {} has no fire to come\n", inv.job_id);
  for (const auto& f : fires)
    c.out << Text(f, "iso") << "\n";
  for (const auto& x : r.value("excluded", json::array())) {
    const auto name = Text(x, "name");
    c.out << fmt::format("skipped {} {}({})\n", Text(x, "date"), name.empty() ? "" : name + " ",
                         Text(x, "calendar"));
  }
}

void Dispatch(const Invocation& inv, Api& api, ringwheel::Clock& clock, Console& c) {
  switch (inv.command) {
    case Command::kJobsList:
      return JobsList(inv, api, c);
    case Command::kJobsShow:
      return JobsShow(inv, api, c);
    case Command::kJobsCreate:
      return JobsCreate(inv, api, c);
    case Command::kJobsUpdate:
      return JobsUpdate(inv, api, c);
    case Command::kJobsStart:
      return JobsStartStop(inv, api, c, true);
    case Command::kJobsStop:
      return JobsStartStop(inv, api, c, false);
    case Command::kJobsTrigger:
      return JobsTrigger(inv, api, c);
    case Command::kJobsRunOnce:
      return JobsRunOnce(inv, api, c);
    case Command::kJobsRunOnceList:
      return JobsRunOnceList(inv, api, c);
    case Command::kJobsRunOnceCancel:
      return JobsRunOnceCancel(inv, api, c);
    case Command::kJobsBulk:
      return JobsBulk(inv, api, c);
    case Command::kJobsDelete:
      return JobsDelete(inv, api, c);
    case Command::kJobsNext:
      return JobsNext(inv, api, c);
    case Command::kGroupsList:
    case Command::kCalendarsList:
    case Command::kCalendarsImport:
    case Command::kExecutorsList:
    case Command::kExecutorsDrain:
      return detail::RunGroupCommand(inv, api, c);
    case Command::kLogsTail:
    case Command::kLogsList:
      return detail::RunLogsCommand(inv, api, clock, c);
    case Command::kExport:
    case Command::kImport:
      return detail::RunTransferCommand(inv, api, c);
    case Command::kLogin:
    case Command::kLogout:
      // They need no API token: Execute runs them (login.hpp).
      throw CommandError(kExitUsage, "login and logout are run by Execute, without an API token");
    case Command::kWorkflowsList:
    case Command::kWorkflowsShow:
    case Command::kWorkflowsCreate:
    case Command::kWorkflowsUpdate:
    case Command::kWorkflowsDelete:
    case Command::kWorkflowsTrigger:
    case Command::kWorkflowsRuns:
    case Command::kWorkflowsRun:
    case Command::kWorkflowsKill:
    case Command::kWorkflowsRerun:
      return detail::RunWorkflowCommand(inv, api, clock, c);
  }
}

std::string ReadToken(const Invocation& inv) {
  if (!inv.token_file.empty()) {
    const auto text = ReadTextFile(inv.token_file);
    if (!text.ok()) {
      throw CommandError(kExitUsage, fmt::format("--token-file: {}", std::string(text.status().message())));
    }
    const auto line = Trim(std::string_view(*text).substr(0, text->find('\n')));
    if (line.empty()) {
      throw CommandError(kExitUsage,
                         fmt::format("--token-file: '{}' has no token on its first line", inv.token_file));
    }
    return std::string(line);
  }
  const auto token = Trim(inv.token);
  if (!token.empty()) return std::string(token);
  // The login `cronwheel login` saved, for the admin it was made on only (its token is never sent elsewhere).
  if (const auto saved = ReadSavedLogin(inv.saved_login)) {
    if (SameAdmin(saved->admin_url, inv.admin_url)) return saved->token;
    throw CommandError(
        kExitUsage,
        fmt::format("no API token for {}: the saved login is for {}; run `cronwheel login --admin "
                    "{}`, set CRONWHEEL_API_TOKEN or pass --token-file FILE",
                    inv.admin_url, saved->admin_url, inv.admin_url));
  }
  throw CommandError(kExitUsage,
                     "no API token: run `cronwheel login`, set CRONWHEEL_API_TOKEN or pass --token-file FILE "
                     "(create a token on the console's \"API tokens\" page or with POST /api/v1/tokens)");
}

}  // namespace

int Run(const Invocation& inv, Api& api, ringwheel::Clock& clock, Console& console) {
  try {
    Dispatch(inv, api, clock, console);
    console.out.flush();
    return kExitOk;
  } catch (const CommandError& e) {
    console.out.flush();
    console.err << "cronwheel: " << e.what() << '\n';
    return e.exit_code();
  } catch (const json::exception& e) {
    // An answer of an unexpected shape (an admin of another version, a proxy's page).
    console.out.flush();
    console.err << "cronwheel: the admin's answer has an unexpected shape: " << WithoutLibraryPrefix(e.what())
                << '\n';
    return kExitUnavailable;
  }
}

int Execute(const Invocation& inv, ringwheel::Clock& clock, Console& console) {
  try {
    if (inv.command == Command::kLogin) return RunLogin(inv, console);
    if (inv.command == Command::kLogout) return RunLogout(inv, console);
    HttpApi api({.admin_url = inv.admin_url,
                 .token = ReadToken(inv),
                 .connect_timeout = std::min<std::chrono::milliseconds>(inv.timeout, std::chrono::seconds(5)),
                 .timeout = inv.timeout,
                 .ca_file = inv.ca_file});
    return Run(inv, api, clock, console);
  } catch (const CommandError& e) {
    console.err << "cronwheel: " << e.what() << '\n';
    return e.exit_code();
  } catch (const json::exception& e) {
    console.err << "cronwheel: the admin's answer has an unexpected shape: " << WithoutLibraryPrefix(e.what())
                << '\n';
    return kExitUnavailable;
  }
}

}  // namespace cronwheel::cli
