// Reading XXL-JOB's job lists (its /jobinfo/pageList answers of 2.x to 3.5, or a list of XxlJobInfo) into a
// job document: the import's second source (cwcli/transfer.hpp, ReadDocument; cronwheel's own documents are
// read in transfer.cpp). Pure functions; thread-safe.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cronwheel/json.hpp"
#include "cronwheel/text.hpp"
#include "transfer_internal.hpp"

namespace cronwheel::cli::detail {
namespace {

using nlohmann::json;

// XxlJobInfo -> a job field. `type` is the field's type in XXL-JOB's JSON. The description (jobDesc, or
// name from XXL-JOB 3.5) is read apart. No XXL-JOB release has a job time zone (its cron runs in the admin
// JVM's zone), so every job gets ReadOptions::xxl_time_zone.
struct XxlField {
  std::string_view xxl;
  std::string_view ours;
  FieldType type;
};
constexpr std::array<XxlField, 14> kXxlFields = {{
    {"author", "author", FieldType::kString},
    {"alarmEmail", "alarm_email", FieldType::kString},
    {"scheduleType", "schedule_type", FieldType::kString},
    {"scheduleConf", "schedule_conf", FieldType::kString},
    {"misfireStrategy", "misfire_strategy", FieldType::kString},
    {"executorRouteStrategy", "route_strategy", FieldType::kString},
    {"executorHandler", "handler", FieldType::kString},
    {"executorParam", "param", FieldType::kString},
    {"executorBlockStrategy", "block_strategy", FieldType::kString},
    {"executorTimeout", "timeout_s", FieldType::kInteger},
    {"executorFailRetryCount", "retry_count", FieldType::kInteger},
    {"glueType", "glue_type", FieldType::kString},
    {"glueSource", "glue_source", FieldType::kString},
    {"glueRemark", "glue_remark", FieldType::kString},
}};
// Fields the server owns (or that name the source's own group): read past without a word.
constexpr std::array<std::string_view, 7> kXxlServerOwned = {
    "jobGroup", "addTime", "updateTime", "glueUpdatetime", "triggerLastTime", "triggerNextTime", "id"};

// "3,4" -> {3, 4}; nullopt for anything that is not comma-separated ids.
std::optional<std::vector<std::int64_t>> ParseIdList(const std::string& text) {
  std::vector<std::int64_t> out;
  for (const auto& part : SplitCommas(text)) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc{} || end != part.data() + part.size() || v <= 0) return std::nullopt;
    out.push_back(v);
  }
  return out;
}

}  // namespace

// The key of the description in XXL-JOB's jobs: `name` from 3.5 on (its migration renamed job_desc), else
// `jobDesc`. A list is of one version, so one job with `name` decides it.
std::string_view XxlDescriptionKey(const json& list) {
  const bool named = std::any_of(list.begin(), list.end(), [](const json& x) {
    return x.is_object() && x.contains("name") && !x.at("name").is_null();
  });
  return named ? "name" : "jobDesc";
}

std::optional<JobDocument> ReadXxlList(const XxlList& in, const ReadOptions& options,
                                       std::vector<std::string>& warnings, Problems& problems) {
  const auto before = problems.size();
  const json& list = *in.jobs;
  JobDocument out;
  out.source = in.source;
  const PathOf path = [&in](std::size_t i, std::string_view f) {
    return fmt::format("{}[{}]{}{}", in.path, i, f.empty() ? "" : ".", f);
  };
  const auto description_key = XxlDescriptionKey(list);
  std::map<std::int64_t, std::string> description_of;  // XXL-JOB id -> description
  std::vector<std::vector<std::int64_t>> child_ids(list.size());
  std::set<std::string> ignored;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto& x = list[i];
    if (!x.is_object()) {
      problems.push_back({path(i, ""), fmt::format("expected an XxlJobInfo object, got {}", Shown(x))});
      continue;
    }
    PortableJob job;
    job.fields["time_zone"] = options.xxl_time_zone;
    for (const auto& [name, value] : x.items()) {
      if (value.is_null()) continue;  // XXL-JOB writes null for an unset string
      const auto mapped = std::find_if(kXxlFields.begin(), kXxlFields.end(),
                                       [&, &n = name](const XxlField& f) { return f.xxl == n; });
      if (mapped != kXxlFields.end()) {
        if (CheckFieldType(JobField{mapped->xxl, mapped->type}, value, path(i, name), problems)) {
          job.fields[std::string(mapped->ours)] = value;
        }
      } else if (name == "jobDesc" || name == "name") {  // XXL-JOB before 3.5, and from 3.5
        if (!CheckFieldType(JobField{"description", FieldType::kString}, value, path(i, name), problems))
          continue;
        if (const auto other = job.fields.find("description"); other != job.fields.end() && *other != value) {
          problems.push_back(
              {path(i, name),
               fmt::format("{} differs from the other description field {}: a job has jobDesc (XXL-JOB "
                           "before 3.5) or name (3.5 and later), so which one is meant is unknown",
                           Shown(value), Shown(*other))});
          continue;
        }
        job.fields["description"] = value;
      } else if (name == "jobCron") {  // XXL-JOB before 2.3: a cron expression, no scheduleType
        if (CheckFieldType(JobField{"jobCron", FieldType::kString}, value, path(i, name), problems) &&
            !x.contains("scheduleType")) {
          job.fields["schedule_type"] = "CRON";
          job.fields["schedule_conf"] = value;
        }
      } else if (name == "triggerStatus") {
        if (CheckFieldType(JobField{"triggerStatus", FieldType::kInteger}, value, path(i, name), problems)) {
          job.fields["enabled"] = value.get<std::int64_t>() == 1;
        }
      } else if (name == "childJobId") {
        if (!CheckFieldType(JobField{"childJobId", FieldType::kString}, value, path(i, name), problems))
          continue;
        if (auto ids = ParseIdList(value.get<std::string>())) {
          child_ids[i] = *std::move(ids);
        } else {
          problems.push_back(
              {path(i, name), fmt::format("expected comma-separated job ids, got {}", Shown(value))});
        }
      } else if (std::find(kXxlServerOwned.begin(), kXxlServerOwned.end(), name) == kXxlServerOwned.end()) {
        ignored.insert(name);
      }
    }
    if (x.contains("id") && x.at("id").is_number_integer() && job.fields.contains("description")) {
      description_of[x.at("id").get<std::int64_t>()] = job.fields.at("description").get<std::string>();
    }
    if (!job.fields.contains("description")) {
      problems.push_back(
          {path(i, description_key),
           "missing: every job needs a description (jobDesc before XXL-JOB 3.5, name from 3.5 on)"});
    }
    if (!job.fields.contains("schedule_type")) {
      job.fields["schedule_type"] = "NONE";  // XXL-JOB 2.3+ always has one; a job with neither never fires
    }
    out.jobs.push_back(std::move(job));
  }
  for (const auto& name : ignored) {
    warnings.push_back(fmt::format("XXL-JOB field '{}' has no cronwheel equivalent: ignored", name));
  }
  if (problems.size() != before) return std::nullopt;
  for (std::size_t i = 0; i < out.jobs.size(); ++i) {
    for (const auto id : child_ids[i]) {
      if (const auto it = description_of.find(id); it != description_of.end()) {
        out.jobs[i].child_jobs.push_back(it->second);
      } else {
        warnings.push_back(fmt::format("{}: child job {} is not in this list, so the link is left out",
                                       path(i, "childJobId"), id));
      }
    }
  }
  CheckKeys(
      out.jobs, [&](std::size_t i, std::string_view) { return path(i, description_key); },
      [&](std::size_t i, std::size_t) { return path(i, "childJobId"); }, problems);
  if (problems.size() != before) return std::nullopt;
  return out;
}

// A pageList answer holds one page: says so when its total counts more jobs than it holds.
void WarnIfOnePage(const json& total, std::size_t held, std::string_view total_path,
                   std::string_view size_parameter, std::vector<std::string>& warnings) {
  if (!total.is_number_integer() || total.get<std::int64_t>() <= static_cast<std::int64_t>(held)) return;
  warnings.push_back(
      fmt::format("the answer holds {} of the {} jobs its {} counts: it is one page of "
                  "/jobinfo/pageList; ask for {}={} to import them all",
                  held, total.get<std::int64_t>(), total_path, size_parameter, total.get<std::int64_t>()));
}

}  // namespace cronwheel::cli::detail
