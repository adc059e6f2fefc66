#include "cwcli/transfer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "cronwheel/json.hpp"
#include "cronwheel/text.hpp"
#include "transfer_internal.hpp"

namespace cronwheel::cli {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

constexpr std::string_view kChildJobs = "child_jobs";

using detail::CheckKeys;
using detail::PathOf;
using detail::Quoted;
using detail::ReadXxlList;
using detail::WarnIfOnePage;
using detail::XxlDescriptionKey;

std::string JoinIds(const std::vector<int>& ids) {
  std::string out;
  for (const int id : ids)
    out += (out.empty() ? "" : ", ") + std::to_string(id);
  return out;
}

// --- cronwheel.jobs ----------------------------------------------------------------------------------------

std::optional<JobDocument> ReadCronwheelDocument(const json& doc, Problems& problems) {
  const auto before = problems.size();
  const auto format = doc.find("format");
  if (format == doc.end() || !format->is_string() || format->get<std::string>() != kDocumentFormat) {
    problems.push_back({"format", fmt::format("expected \"{}\", got {}", kDocumentFormat,
                                              format == doc.end() ? "nothing" : Shown(*format))});
    return std::nullopt;
  }
  const auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer() || version->get<std::int64_t>() < 1) {
    problems.push_back({"version", fmt::format("expected the integer {}, got {}", kDocumentVersion,
                                               version == doc.end() ? "nothing" : Shown(*version))});
    return std::nullopt;
  }
  if (version->get<std::int64_t>() != kDocumentVersion) {
    problems.push_back(
        {"version", fmt::format("version {} is newer than this cronwheel reads (version {}); import it with "
                                "the cronwheel that exported it or a newer one",
                                version->get<std::int64_t>(), kDocumentVersion)});
    return std::nullopt;
  }
  JobDocument out;
  out.source = fmt::format("{} version {}", kDocumentFormat, kDocumentVersion);
  if (const auto g = doc.find("group"); g != doc.end()) {
    if (g->is_object()) {
      out.group = *g;
    } else {
      problems.push_back({"group", fmt::format("expected an object, got {}", Shown(*g))});
    }
  }
  const auto jobs = doc.find("jobs");
  if (jobs == doc.end() || !jobs->is_array()) {
    problems.push_back({"jobs", fmt::format("expected a list of jobs, got {}",
                                            jobs == doc.end() ? "nothing" : Shown(*jobs))});
    return std::nullopt;
  }
  std::string allowed;
  for (const auto f : PortableJobFields())
    allowed += fmt::format("{}{}", allowed.empty() ? "" : ", ", f);
  const PathOf path = [](std::size_t i, std::string_view f) { return fmt::format("jobs[{}].{}", i, f); };
  for (std::size_t i = 0; i < jobs->size(); ++i) {
    const auto& j = (*jobs)[i];
    if (!j.is_object()) {
      problems.push_back({fmt::format("jobs[{}]", i), fmt::format("expected an object, got {}", Shown(j))});
      continue;
    }
    PortableJob job;
    for (const auto& [name, value] : j.items()) {
      const auto& portable = PortableJobFields();
      if (std::find(portable.begin(), portable.end(), name) == portable.end()) {
        problems.push_back({path(i, name), fmt::format("unknown field; a version {} job has: {}",
                                                       kDocumentVersion, allowed)});
      } else if (name == kChildJobs) {
        if (!value.is_array() ||
            !std::all_of(value.begin(), value.end(), [](const json& c) { return c.is_string(); })) {
          problems.push_back(
              {path(i, name),
               fmt::format("expected a list of job descriptions (strings), got {}", Shown(value))});
        } else {
          job.child_jobs = value.get<std::vector<std::string>>();
        }
      } else if (CheckFieldType(*FindJobField(name), value, path(i, name), problems)) {
        job.fields[name] = value;
      }
    }
    for (const std::string_view required : {"description", "schedule_type"}) {
      if (!j.contains(required)) {
        problems.push_back({path(i, required), "missing: every job needs it to be created"});
      }
    }
    out.jobs.push_back(std::move(job));
  }
  if (problems.size() != before) return std::nullopt;
  CheckKeys(
      out.jobs, path,
      [](std::size_t i, std::size_t k) { return fmt::format("jobs[{}].child_jobs[{}]", i, k); }, problems);
  if (problems.size() != before) return std::nullopt;
  if (const auto w = doc.find("workflows"); w != doc.end()) {
    auto workflows = detail::ReadWorkflows(*w, out.jobs, problems);
    if (!workflows) return std::nullopt;
    out.workflows = *std::move(workflows);
  }
  return out;
}

// "an object with keys "code", "data"", "an array of 3 values", "a string": what an input is, for the
// message that refuses it. `depth` 1 also describes an object's "data".
std::string DescribeShape(const json& v, int depth = 1) {
  switch (v.type()) {
    case json::value_t::object: {
      if (v.empty()) return "an empty object";
      std::string keys;
      std::size_t n = 0;
      for (const auto& [k, _] : v.items()) {
        if (n++ == 8) {
          keys += ", ...";
          break;
        }
        keys += fmt::format("{}\"{}\"", keys.empty() ? "" : ", ", Utf8Truncate(k, 40));
      }
      auto out = fmt::format("an object with the key{} {}", v.size() == 1 ? "" : "s", keys);
      if (const auto data = v.find("data"); depth > 0 && data != v.end()) {
        out += fmt::format(" whose \"data\" is {}", DescribeShape(*data, depth - 1));
      }
      return out;
    }
    case json::value_t::array:
      return fmt::format("an array of {} value{}", v.size(), v.size() == 1 ? "" : "s");
    case json::value_t::string:
      return fmt::format("a string ({})", Shown(v, 40));
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return fmt::format("{}", v.get<bool>());
    default:
      return fmt::format("a number ({})", v.dump());
  }
}

}  // namespace

const std::vector<std::string_view>& PortableJobFields() {
  static const std::vector<std::string_view> kFields = {"description",
                                                        "author",
                                                        "alarm_email",
                                                        "alarm_webhook",
                                                        "schedule_type",
                                                        "schedule_conf",
                                                        "time_zone",
                                                        "misfire_strategy",
                                                        "route_strategy",
                                                        "handler",
                                                        "param",
                                                        "block_strategy",
                                                        "timeout_s",
                                                        "retry_count",
                                                        "retry_backoff_s",
                                                        "glue_type",
                                                        "glue_source",
                                                        "glue_remark",
                                                        "tags",
                                                        "start_ms",
                                                        "end_ms",
                                                        "concurrency_policy",
                                                        "max_concurrent",
                                                        "enabled",
                                                        kChildJobs};
  return kFields;
}

std::optional<ordered_json> MakeDocument(const json& group, const std::vector<json>& jobs,
                                         std::vector<std::string>& warnings, Problems& problems) {
  return MakeDocument(group, jobs, {}, warnings, problems);
}

std::optional<ordered_json> MakeDocument(const json& group, const std::vector<json>& jobs,
                                         const std::vector<json>& workflows,
                                         std::vector<std::string>& warnings, Problems& problems) {
  const auto before = problems.size();
  std::map<std::int64_t, std::string> description_of;
  std::map<std::string, std::int64_t> id_of;
  for (const auto& j : jobs) {
    const auto id = j.at("id").get<std::int64_t>();
    const auto d = j.at("description").get<std::string>();
    description_of[id] = d;
    if (const auto [it, fresh] = id_of.emplace(d, id); !fresh) {
      problems.push_back(
          {fmt::format("job {}", id),
           fmt::format("has the description {} of job {} too; import matches jobs by description, "
                       "so rename one before exporting",
                       Quoted(d), it->second)});
    }
  }
  if (problems.size() != before) return std::nullopt;
  std::vector<const json*> sorted;
  sorted.reserve(jobs.size());
  for (const auto& j : jobs)
    sorted.push_back(&j);
  std::sort(sorted.begin(), sorted.end(), [](const json* a, const json* b) {
    return a->at("description").get<std::string>() < b->at("description").get<std::string>();
  });
  ordered_json items = ordered_json::array();
  for (const json* j : sorted) {
    ordered_json item = ordered_json::object();
    for (const auto f : PortableJobFields()) {
      const std::string name(f);
      if (f == kChildJobs) {
        ordered_json children = ordered_json::array();
        for (const auto& c : j->value("child_job_ids", json::array())) {
          const auto id = c.get<std::int64_t>();
          if (const auto it = description_of.find(id); it != description_of.end()) {
            children.push_back(it->second);
          } else {
            warnings.push_back(
                fmt::format("job {} ({}): child job {} is not in group {}, so the link is left "
                            "out (children are named by description within one group)",
                            j->at("id").get<std::int64_t>(), Quoted(j->at("description").get<std::string>()),
                            id, group.value("id", 0)));
          }
        }
        item[name] = std::move(children);
      } else if (const auto v = j->find(name); v != j->end()) {
        item[name] = ordered_json::parse(v->dump());
      }
    }
    items.push_back(std::move(item));
  }
  ordered_json doc = ordered_json::object();
  doc["format"] = kDocumentFormat;
  doc["version"] = kDocumentVersion;
  doc["group"] = {{"app_name", group.value("app_name", std::string())},
                  {"title", group.value("title", std::string())}};
  doc["jobs"] = std::move(items);
  if (!workflows.empty()) {
    auto w = detail::WorkflowItems(description_of, workflows, group, warnings, problems);
    if (!w) return std::nullopt;
    if (!w->empty()) doc["workflows"] = *std::move(w);
  }
  return doc;
}

std::optional<JobDocument> ReadDocument(const json& doc, const ReadOptions& options,
                                        std::vector<std::string>& warnings, Problems& problems) {
  if (doc.is_array()) {
    const bool named = XxlDescriptionKey(doc) == "name";
    return ReadXxlList({&doc, "", named ? "XXL-JOB 3.5+ job list" : "XXL-JOB job list"}, options, warnings,
                       problems);
  }
  if (doc.is_object() && doc.contains("format")) return ReadCronwheelDocument(doc, problems);
  if (doc.is_object()) {
    const auto data = doc.find("data");
    if (data != doc.end() && data->is_array()) {  // 2.x: {"recordsTotal", "recordsFiltered", "data"}
      WarnIfOnePage(doc.value("recordsTotal", json()), data->size(), "recordsTotal", "length", warnings);
      return ReadXxlList({&*data, "data", "XXL-JOB 2.x /jobinfo/pageList answer"}, options, warnings,
                         problems);
    }
    // 3.3+: Response {"code", "msg", "data": PageModel {"offset", "pagesize", "data", "total"}}.
    if (const auto code = doc.find("code");
        code != doc.end() && code->is_number_integer() && code->get<std::int64_t>() != 200) {
      problems.push_back(
          {"code", fmt::format("XXL-JOB answered code {} ({}): that is a refusal, not a job list; a "
                               "/jobinfo/pageList answer that lists jobs has code 200",
                               code->get<std::int64_t>(), Shown(doc.value("msg", json()), 200))});
      return std::nullopt;
    }
    if (data != doc.end() && data->is_object()) {
      if (const auto list = data->find("data"); list != data->end() && list->is_array()) {
        WarnIfOnePage(data->value("total", json()), list->size(), "data.total", "pagesize", warnings);
        const bool named = XxlDescriptionKey(*list) == "name";
        return ReadXxlList(
            {&*list, "data.data",
             named ? "XXL-JOB 3.5+ /jobinfo/pageList answer" : "XXL-JOB 3.3+ /jobinfo/pageList answer"},
            options, warnings, problems);
      }
    }
  }
  problems.push_back(
      {"", fmt::format(
               "not a job document: found {}. import reads:\n"
               "    a cronwheel export: {{\"format\": \"{}\", \"version\": {}, \"jobs\": [...]}}\n"
               "    XXL-JOB 2.x /jobinfo/pageList: {{\"recordsTotal\": n, \"data\": [XxlJobInfo...]}}\n"
               "    XXL-JOB 3.3+ /jobinfo/pageList: {{\"code\": 200, \"data\": {{\"data\": [XxlJobInfo...], "
               "\"total\": n}}}} (3.5: jobs with name instead of jobDesc)\n"
               "    a list of XxlJobInfo: [{{\"jobDesc\" or \"name\": ..., ...}}, ...]",
               DescribeShape(doc), kDocumentFormat, kDocumentVersion)});
  return std::nullopt;
}

namespace detail {

void CheckKeys(const std::vector<PortableJob>& jobs, const PathOf& path,
               const std::function<std::string(std::size_t, std::size_t)>& child_path, Problems& problems) {
  std::map<std::string, std::size_t> first;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto d = jobs[i].description();
    if (const auto [it, fresh] = first.emplace(d, i); !fresh) {
      problems.push_back(
          {path(i, "description"),
           fmt::format("{} is also the description of the job at index {}; jobs are matched by description, "
                       "so each must be unique",
                       Quoted(d), it->second)});
    }
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    for (std::size_t k = 0; k < jobs[i].child_jobs.size(); ++k) {
      if (!first.contains(jobs[i].child_jobs[k])) {
        problems.push_back(
            {child_path(i, k), fmt::format("{} is not the description of a job in this document",
                                           Quoted(jobs[i].child_jobs[k]))});
      }
    }
  }
}

std::string Quoted(const std::string& s) {
  return fmt::format("'{}'", Utf8Truncate(s, 80));
}

std::optional<std::vector<ImportStep>> PlanByKey(const std::vector<std::string>& keys,
                                                 const std::map<std::string, std::vector<int>>& existing,
                                                 OnConflict on_conflict, const Kind& kind,
                                                 Problems& problems) {
  const auto before = problems.size();
  std::vector<ImportStep> steps;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ImportStep step{.job = i};
    const auto& d = keys[i];
    if (const auto it = existing.find(d); it != existing.end()) {
      step.existing_ids = it->second;
      const auto ids = JoinIds(it->second);
      if (on_conflict == OnConflict::kFail) {
        problems.push_back({fmt::format("{}[{}]", kind.list, i),
                            fmt::format("{} exists in the target group as {} {}; pass --on-conflict skip or "
                                        "--on-conflict update to import anyway",
                                        Quoted(d), kind.noun, ids)});
      } else if (on_conflict == OnConflict::kSkip) {
        step.action = ImportStep::Action::kSkip;
      } else if (it->second.size() > 1) {
        problems.push_back({fmt::format("{}[{}]", kind.list, i),
                            fmt::format("{} is the {} of {} {} in the target group: which one to "
                                        "update is unknown; rename all but one",
                                        Quoted(d), kind.key, kind.list, ids)});
      } else {
        step.action = ImportStep::Action::kUpdate;
      }
    }
    steps.push_back(std::move(step));
  }
  if (problems.size() != before) return std::nullopt;
  return steps;
}

}  // namespace detail

std::optional<std::vector<ImportStep>> PlanImport(const JobDocument& doc,
                                                  const std::vector<json>& target_jobs,
                                                  OnConflict on_conflict, Problems& problems) {
  std::map<std::string, std::vector<int>> existing;
  for (const auto& j : target_jobs)
    existing[j.at("description").get<std::string>()].push_back(j.at("id").get<int>());
  std::vector<std::string> keys;
  for (const auto& job : doc.jobs)
    keys.push_back(job.description());
  return detail::PlanByKey(keys, existing, on_conflict, {"jobs", "job", "description"}, problems);
}

json ImportBody(const PortableJob& job, std::optional<int> group_id, bool stopped) {
  json body = job.fields;
  if (group_id) {
    body["group_id"] = *group_id;
    if (stopped) body["enabled"] = false;
  } else {
    if (stopped) body.erase("enabled");
    if (job.child_jobs.empty()) body["child_job_ids"] = json::array();
  }
  return body;
}

}  // namespace cronwheel::cli
