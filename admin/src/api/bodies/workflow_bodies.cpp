// The request bodies of /api/v1/workflows (api/request_bodies.hpp).
#include <fmt/format.h>

#include "admin/api/request_bodies.hpp"
#include "admin/model/model.hpp"
#include "admin/model/parent_refs.hpp"
#include "api/bodies/body_reader.hpp"
#include "ringwheel/schedule.hpp"

namespace cronwheel::admin {

using namespace bodies;  // NOLINT(google-build-using-namespace): the body readers' own helpers

Result<Workflow> ReadWorkflowBody(const json& body, Workflow w, bool create) {
  FieldErrors errors;
  BodyReader r(body, errors);
  r.Int("group_id", w.group_id, create, 1, INT32_MAX);
  r.String("name", w.name, create, 255, 1);
  r.String("param", w.param, false, kMaxJobParamBytes);
  r.String("schedule_type", w.schedule_type, false, 16);
  r.String("schedule_conf", w.schedule_conf, false, 255);
  r.String("time_zone", w.time_zone, false, 64);
  r.String("misfire_strategy", w.misfire_strategy, false, 16);
  r.Bool("enabled", w.enabled, false);
  const json* nodes = r.Get("nodes", create);
  const json* edges = r.Get("edges", false);
  r.RejectUnknown();
  if (nodes != nullptr || edges != nullptr) {
    const auto old = ToJson(w.graph);
    const auto graph =
        GraphFromJson(nodes != nullptr ? *nodes : old["nodes"], edges != nullptr ? *edges : old["edges"]);
    if (!graph.ok()) {
      errors.insert(errors.end(), graph.error().fields.begin(), graph.error().fields.end());
    } else if (auto checked = CheckGraph(*graph); !checked.ok()) {
      errors.insert(errors.end(), checked.error().fields.begin(), checked.error().fields.end());
    } else {
      w.graph = *graph;
    }
    // Each node's own parameter takes its references' values as data (admin/model/parent_refs.hpp).
    for (std::size_t i = 0; i < w.graph.nodes.size(); ++i) {
      const auto& p = w.graph.nodes[i].param;
      if (!p) continue;
      if (const auto why = CheckParamRefs(*p, ParamRefs::kWorkflowNode)) {
        errors.push_back(
            {fmt::format("nodes[{}].param", i), fmt::format("nodes[{}].param: {}", i, *why), "template"});
      }
    }
  }
  if (w.schedule_type != "CRON" && w.schedule_type != "FIX_RATE" && w.schedule_type != "NONE") {
    errors.push_back(
        {"schedule_type",
         fmt::format("'{}' is not a workflow's schedule type; use CRON, FIX_RATE or NONE (FIX_DELAY "
                     "is for jobs: a workflow's runs may overlap)",
                     w.schedule_type.substr(0, 40)),
         "enum",
         {{"allowed", "CRON, FIX_RATE, NONE"}}});
  } else if (const auto schedule = ringwheel::Schedule::Parse(w.schedule_type, w.schedule_conf, w.time_zone);
             !schedule.ok()) {
    errors.push_back(
        {cronwheel::ErrorField(schedule.status()), std::string(schedule.status().message()), "schedule"});
  }
  if (w.time_zone.empty()) w.time_zone = "UTC";
  if (!ParseMisfireStrategy(w.misfire_strategy)) {
    errors.push_back({"misfire_strategy",
                      fmt::format("'{}' is not valid; use one of DO_NOTHING, FIRE_ONCE_NOW",
                                  w.misfire_strategy.substr(0, 40)),
                      "enum",
                      {{"allowed", "DO_NOTHING, FIRE_ONCE_NOW"}}});
  }
  if (w.enabled && w.schedule_type == "NONE") {
    errors.push_back(
        {"enabled", "a workflow with schedule_type NONE cannot be enabled: it runs only when triggered"});
  }
  return Checked(std::move(w), std::move(errors), "the workflow is not valid");
}

Result<std::optional<std::string>> ReadWorkflowTriggerBody(const json& body) {
  FieldErrors errors;
  BodyReader r(body, errors);
  std::optional<std::string> param;
  if (const json* v = r.Get("param", false); v != nullptr && !v->is_null()) {
    std::string p;
    r.String("param", p, false, kMaxJobParamBytes);
    if (errors.empty()) param = std::move(p);
  }
  r.RejectUnknown();
  return Checked(std::move(param), std::move(errors), "the trigger request is not valid");
}

}  // namespace cronwheel::admin
