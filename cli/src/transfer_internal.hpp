#pragma once
// What transfer.cpp (jobs), transfer_xxl.cpp (XXL-JOB's lists) and transfer_workflows.cpp (workflows) share
// of the job document (transfer.hpp). Pure functions; thread-safe.

#include <cstddef>
#include <functional>
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

// Place of a field in the input, for problems: (job index, field name) -> "jobs[3].timeout_s".
using PathOf = std::function<std::string(std::size_t, std::string_view)>;

// Unique descriptions; every child names a job of the document. `child_path(i, k)` names child k of job i.
void CheckKeys(const std::vector<PortableJob>& jobs, const PathOf& path,
               const std::function<std::string(std::size_t, std::size_t)>& child_path, Problems& problems);

// --- XXL-JOB's job lists (transfer_xxl.cpp)
// ------------------------------------------------------------------

// Where an XXL-JOB job list was found and what it is called, for problems and the import's summary.
struct XxlList {
  const nlohmann::json* jobs = nullptr;
  std::string path;    // of the list in the input: "" (the input is the list), "data", "data.data"
  std::string source;  // JobDocument::source
};

// The key of the description in XXL-JOB's jobs: `name` from 3.5 on (its migration renamed job_desc), else
// `jobDesc`. A list is of one version, so one job with `name` decides it.
std::string_view XxlDescriptionKey(const nlohmann::json& list);

// The jobs of an XXL-JOB list as a job document (problems name their place in the input, as ReadDocument's).
std::optional<JobDocument> ReadXxlList(const XxlList& in, const ReadOptions& options,
                                       std::vector<std::string>& warnings, Problems& problems);

// A pageList answer holds one page: says so when its total counts more jobs than it holds.
void WarnIfOnePage(const nlohmann::json& total, std::size_t held, std::string_view total_path,
                   std::string_view size_parameter, std::vector<std::string>& warnings);

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
