#include "cwcli/job_file.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>

#include "cronwheel/json.hpp"
#include "cwcli/text_util.hpp"

namespace cronwheel::cli {

using nlohmann::json;

namespace {

// "an integer (10)", "a string (\"ten\")": the JSON type of `v` and the value, for messages.
std::string TypeAndValue(const json& v) {
  if (v.is_string()) return fmt::format("a string ({})", Shown(v, 60));
  if (v.is_boolean()) return fmt::format("a boolean ({})", v.get<bool>() ? "true" : "false");
  if (v.is_number_integer()) return fmt::format("an integer ({})", Shown(v));
  if (v.is_number()) return fmt::format("a fractional number ({})", Shown(v));
  if (v.is_null()) return "null";
  if (v.is_array()) return fmt::format("a list ({})", Shown(v, 60));
  return fmt::format("a table/object ({})", Shown(v, 60));
}

std::string Line(const toml::node& node) {
  const auto& begin = node.source().begin;
  return begin.line > 0 ? fmt::format(" (line {})", begin.line) : std::string();
}

// A TOML value as JSON. Dates and times have no JSON form among a job's fields: a problem.
std::optional<json> TomlToJson(const toml::node& node, const std::string& path, Problems& problems) {
  if (const auto* s = node.as_string()) return json(s->get());
  if (const auto* i = node.as_integer()) return json(i->get());
  if (const auto* f = node.as_floating_point()) return json(f->get());
  if (const auto* b = node.as_boolean()) return json(b->get());
  if (const auto* a = node.as_array()) {
    json out = json::array();
    for (std::size_t k = 0; k < a->size(); ++k) {
      auto v = TomlToJson(*a->get(k), fmt::format("{}[{}]", path, k), problems);
      if (!v) return std::nullopt;
      out.push_back(*std::move(v));
    }
    return out;
  }
  if (const auto* t = node.as_table()) {
    json out = json::object();
    for (const auto& [key, value] : *t) {
      auto v = TomlToJson(value, fmt::format("{}.{}", path, key.str()), problems);
      if (!v) return std::nullopt;
      out[std::string(key.str())] = *std::move(v);
    }
    return out;
  }
  problems.push_back({path, fmt::format("a TOML date or time is not a value a field takes{}; write it "
                                        "as a quoted string if it is meant as text",
                                        Line(node))});
  return std::nullopt;
}

}  // namespace

std::string FormatProblems(const Problems& problems) {
  std::string out;
  for (const auto& p : problems) {
    if (!out.empty()) out += '\n';
    out += p.field.empty() ? fmt::format("  {}", p.message) : fmt::format("  {}: {}", p.field, p.message);
  }
  return out;
}

const std::vector<JobField>& JobInputFields() {
  static const std::vector<JobField> kFields = {
      {"group_id", FieldType::kInteger},
      {"description", FieldType::kString},
      {"author", FieldType::kString},
      {"alarm_email", FieldType::kString},
      {"alarm_webhook", FieldType::kString},
      {"schedule_type", FieldType::kString},
      {"schedule_conf", FieldType::kString},
      {"time_zone", FieldType::kString},
      {"misfire_strategy", FieldType::kString},
      {"route_strategy", FieldType::kString},
      {"handler", FieldType::kString},
      {"param", FieldType::kString},
      {"block_strategy", FieldType::kString},
      {"timeout_s", FieldType::kInteger},
      {"retry_count", FieldType::kInteger},
      {"retry_backoff_s", FieldType::kInteger},
      {"glue_type", FieldType::kString},
      {"glue_source", FieldType::kString},
      {"glue_remark", FieldType::kString},
      {"child_job_ids", FieldType::kIntegerList},
      {"tags", FieldType::kStringList},
      {"alert_channel_ids", FieldType::kIntegerList},
      {"calendar_ids", FieldType::kIntegerList},
      {"start_ms", FieldType::kInteger},
      {"end_ms", FieldType::kInteger},
      {"concurrency_policy", FieldType::kString},
      {"max_concurrent", FieldType::kInteger},
      {"enabled", FieldType::kBoolean},
  };
  return kFields;
}

namespace {

const JobField* FindIn(const std::vector<JobField>& fields, std::string_view name) {
  const auto it =
      std::find_if(fields.begin(), fields.end(), [&](const JobField& f) { return f.name == name; });
  return it == fields.end() ? nullptr : &*it;
}

}  // namespace

const JobField* FindJobField(std::string_view name) {
  return FindIn(JobInputFields(), name);
}

const std::vector<JobField>& WorkflowInputFields() {
  static const std::vector<JobField> kFields = {
      {"group_id", FieldType::kInteger},
      {"name", FieldType::kString},
      {"param", FieldType::kString},
      {"schedule_type", FieldType::kString},
      {"schedule_conf", FieldType::kString},
      {"time_zone", FieldType::kString},
      {"misfire_strategy", FieldType::kString},
      {"enabled", FieldType::kBoolean},
      {"nodes", FieldType::kObjectList},
      {"edges", FieldType::kObjectList},
  };
  return kFields;
}

const JobField* FindWorkflowField(std::string_view name) {
  return FindIn(WorkflowInputFields(), name);
}

std::string_view Describe(FieldType type) {
  switch (type) {
    case FieldType::kString:
      return "a string";
    case FieldType::kInteger:
      return "an integer";
    case FieldType::kBoolean:
      return "true or false";
    case FieldType::kIntegerList:
      return "a list of integers";
    case FieldType::kStringList:
      return "a list of strings";
    case FieldType::kObjectList:
      return "a list of tables";
  }
  return "a value";
}

bool CheckFieldType(const JobField& field, const json& value, const std::string& path, Problems& problems) {
  bool ok = false;
  switch (field.type) {
    case FieldType::kString:
      ok = value.is_string();
      break;
    case FieldType::kInteger:
      ok = value.is_number_integer();
      break;
    case FieldType::kBoolean:
      ok = value.is_boolean();
      break;
    case FieldType::kIntegerList:
      if (value.is_array()) {
        ok = true;
        for (std::size_t i = 0; i < value.size(); ++i) {
          if (!value[i].is_number_integer()) {
            problems.push_back(
                {fmt::format("{}[{}]", path, i),
                 fmt::format("expected an integer (a job id), got {}", TypeAndValue(value[i]))});
            return false;
          }
        }
      }
      break;
    case FieldType::kStringList:
      if (value.is_array()) {
        ok = true;
        for (std::size_t i = 0; i < value.size(); ++i) {
          if (!value[i].is_string()) {
            problems.push_back({fmt::format("{}[{}]", path, i),
                                fmt::format("expected a string, got {}", TypeAndValue(value[i]))});
            return false;
          }
        }
      }
      break;
    case FieldType::kObjectList:
      if (value.is_array()) {
        ok = true;
        for (std::size_t i = 0; i < value.size(); ++i) {
          if (!value[i].is_object()) {
            problems.push_back({fmt::format("{}[{}]", path, i),
                                fmt::format("expected a table, got {}", TypeAndValue(value[i]))});
            return false;
          }
        }
      }
      break;
  }
  if (!ok) {
    problems.push_back({path, fmt::format("expected {}, got {}", Describe(field.type), TypeAndValue(value))});
  }
  return ok;
}

FileFormat FormatFromExtension(const std::filesystem::path& path) {
  auto ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".json") return FileFormat::kJson;
  if (ext == ".toml") return FileFormat::kToml;
  return FileFormat::kAuto;
}

namespace {

using FindField = const JobField* (*)(std::string_view);

std::optional<json> FromToml(std::string_view text, FindField find, Problems& problems) {
  toml::table table;
  try {
    table = toml::parse(text);
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    problems.push_back(
        {"", fmt::format("not valid TOML at line {}, column {}: {}", at.line, at.column, e.description())});
    return std::nullopt;
  }
  json out = json::object();
  const auto before = problems.size();
  for (const auto& [key, node] : table) {
    const std::string name(key.str());
    auto value = TomlToJson(node, name, problems);
    if (!value) continue;
    if (const auto* field = find(name)) {
      Problems found;
      if (!CheckFieldType(*field, *value, name, found)) {
        for (auto& p : found)
          problems.push_back({p.field, p.message + Line(node)});
        continue;
      }
    }
    out[name] = *std::move(value);
  }
  if (problems.size() != before) return std::nullopt;
  return out;
}

std::optional<json> FromJson(std::string_view text, FindField find, std::string_view what,
                             Problems& problems) {
  auto body = ParseJson(text);
  if (!body.ok()) {
    problems.push_back({"", WithoutLibraryPrefix(std::string(body.status().message()))});
    return std::nullopt;
  }
  if (!body->is_object()) {
    problems.push_back({"", fmt::format("{} is a JSON object of fields, got {}", what, TypeAndValue(*body))});
    return std::nullopt;
  }
  const auto before = problems.size();
  for (const auto& [name, value] : body->items()) {
    if (const auto* field = find(name)) CheckFieldType(*field, value, name, problems);
  }
  if (problems.size() != before) return std::nullopt;
  return *std::move(body);
}

std::optional<json> ReadFile(const std::filesystem::path& path, FileFormat format, FindField find,
                             std::string_view what, Problems& problems) {
  if (format == FileFormat::kAuto) format = FormatFromExtension(path);
  if (format == FileFormat::kAuto) {
    problems.push_back(
        {"", fmt::format("cannot tell the format of '{}' from its extension: name it *.json or "
                         "*.toml, or pass --format json|toml",
                         path.string())});
    return std::nullopt;
  }
  const auto text = ReadTextFile(path);
  if (!text.ok()) {
    problems.push_back({"", std::string(text.status().message())});
    return std::nullopt;
  }
  return format == FileFormat::kToml ? FromToml(*text, find, problems)
                                     : FromJson(*text, find, what, problems);
}

}  // namespace

std::optional<json> JobFromToml(std::string_view text, Problems& problems) {
  return FromToml(text, FindJobField, problems);
}

std::optional<json> JobFromJson(std::string_view text, Problems& problems) {
  return FromJson(text, FindJobField, "a job", problems);
}

std::optional<json> ReadJobFile(const std::filesystem::path& path, FileFormat format, Problems& problems) {
  return ReadFile(path, format, FindJobField, "a job", problems);
}

std::optional<json> WorkflowFromToml(std::string_view text, Problems& problems) {
  return FromToml(text, FindWorkflowField, problems);
}

std::optional<json> WorkflowFromJson(std::string_view text, Problems& problems) {
  return FromJson(text, FindWorkflowField, "a workflow", problems);
}

std::optional<json> ReadWorkflowFile(const std::filesystem::path& path, FileFormat format,
                                     Problems& problems) {
  return ReadFile(path, format, FindWorkflowField, "a workflow", problems);
}

}  // namespace cronwheel::cli
