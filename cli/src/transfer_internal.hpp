#pragma once
// What transfer.cpp (jobs) and transfer_workflows.cpp (workflows) share of the job document (transfer.hpp).
// Pure functions; thread-safe.

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cwcli/transfer.hpp"

namespace cronwheel::cli::detail {

// `s` quoted and cut to 80 bytes, for problems: 'nightly invoices'.
std::string Quoted(const std::string& s);

// What the things of a document are called in messages: {"jobs", "job", "description"} or {"workflows",
// "workflow", "name"}.
struct Kind {
  std::string_view list;
  std::string_view noun;
  std::string_view key;
};

// The plan of PlanImport for things keyed by `keys` (in document order) against `existing` (key -> the ids
// of the target group's things with it).
std::optional<std::vector<ImportStep>> PlanByKey(const std::vector<std::string>& keys,
                                                 const std::map<std::string, std::vector<int>>& existing,
                                                 OnConflict on_conflict, const Kind& kind,
                                                 Problems& problems);

// The "workflows" of a version-1 document, checked as ReadDocument says; `jobs` are the document's (read and
// checked). Problems name the place ("workflows[1].nodes[0].job"); nullopt when there is any.
std::optional<std::vector<PortableWorkflow>> ReadWorkflows(const nlohmann::json& list,
                                                           const std::vector<PortableJob>& jobs,
                                                           Problems& problems);

// The "workflows" of MakeDocument: `workflows` as the API returns them, nodes' job ids named by
// `description_of` (the group's jobs). See MakeDocument for what is left out and what is a problem.
std::optional<nlohmann::ordered_json> WorkflowItems(const std::map<std::int64_t, std::string>& description_of,
                                                    const std::vector<nlohmann::json>& workflows,
                                                    const nlohmann::json& group,
                                                    std::vector<std::string>& warnings, Problems& problems);

}  // namespace cronwheel::cli::detail
