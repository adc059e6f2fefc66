#pragma once
// The job document of `cronwheel export` and `cronwheel import` (docs/cli.md, "The job document"): the jobs
// of one executor group as JSON, without what the server owns (ids, the owning group, glue_updated_ms,
// next and last fire, stop reason, creation and update times), so they can be created in another group of
// this admin or of another environment's admin:
//
//   {"format": "cronwheel.jobs", "version": 1,
//    "group": {"app_name": "billing", "title": "Billing"},       <- where it came from; informational
//    "jobs": [{"description": "nightly invoices", "schedule_type": "CRON", ..., "child_jobs": [...]}],
//    "workflows": [{"name": "etl", ..., "nodes": [{"key": "extract", "job": "nightly extract",
//                   "param": null}], "edges": [{"from": "extract", "to": "load", "condition": "SUCCESS"}]}]}
//
// A job's description is its key: unique within a document, and what `import` matches against the jobs of
// the target group. Child jobs are named by description (`child_jobs`), since ids differ between
// environments; only children within the same group can be named. The group's workflows (the key is left
// out when it has none) are keyed by name the same way, and their nodes name their jobs by description
// (`job` instead of the API's `job_id`): only jobs of the document. A reader of version 1 that predates
// workflows ignores the key, as it ignores any other top-level key.
//
// Versions: `version` changes when a reader of the old version would misread a new document (a field
// renamed or given another meaning); a reader refuses a version it does not know and says which it reads.
//
// `import` also reads XXL-JOB's job list as its admin's /jobinfo/pageList answers it: 2.x's
// {"recordsTotal", "recordsFiltered", "data": [XxlJobInfo...]}, 3.3+'s Response {"code": 200, "msg",
// "data": {"data": [XxlJobInfo...], "total"}}, whose jobs have `name` instead of `jobDesc` from 3.5 on, or
// a plain array of XxlJobInfo. ReadDocument maps their fields (docs/cli.md lists the mapping); the fixtures
// in tests/unit/cli/fixtures/ are each version's answer, with the sources they follow.
//
// Pure functions; thread-safe.

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cwcli/job_file.hpp"

namespace cronwheel::cli {

inline constexpr std::string_view kDocumentFormat = "cronwheel.jobs";
inline constexpr int kDocumentVersion = 1;

// The fields of a job in a version-1 document, in the order export writes them ("child_jobs" last).
const std::vector<std::string_view>& PortableJobFields();

struct PortableJob {
  nlohmann::json fields = nlohmann::json::object();  // JobInput fields: PortableJobFields() but child_jobs
  std::vector<std::string> child_jobs;               // descriptions of jobs of the same document
  [[nodiscard]] std::string description() const { return fields.value("description", std::string()); }
};

// The fields of a workflow in a version-1 document, in the order export writes them ("nodes", "edges" last).
const std::vector<std::string_view>& PortableWorkflowFields();

struct PortableWorkflow {
  struct Node {
    std::string key;
    std::string job;                   // the description of a job of the same document
    std::optional<std::string> param;  // nullopt: the job's own parameter
  };
  nlohmann::json fields = nlohmann::json::object();  // PortableWorkflowFields() but nodes and edges
  std::vector<Node> nodes;
  nlohmann::json edges = nlohmann::json::array();  // {"from", "to", "condition"}, as the API has them
  [[nodiscard]] std::string name() const { return fields.value("name", std::string()); }
};

struct JobDocument {
  nlohmann::json group = nlohmann::json::object();  // {"app_name", "title"} of the source, when known
  std::vector<PortableJob> jobs;
  std::vector<PortableWorkflow> workflows;  // none from an XXL-JOB list
  std::string source;  // "cronwheel.jobs version 1", "XXL-JOB 3.3+ /jobinfo/pageList answer", ...
};

// The document of one group. `group` is GET /api/v1/groups/{id}; `jobs` every job of the group as the API
// returns them, in any order. Jobs are sorted by description and fields written in PortableJobFields()
// order, so exports of equal groups are equal byte for byte (diffable, fit for version control).
// A child job outside the group cannot be named: it is left out, with a warning. Problems (nullopt): two
// jobs share a description, so an import could not tell them apart.
std::optional<nlohmann::ordered_json> MakeDocument(const nlohmann::json& group,
                                                   const std::vector<nlohmann::json>& jobs,
                                                   std::vector<std::string>& warnings, Problems& problems);
// The same with the group's workflows (GET /api/v1/workflows' items of that group), sorted by name, under
// "workflows" (left out when there are none). A workflow with a node whose job is not in the group cannot
// be named: the whole workflow is left out, with a warning. Problems: two workflows share a name.
std::optional<nlohmann::ordered_json> MakeDocument(const nlohmann::json& group,
                                                   const std::vector<nlohmann::json>& jobs,
                                                   const std::vector<nlohmann::json>& workflows,
                                                   std::vector<std::string>& warnings, Problems& problems);

struct ReadOptions {
  std::string xxl_time_zone = "UTC";  // time_zone given to the jobs of an XXL-JOB list (it has none)
};

// Reads a document. A cronwheel document: `format` and `version` checked, every job field known and of its
// type, description and schedule_type present, descriptions unique, child_jobs naming jobs of the document;
// every workflow field known and of its type, name and nodes present, names unique, node keys unique and
// their `job` naming a job of the document, edges joining node keys; other top-level keys are ignored
// (room for a comment). An XXL-JOB list: mapped field by field; fields
// without an equivalent are reported as warnings, child job ids outside the list are dropped with a
// warning, and a pageList answer whose total counts more jobs than it holds (one page) is a warning.
// Problems name the place ("jobs[3].timeout_s", "data.data[3].executorTimeout"); any other input is one
// problem that describes what was found and lists the shapes read; so is an XXL-JOB answer with a code
// other than 200 (a refusal).
std::optional<JobDocument> ReadDocument(const nlohmann::json& doc, const ReadOptions& options,
                                        std::vector<std::string>& warnings, Problems& problems);

// What import does when a job of the document has the description of a job of the target group.
enum class OnConflict { kFail, kSkip, kUpdate };

struct ImportStep {
  enum class Action { kCreate, kUpdate, kSkip };
  Action action = Action::kCreate;
  std::size_t job = 0;            // index into JobDocument::jobs
  std::vector<int> existing_ids;  // the target group's jobs with that description (kUpdate: exactly one)
};

// Matches the document's jobs to `target_jobs` (every job of the target group, as the API returns them)
// by description: no match creates; a match fails (kFail), is left alone (kSkip) or is overwritten with
// the document's fields (kUpdate). Problems (nullopt, nothing to do): with kFail, every job that matches;
// with kUpdate, a description two or more jobs of the target group share (which one to update is unknown).
std::optional<std::vector<ImportStep>> PlanImport(const JobDocument& doc,
                                                  const std::vector<nlohmann::json>& target_jobs,
                                                  OnConflict on_conflict, Problems& problems);
// The same for the document's workflows, matched by name to `target_workflows` (the target group's, as
// GET /api/v1/workflows returns them); ImportStep::job is then an index into JobDocument::workflows.
std::optional<std::vector<ImportStep>> PlanWorkflowImport(const JobDocument& doc,
                                                          const std::vector<nlohmann::json>& target_workflows,
                                                          OnConflict on_conflict, Problems& problems);

// The body that creates (`group_id` set) or updates (nullopt) `job`: its fields, without children (they are
// set once every job exists, by id); an update clears the children when the document names none. With
// `stopped` a created job is stopped whatever the document says, and an update leaves `enabled` alone.
nlohmann::json ImportBody(const PortableJob& job, std::optional<int> group_id, bool stopped);

// The body that creates (`group_id` set) or updates (nullopt) `workflow`, its nodes' jobs given by the ids
// `job_ids` has for their descriptions (the target group's jobs once the document's jobs are imported). The
// whole graph is sent, edges too (an empty list clears an updated workflow's). `stopped` as for a job.
// Problems (nullopt): a node's job is missing from `job_ids` or has two or more ids there.
std::optional<nlohmann::json> WorkflowImportBody(const PortableWorkflow& workflow,
                                                 const std::map<std::string, std::vector<int>>& job_ids,
                                                 std::optional<int> group_id, bool stopped,
                                                 Problems& problems);

}  // namespace cronwheel::cli
