#include "admin/model/parent_refs.hpp"

#include <fmt/format.h>

#include <charconv>

#include "model/param_insertion.hpp"

namespace cronwheel::admin {
namespace {

using param_insertion::RefValue;
using Value = nlohmann::ordered_json;

constexpr std::string_view kOpen = "{{parent.";

// The member of `output` at `path` ("a.b.0"), or nullptr with `why` set.
const nlohmann::json* Member(const nlohmann::json& output, std::string_view path, std::string& why) {
  const nlohmann::json* at = &output;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto dot = path.find('.', start);
    const auto key = path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (at->is_object()) {
      const auto it = at->find(std::string(key));
      if (it == at->end()) {
        why = fmt::format("has no member '{}'", key);
        return nullptr;
      }
      at = &*it;
    } else if (at->is_array()) {
      std::size_t index = 0;
      const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), index);
      if (key.empty() || ec != std::errc{} || end != key.data() + key.size() || index >= at->size()) {
        why = fmt::format("is an array of {} and '{}' is not an index of it", at->size(), key);
        return nullptr;
      }
      at = &(*at)[index];
    } else {
      why = fmt::format("has no member '{}' (it is not an object or an array there)", key);
      return nullptr;
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return at;
}

RefValue Unresolved(std::string why) {
  return RefValue{.value = std::nullopt, .why = std::move(why)};
}

// The value `name` ("output.a.b", "handle_msg", "log_id") names in `parent`.
RefValue ValueOf(std::string_view name, const ParentResult& parent) {
  if (name == "log_id") return RefValue{.value = Value(parent.log_id)};
  if (name == "handle_msg") return RefValue{.value = Value(parent.handle_msg)};
  if (name == "output" || name.starts_with("output.")) {
    if (!parent.output) return Unresolved(fmt::format("fire {} returned no output", parent.log_id));
    if (name == "output") return RefValue{.value = Value(*parent.output)};
    std::string why;
    if (const auto* v = Member(*parent.output, name.substr(7), why)) return RefValue{.value = Value(*v)};
    return Unresolved(fmt::format("the output of fire {} {}", parent.log_id, why));
  }
  return Unresolved("unknown reference: use output, output.<path>, handle_msg or log_id");
}

std::optional<RefValue> ParentRef(std::string_view name, const ParentResult& parent) {
  if (!name.starts_with("parent.")) return std::nullopt;
  auto v = ValueOf(name.substr(7), parent);
  if (v.why.starts_with("unknown reference")) {
    v.why = "unknown reference: use parent.output, parent.output.<path>, parent.handle_msg or parent.log_id";
  }
  return v;
}

std::optional<RefValue> WorkflowRef(std::string_view name, const WorkflowRefs& refs) {
  if (name == "workflow.param") return RefValue{.value = Value(refs.workflow_param)};
  if (name == "workflow.run_id") return RefValue{.value = Value(refs.run_id)};
  if (name.starts_with("parent.")) {
    if (refs.parents.size() != 1) {
      return Unresolved(
          fmt::format("the node has {} parents: name one as parents.<key>.", refs.parents.size()));
    }
    return ValueOf(name.substr(7), refs.parents.begin()->second);
  }
  if (name.starts_with("parents.")) {
    const auto rest = name.substr(8);
    const auto dot = rest.find('.');
    const auto key = rest.substr(0, dot);
    const auto it = refs.parents.find(std::string(key));
    if (dot == std::string_view::npos || it == refs.parents.end()) {
      return Unresolved(fmt::format("'{}' is not a parent of this node that succeeded", key));
    }
    return ValueOf(rest.substr(dot + 1), it->second);
  }
  return std::nullopt;  // not ours: kept as it is
}

}  // namespace

bool HasParentRefs(std::string_view param) {
  return param.find(kOpen) != std::string_view::npos;
}

ResolvedParam ResolveParentRefs(std::string_view param, const ParentResult& parent) {
  return param_insertion::Insert(param, [&](std::string_view name) { return ParentRef(name, parent); });
}

bool HasWorkflowRefs(std::string_view param) {
  return param.find("{{") != std::string_view::npos;
}

ResolvedParam ResolveWorkflowRefs(std::string_view param, const WorkflowRefs& refs) {
  return param_insertion::Insert(param, [&](std::string_view name) { return WorkflowRef(name, refs); });
}

std::optional<std::string> CheckParamRefs(std::string_view param, ParamRefs whose) {
  // Every reference of the caller's gets '' : what is refused then is refused whatever the values.
  const auto ours = [whose](std::string_view name) -> std::optional<RefValue> {
    const bool named = whose == ParamRefs::kChildJob
                           ? name.starts_with("parent.")
                           : name == "workflow.param" || name == "workflow.run_id" ||
                                 name.starts_with("parent.") || name.starts_with("parents.");
    if (!named) return std::nullopt;
    return RefValue{.value = Value("")};
  };
  return param_insertion::Insert(param, ours).refused;
}

}  // namespace cronwheel::admin
