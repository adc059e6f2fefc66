#pragma once
// Job files: a job written by hand as JSON or TOML, turned into the JSON body of POST /api/v1/jobs and
// PUT /api/v1/jobs/{id} (JobInput in web/openapi.json). TOML is the friendlier form for people (comments,
// multi-line strings for a script's source); both give the same body. docs/cli.md shows an example.
// Workflow files are the same for POST /api/v1/workflows and PUT /api/v1/workflows/{id}: their nodes and
// edges are lists of tables (TOML's [[nodes]], JSON's arrays of objects).
//
// The client checks the type of each field it knows before anything is sent, so a wrong type is reported
// with the field's name and, for TOML, its line; ranges, enums and schedules are the admin's to check (its
// 400 names the field too). A field the client does not know is passed on unchanged for the admin to judge,
// so a newer admin's fields can be used before the client learns them.
//
// Pure functions except ReadJobFile (reads one file); thread-safe.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cronwheel::cli {

// What is wrong with one part of an input: `field` is its path ("timeout_s", "jobs[3].handler"; "" for
// the whole input) and `message` names the value and what would be valid.
struct Problem {
  std::string field;
  std::string message;
};
using Problems = std::vector<Problem>;

// One line per problem, "  <field>: <message>" (or "  <message>" for the whole input).
std::string FormatProblems(const Problems& problems);

enum class FieldType { kString, kInteger, kBoolean, kIntegerList, kStringList, kObjectList };

struct JobField {
  std::string_view name;
  FieldType type;
};

// The fields of a job body the client knows (JobInput of web/openapi.json; a unit test keeps the two
// equal), in the document's order.
const std::vector<JobField>& JobInputFields();
// The field called `name`, or nullptr.
const JobField* FindJobField(std::string_view name);
// The fields of a workflow body the client knows (the writable fields of a workflow: group_id, name, param,
// schedule_type, schedule_conf, time_zone, misfire_strategy, enabled, nodes, edges).
const std::vector<JobField>& WorkflowInputFields();
// The workflow field called `name`, or nullptr.
const JobField* FindWorkflowField(std::string_view name);
// "a string", "an integer", "true or false", "a list of integers", "a list of strings", "a list of tables".
std::string_view Describe(FieldType type);

// Whether `value` has the JSON type of `field`; otherwise adds a problem at `path` ("timeout_s: expected
// an integer, got a string (\"ten\")") and returns false.
bool CheckFieldType(const JobField& field, const nlohmann::json& value, const std::string& path,
                    Problems& problems);

enum class FileFormat { kAuto, kJson, kToml };

// kJson for *.json, kToml for *.toml, else kAuto (the caller asks for --format).
FileFormat FormatFromExtension(const std::filesystem::path& path);

// A job body from the text of a TOML document: a top-level table of fields. A TOML syntax error is one
// problem with its line and column; each field of the wrong type is a problem naming the field and its
// line. nullopt when there is any problem.
std::optional<nlohmann::json> JobFromToml(std::string_view text, Problems& problems);
// The same for a JSON document (an object of fields).
std::optional<nlohmann::json> JobFromJson(std::string_view text, Problems& problems);

// Reads `path` as `format` (kAuto: by extension). Problems: the file cannot be read, the format cannot be
// told from the extension, or the content is not a valid job body.
std::optional<nlohmann::json> ReadJobFile(const std::filesystem::path& path, FileFormat format,
                                          Problems& problems);

// A workflow body from a TOML or JSON document, checked the same way against WorkflowInputFields(): a node
// or an edge that is not a table is a problem naming it ("nodes[1]"); what is inside them is the admin's
// to check (its 400 names the field, "nodes[1].job_id").
std::optional<nlohmann::json> WorkflowFromToml(std::string_view text, Problems& problems);
std::optional<nlohmann::json> WorkflowFromJson(std::string_view text, Problems& problems);
// ReadJobFile for a workflow file.
std::optional<nlohmann::json> ReadWorkflowFile(const std::filesystem::path& path, FileFormat format,
                                               Problems& problems);

}  // namespace cronwheel::cli
