#pragma once
// What commands.cpp and the other *_commands.cpp share: printing, reading the API's JSON, asking before a
// delete. Not thread-safe beyond what commands.hpp says (one Run at a time per Console).

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cwcli/commands.hpp"

namespace cronwheel::cli::detail {

// The API's JSON on one line (--json).
void PrintJson(Console& c, const nlohmann::json& j);

// `j[field]` as text: a string as it is, another value as JSON, "" when missing or null.
std::string Text(const nlohmann::json& j, const char* field);

// "CRON 0 0 3 * * ? (Europe/Berlin)", "FIX_RATE 60", "NONE": a job's or a workflow's schedule.
std::string Schedule(const nlohmann::json& j);

// A usage error saying that deleting `what` needs --yes, when stdin is not a terminal to ask on.
void NeedTerminal(const Console& c, const std::string& what);

// Whether the user answers `question` with "y" or "yes"; prints "not deleted" when not.
bool Confirmed(Console& c, const std::string& question);

// "cronwheel: warning: ..." on stderr, one line each.
void Warn(Console& c, const std::vector<std::string>& warnings);

// The workflows commands (Command::kWorkflows*).
void RunWorkflowCommand(const Invocation& inv, Api& api, ringwheel::Clock& clock, Console& c);

// The path of job `id` in the API ("/api/v1/jobs/7").
std::string JobPath(int id);

// Every item of a paged list ({"total", "items"}), asking for `target` page by page.
std::vector<nlohmann::json> FetchAll(Api& api, const std::string& target);

// The jobs of group `group_id`, every page.
std::vector<nlohmann::json> GroupJobs(Api& api, int group_id);

// `cronwheel groups list`, `executors list|drain`, `calendars list|import` (group_commands.cpp).
void RunGroupCommand(const Invocation& inv, Api& api, Console& c);

// `cronwheel export` and `import` (Command::kExport, kImport; transfer_commands.cpp).
void RunTransferCommand(const Invocation& inv, Api& api, Console& c);

// The logs commands (Command::kLogsTail, kLogsList).
void RunLogsCommand(const Invocation& inv, Api& api, ringwheel::Clock& clock, Console& c);

}  // namespace cronwheel::cli::detail
