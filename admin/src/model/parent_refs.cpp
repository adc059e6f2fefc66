#include "admin/model/parent_refs.hpp"

#include <fmt/format.h>

#include <charconv>

namespace cronwheel::admin {
namespace {

constexpr std::string_view kOpen = "{{parent.";
constexpr std::string_view kClose = "}}";

std::string Text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

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

// The value `name` ("output.a.b", "handle_msg", "log_id") names in `parent`; "" with `why` set when it
// cannot be resolved.
std::string ValueOf(std::string_view name, const ParentResult& parent, std::string& why) {
  if (name == "log_id") return std::to_string(parent.log_id);
  if (name == "handle_msg") return parent.handle_msg;
  if (name == "output" || name.starts_with("output.")) {
    if (!parent.output) {
      why = fmt::format("fire {} returned no output", parent.log_id);
      return "";
    }
    if (name == "output") return Text(*parent.output);
    if (const auto* v = Member(*parent.output, name.substr(7), why)) return Text(*v);
    why = fmt::format("the output of fire {} {}", parent.log_id, why);
    return "";
  }
  why = "unknown reference: use output, output.<path>, handle_msg or log_id";
  return "";
}

// Replaces each {{...}} in `param` whose name `resolve` knows (it returns false for a name it does not
// handle, which is then kept as it is).
template <class Resolve>
ResolvedParam Replace(std::string_view param, std::string_view open_mark, const Resolve& resolve) {
  ResolvedParam out;
  std::size_t pos = 0;
  while (pos < param.size()) {
    const auto open = param.find(open_mark, pos);
    if (open == std::string_view::npos) break;
    const auto close = param.find(kClose, open + open_mark.size());
    if (close == std::string_view::npos) break;  // no end: kept as it is
    out.param.append(param.substr(pos, open - pos));
    const auto ref = param.substr(open + 2, close - open - 2);  // without the braces
    std::string why;
    if (resolve(ref, out.param, why)) {
      if (!why.empty())
        out.notes.push_back(fmt::format("parameter: {{{{{}}}}} replaced by '': {}", ref, why));
    } else {
      out.param.append(param.substr(open, close + kClose.size() - open));
    }
    pos = close + kClose.size();
  }
  out.param.append(param.substr(pos));
  return out;
}

}  // namespace

bool HasParentRefs(std::string_view param) {
  return param.find(kOpen) != std::string_view::npos;
}

ResolvedParam ResolveParentRefs(std::string_view param, const ParentResult& parent) {
  return Replace(param, kOpen, [&](std::string_view ref, std::string& out, std::string& why) {
    out += ValueOf(ref.substr(std::string_view("parent.").size()), parent, why);
    if (!why.empty() && why.starts_with("unknown reference")) {
      why = "unknown reference: use parent.output, parent.output.<path>, parent.handle_msg or parent.log_id";
    }
    return true;
  });
}

bool HasWorkflowRefs(std::string_view param) {
  return param.find("{{") != std::string_view::npos;
}

ResolvedParam ResolveWorkflowRefs(std::string_view param, const WorkflowRefs& refs) {
  return Replace(param, "{{", [&](std::string_view ref, std::string& out, std::string& why) {
    if (ref == "workflow.param") {
      out += refs.workflow_param;
      return true;
    }
    if (ref == "workflow.run_id") {
      out += std::to_string(refs.run_id);
      return true;
    }
    if (ref.starts_with("parent.")) {
      if (refs.parents.size() != 1) {
        why = fmt::format("the node has {} parents: name one as parents.<key>.", refs.parents.size());
        return true;
      }
      out += ValueOf(ref.substr(7), refs.parents.begin()->second, why);
      return true;
    }
    if (ref.starts_with("parents.")) {
      const auto rest = ref.substr(8);
      const auto dot = rest.find('.');
      const auto key = rest.substr(0, dot);
      const auto it = refs.parents.find(std::string(key));
      if (dot == std::string_view::npos || it == refs.parents.end()) {
        why = fmt::format("'{}' is not a parent of this node that succeeded", key);
        return true;
      }
      out += ValueOf(rest.substr(dot + 1), it->second, why);
      return true;
    }
    return false;  // not ours: kept as it is
  });
}

}  // namespace cronwheel::admin
