#include "cwcli/options.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "cwcli/api.hpp"
#include "cwcli/login.hpp"
#include "cwcli/text_util.hpp"
#include "options_internal.hpp"

namespace cronwheel::cli {
namespace {

using options_detail::AddFormat;
using options_detail::AddWorkflowCommands;
using options_detail::Selects;

constexpr const char* kFooter =
    R"(Global options, before or after the command: --admin URL, --token-file FILE, --json, --timeout SECONDS
Environment:
  CRONWHEEL_ADMIN_URL   the admin's base URL when --admin is not given (default http://127.0.0.1:8080)
  CRONWHEEL_API_TOKEN   the API token (cwt_...) unless --token-file is given; create one on the
                        console's "API tokens" page, or log in with `cronwheel login` (saved in
                        $XDG_CONFIG_HOME/cronwheel/token, else ~/.config/cronwheel/token)
  CRONWHEEL_CA_FILE     PEM certificates trusted for an https admin besides the system's
Exit codes:
  0 done   1 the admin refused (4xx) or a file is not valid   2 usage error
  3 the admin cannot be reached or failed (5xx)
Details: docs/cli.md
)";

// The innermost subcommand the user named ("cronwheel jobs list"), for messages.
std::string CommandPath(const CLI::App& root) {
  std::string path = root.get_name();
  const CLI::App* app = &root;
  for (;;) {
    const auto subs = app->get_subcommands();
    if (subs.empty()) break;
    app = subs.front();
    path += " " + app->get_name();
  }
  return path;
}

// The deepest subcommand the user named.
const CLI::App* Innermost(const CLI::App& root) {
  const CLI::App* app = &root;
  while (!app->get_subcommands().empty())
    app = app->get_subcommands().front();
  return app;
}

// CLI11 says only "A subcommand is required"; name the word it did not know and the commands there are.
std::string SubcommandError(const CLI::App& root, const std::vector<std::string>& args) {
  const auto* app = Innermost(root);
  std::string names;
  for (const auto* sub : app->get_subcommands({}))
    names += (names.empty() ? "" : ", ") + sub->get_name();
  // The first word that is not an option and not a command already taken.
  std::string unknown;
  std::vector<std::string> taken;
  for (const auto* a = &root; !a->get_subcommands().empty();) {
    a = a->get_subcommands().front();
    taken.push_back(a->get_name());
  }
  std::size_t next = 0;
  for (const auto& arg : args) {
    if (arg.starts_with("-")) continue;
    if (next < taken.size() && arg == taken[next]) {
      ++next;
      continue;
    }
    unknown = arg;
    break;
  }
  const auto path = CommandPath(root);
  if (!unknown.empty()) {
    return fmt::format("'{}' is not a command of '{}'; its commands are: {}", unknown, path, names);
  }
  return fmt::format("'{}' needs a command: {}", path, names);
}

CLI::App* AddJobId(CLI::App* sub, Invocation& inv) {
  sub->add_option("ID", inv.job_id, "the job's id")->type_name("ID")->required()->check(CLI::PositiveNumber);
  return sub;
}

void AddJobCommands(CLI::App& app, Invocation& inv) {
  auto* jobs = app.add_subcommand("jobs", "List, show, create, change, start, stop, trigger and delete jobs");
  jobs->require_subcommand(1);

  auto* list = jobs->add_subcommand("list", "List the jobs of the groups you may see (all pages)");
  list->add_option("--group", inv.group_id, "only the jobs of this executor group (id)")
      ->type_name("ID")
      ->check(CLI::PositiveNumber);
  list->add_option("--tag", inv.tags, "only the jobs with this tag (repeat it: jobs with every tag given)")
      ->type_name("TAG");
  list->add_option("--search", inv.search, "only the jobs whose description, handler or a tag holds TEXT")
      ->type_name("TEXT");
  Selects(list, inv, Command::kJobsList);

  auto* show = AddJobId(jobs->add_subcommand("show", "Show one job, field by field"), inv);
  Selects(show, inv, Command::kJobsShow);

  const auto add_file = [&inv](CLI::App* sub) {
    sub->add_option("FILE", inv.file, "the job as JSON or TOML (docs/cli.md shows the fields)")
        ->type_name("FILE")
        ->required();
    AddFormat(sub, inv);
  };
  auto* create = jobs->add_subcommand("create", "Create a job from a JSON or TOML file");
  add_file(create);
  create->add_option("--group", inv.group_id, "the executor group (id); overrides the file's group_id")
      ->type_name("ID")
      ->check(CLI::PositiveNumber);
  Selects(create, inv, Command::kJobsCreate);

  auto* update = AddJobId(
      jobs->add_subcommand("update", "Change a job: the fields of the file are set, the others kept"), inv);
  add_file(update);
  Selects(update, inv, Command::kJobsUpdate);

  Selects(AddJobId(jobs->add_subcommand("start", "Start a job: its first fire is computed from now"), inv),
          inv, Command::kJobsStart);
  Selects(
      AddJobId(jobs->add_subcommand("stop", "Stop a job; fires written and not yet sent are withdrawn"), inv),
      inv, Command::kJobsStop);

  auto* trigger = AddJobId(
      jobs->add_subcommand("trigger", "Fire a job once now (MANUAL); prints the fire's log id"), inv);
  trigger->add_option("--param", inv.param, "the parameter for this fire (default: the job's own)")
      ->type_name("TEXT");
  trigger
      ->add_option("--address", inv.address,
                   "run it on this executor, one of the group's addresses (see `executors list`)")
      ->type_name("URL");
  Selects(trigger, inv, Command::kJobsTrigger);

  auto* once = AddJobId(jobs->add_subcommand("run-once",
                                             "Fire a job once at an instant or after a delay (durable, "
                                             "cancellable until it fires); prints the request's id"),
                        inv);
  auto* at = once->add_option_function<std::string>(
                     "--at",
                     [&inv](const std::string& text) {
                       const auto ms = ParseInstantMs(text);
                       if (!ms.ok()) throw CLI::ValidationError("--at", std::string(ms.status().message()));
                       inv.at_ms = *ms;
                     },
                     "when, ISO 8601 with an offset: 2026-11-27T18:30:00Z, 2026-11-27T18:30+01:00")
                 ->type_name("INSTANT");
  auto* in = once->add_option_function<std::string>(
                     "--in",
                     [&inv](const std::string& text) {
                       const auto ms = ParseDurationMs(text);
                       if (!ms.ok()) throw CLI::ValidationError("--in", std::string(ms.status().message()));
                       inv.delay_ms = *ms;
                     },
                     "after this delay from now: 90s, 10m, 1h30m, 2d")
                 ->type_name("DURATION");
  at->excludes(in);  // one of them is required: checked when the command runs (CLI11 has no "one of")
  once->add_option("--param", inv.param, "the parameter for this fire (default: the job's own when it fires)")
      ->type_name("TEXT");
  Selects(once, inv, Command::kJobsRunOnce);

  auto* once_list = AddJobId(
      jobs->add_subcommand("run-once-list", "List a job's run-once requests, latest instant first"), inv);
  once_list->add_option("--limit", inv.limit, "at most this many (default 20)")
      ->type_name("N")
      ->check(CLI::Range(1, 1000));
  Selects(once_list, inv, Command::kJobsRunOnceList);

  auto* once_cancel = AddJobId(
      jobs->add_subcommand("run-once-cancel", "Cancel a run-once request that has not been sent yet"), inv);
  once_cancel->add_option("RUN_ID", inv.run_id, "the request's id (`jobs run-once` prints it)")
      ->type_name("RUN_ID")
      ->required()
      ->check(CLI::PositiveNumber);
  Selects(once_cancel, inv, Command::kJobsRunOnceCancel);

  auto* bulk = jobs->add_subcommand("bulk",
                                    "Start, stop, trigger, delete, tag or untag many jobs at once; prints "
                                    "each job's outcome (exit 1 if any "
                                    "failed)");
  bulk->add_option("ACTION", inv.bulk_action, "start, stop, trigger, delete, tag or untag")
      ->type_name("ACTION")
      ->required()
      ->check(CLI::IsMember({"start", "stop", "trigger", "delete", "tag", "untag"}));
  bulk->add_option("ID", inv.job_ids, "the jobs' ids (at most 1000)")
      ->type_name("ID...")
      ->required()
      ->check(CLI::PositiveNumber);
  bulk->add_option("--param", inv.param, "trigger: the parameter for these fires (default: each job's own)")
      ->type_name("TEXT");
  bulk->add_option("--tag", inv.tags, "tag, untag: a tag to add to or remove from each job (repeat it)")
      ->type_name("TAG");
  bulk->add_flag("-y,--yes", inv.yes, "delete: do not ask; required when stdin is not a terminal");
  Selects(bulk, inv, Command::kJobsBulk);

  auto* next =
      AddJobId(jobs->add_subcommand("next",
                                    "Show a job's next fires, within its window and calendars, and the days "
                                    "its calendars skip on the way"),
               inv);
  next->add_option("--count", inv.count, "how many fires (default 5)")
      ->type_name("N")
      ->check(CLI::Range(1, 100));
  Selects(next, inv, Command::kJobsNext);

  auto* del = AddJobId(jobs->add_subcommand("delete", "Delete a job with its fires and glue versions"), inv);
  del->add_flag("-y,--yes", inv.yes, "do not ask; required when stdin is not a terminal");
  Selects(del, inv, Command::kJobsDelete);
}

void AddOtherCommands(CLI::App& app, Invocation& inv) {
  auto* groups = app.add_subcommand("groups", "Executor groups");
  groups->require_subcommand(1);
  Selects(groups->add_subcommand("list", "List the executor groups you may see, with their online addresses"),
          inv, Command::kGroupsList);

  auto* calendars = app.add_subcommand("calendars", "Calendars: days the jobs that keep them do not fire on");
  calendars->require_subcommand(1);
  Selects(
      calendars->add_subcommand("list", "List the calendars, with their days and the jobs that keep them"),
      inv, Command::kCalendarsList);
  auto* cimport = calendars->add_subcommand(
      "import", "Create a calendar from an iCalendar (.ics) file, or add the file's days to one (ADMIN)");
  cimport->add_option("FILE", inv.file, "the .ics file (a holiday feed, a calendar application's export)")
      ->type_name("FILE")
      ->required();
  cimport->add_option("--name", inv.name, "the new calendar's name (default: the file's X-WR-CALNAME)")
      ->type_name("NAME");
  cimport->add_option("--kind", inv.calendar_kind, "BUSINESS_DAYS (weekends off too) or EXCLUDE_DATES")
      ->type_name("KIND")
      ->check(CLI::IsMember({"BUSINESS_DAYS", "EXCLUDE_DATES"}));
  cimport->add_option("--zone", inv.calendar_zone, "the IANA time zone the days are dates of (default UTC)")
      ->type_name("ZONE");
  cimport->add_option("--calendar", inv.calendar_id, "add the file's days to this calendar (id) instead")
      ->type_name("ID")
      ->check(CLI::PositiveNumber);
  Selects(cimport, inv, Command::kCalendarsImport);

  auto* executors = app.add_subcommand("executors", "Executors (the addresses the admin routes fires to)");
  executors->require_subcommand(1);
  auto* elist = executors->add_subcommand(
      "list", "List each group's executor addresses: registered ones (AUTO) or configured ones (MANUAL)");
  elist->add_option("--group", inv.group_id, "only this executor group (id)")
      ->type_name("ID")
      ->check(CLI::PositiveNumber);
  Selects(elist, inv, Command::kExecutorsList);
  auto* drain = executors->add_subcommand(
      "drain",
      "Ask an executor to drain and exit: it takes no new fires, lets its running ones finish (ADMIN)");
  drain->add_option("--group", inv.group_id, "the executor's group (id)")
      ->type_name("ID")
      ->required()
      ->check(CLI::PositiveNumber);
  drain->add_option("ADDRESS", inv.address, "the executor's address, as `executors list` shows it")
      ->type_name("URL")
      ->required();
  Selects(drain, inv, Command::kExecutorsDrain);

  auto* logs = app.add_subcommand("logs", "Fires and their output");
  logs->require_subcommand(1);
  auto* tail = logs->add_subcommand("tail", "Print a fire's output from its executor");
  tail->add_option("LOG_ID", inv.log_id, "the fire's log id (`jobs trigger` prints it)")
      ->type_name("LOG_ID")
      ->required()
      ->check(CLI::PositiveNumber);
  tail->add_flag("-f,--follow", inv.follow, "keep printing new output until the fire has a result");
  tail->add_option("--from-line", inv.from_line, "the first line to print (1-based)")
      ->type_name("N")
      ->check(CLI::Range(1, 1'000'000'000));
  tail->add_option_function<int>(
          "--interval", [&inv](int ms) { inv.poll_interval = std::chrono::milliseconds(ms); },
          "milliseconds between two polls with --follow (default 1000)")
      ->type_name("MS")
      ->check(CLI::Range(50, 60'000));
  Selects(tail, inv, Command::kLogsTail);

  auto* llist = logs->add_subcommand("list", "List a job's fires, newest first");
  llist->add_option("--job", inv.job_id, "the job (id)")
      ->type_name("ID")
      ->required()
      ->check(CLI::PositiveNumber);
  llist->add_option("--status", inv.status, "only fires with this status")
      ->type_name("STATUS")
      ->check(CLI::IsMember({"PENDING", "RUNNING", "SUCCESS", "FAILED", "SKIPPED"}));
  llist->add_option("--limit", inv.limit, "at most this many fires (default 20)")
      ->type_name("N")
      ->check(CLI::Range(1, 1000));
  Selects(llist, inv, Command::kLogsList);

  auto* exp = app.add_subcommand("export", "Write every job of a group as one JSON document, for import");
  exp->footer(
      std::string(
          R"(The document (format cronwheel.jobs, version 1) holds every field a user sets and none the
server owns (ids, the group, times, next fire); child jobs are named by description, jobs
are sorted by description: equal groups export to equal bytes.

)") + kFooter);
  exp->add_option("--group", inv.group_id, "the executor group (id)")
      ->type_name("ID")
      ->required()
      ->check(CLI::PositiveNumber);
  exp->add_option("-o,--output", inv.output, "write to this file instead of stdout")->type_name("FILE");
  Selects(exp, inv, Command::kExport);

  auto* imp =
      app.add_subcommand("import", "Create the jobs of a document (export's, or XXL-JOB's) in a group");
  imp->footer(
      std::string(R"(Matching: a job of the document is matched to the target group's jobs by its description
(descriptions are unique within a document). A match is a conflict: --on-conflict fail
(the default) changes nothing at all, skip leaves the group's job as it is, update
overwrites it with the document's fields. Child jobs are linked by description once every
job exists. An XXL-JOB job list (/jobinfo/pageList's "data", or an array of XxlJobInfo) is
read too: docs/cli.md lists how its fields map.

)") + kFooter);
  imp->add_option("FILE", inv.file, "the document (JSON)")->type_name("FILE")->required();
  imp->add_option("--group", inv.group_id, "the target executor group (id)")
      ->type_name("ID")
      ->required()
      ->check(CLI::PositiveNumber);
  imp->add_flag("--dry-run", inv.dry_run, "print what would be created, updated or skipped; change nothing");
  imp->add_option_function<std::string>(
         "--on-conflict",
         [&inv](const std::string& v) {
           inv.on_conflict = v == "skip"     ? OnConflict::kSkip
                             : v == "update" ? OnConflict::kUpdate
                                             : OnConflict::kFail;
         },
         "fail (the default: change nothing), skip (leave the group's job) or update (overwrite it)")
      ->type_name("WHAT")
      ->check(CLI::IsMember({"fail", "skip", "update"}));
  imp->add_flag("--stopped", inv.stopped,
                "create every job stopped, whatever the document says (updates keep the job's state)");
  imp->add_option("--time-zone", inv.time_zone,
                  "for an XXL-JOB list: the IANA zone its schedules were written in (default UTC)")
      ->type_name("ZONE");
  Selects(imp, inv, Command::kImport);
}

void AddLoginCommands(CLI::App& app, Invocation& inv) {
  auto* login = app.add_subcommand(
      "login",
      "Log in through the admin's console in a browser, and save an API token for the other commands");
  login->add_option("--name", inv.login_name, "the token's name (default cronwheel-cli@<this host>)")
      ->type_name("NAME");
  login
      ->add_option("--scope", inv.login_scope,
                   "what the token may do: read (the default), operate, write or admin (docs/operations.md, "
                   "\"Token scopes\")")
      ->type_name("SCOPE")
      ->check(CLI::IsMember({"read", "operate", "write", "admin"}));
  login->add_option("--days", inv.login_days, "how long the token lasts, 1 to 365 days (default 90)")
      ->type_name("DAYS")
      ->check(CLI::Range(1, 365));
  login->add_flag("--no-browser", inv.no_browser, "only print the address to open, do not open a browser");
  login
      ->add_option_function<int>(
          "--wait", [&inv](int s) { inv.login_wait = std::chrono::seconds(s); },
          "seconds to wait for the approval in the console (default 300)")
      ->type_name("SECONDS")
      ->check(CLI::Range(10, 3600));
  Selects(login, inv, Command::kLogin);
  Selects(app.add_subcommand("logout", "Delete the token `cronwheel login` saved, on the admin and here"),
          inv, Command::kLogout);
}

}  // namespace

namespace options_detail {

// `sub` runs `command` when it is the subcommand chosen.
void Selects(CLI::App* sub, Invocation& inv, Command command) {
  sub->callback([&inv, command] { inv.command = command; });
}

// The --format option of a command that reads a job or workflow file.
void AddFormat(CLI::App* sub, Invocation& inv) {
  sub->add_option_function<std::string>(
         "--format",
         [&inv](const std::string& f) { inv.format = f == "toml" ? FileFormat::kToml : FileFormat::kJson; },
         "json or toml: the file's format when its extension is not .json or .toml")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"json", "toml"}));
}

}  // namespace options_detail

ParseOutcome ParseCommandLine(const std::vector<std::string>& args, const Environment& env) {
  Invocation inv;
  if (const auto it = env.find(kAdminUrlVariable); it != env.end() && !it->second.empty()) {
    inv.admin_url = it->second;
  }
  if (const auto it = env.find(kTokenVariable); it != env.end()) inv.token = it->second;
  if (const auto it = env.find(kCaFileVariable); it != env.end()) inv.ca_file = it->second;
  inv.saved_login = SavedLoginPath(env).string();
  inv.can_open_browser = env.contains("DISPLAY") || env.contains("WAYLAND_DISPLAY");

  CLI::App app{"cronwheel: the command-line client of a cronwheel admin (its REST API, /api/v1)",
               "cronwheel"};
  app.fallthrough();  // global options may follow the command: `cronwheel jobs list --json`
  app.require_subcommand(1);
  app.footer(kFooter);
  app.add_option("--admin", inv.admin_url,
                 "the admin's base URL, e.g. http://127.0.0.1:8080 (else $CRONWHEEL_ADMIN_URL)")
      ->type_name("URL");
  app.add_option("--token-file", inv.token_file,
                 "read the API token from this file's first line (else $CRONWHEEL_API_TOKEN)")
      ->type_name("FILE");
  app.add_flag("--json", inv.json, "print the API's JSON instead of a table");
  app.add_option_function<int>(
         "--timeout", [&inv](int s) { inv.timeout = std::chrono::seconds(s); },
         "seconds to wait for each answer of the admin (default 30)")
      ->type_name("SECONDS")
      ->check(CLI::Range(1, 3600));
  AddJobCommands(app, inv);
  AddOtherCommands(app, inv);
  AddWorkflowCommands(app, inv);
  AddLoginCommands(app, inv);

  ParseOutcome outcome;
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(std::move(reversed));
  } catch (const CLI::CallForHelp&) {
    outcome.out = app.help();
    return outcome;
  } catch (const CLI::CallForAllHelp&) {
    outcome.out = app.help("", CLI::AppFormatMode::All);
    return outcome;
  } catch (const CLI::ParseError& e) {
    const auto path = CommandPath(app);
    const std::string what = e.what();
    outcome.exit_code = kExitUsage;
    outcome.err =
        fmt::format("cronwheel: {}\nRun '{} --help' for the commands and options.\n",
                    what.starts_with("A subcommand is required") ? SubcommandError(app, args) : what, path);
    return outcome;
  }
  outcome.invocation = std::move(inv);
  return outcome;
}

}  // namespace cronwheel::cli
