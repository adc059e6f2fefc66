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

}  // namespace

bool HasParentRefs(std::string_view param) {
  return param.find(kOpen) != std::string_view::npos;
}

ResolvedParam ResolveParentRefs(std::string_view param, const ParentResult& parent) {
  ResolvedParam out;
  std::size_t pos = 0;
  while (pos < param.size()) {
    const auto open = param.find(kOpen, pos);
    if (open == std::string_view::npos) break;
    const auto close = param.find(kClose, open + kOpen.size());
    if (close == std::string_view::npos) break;  // no end: kept as it is
    out.param.append(param.substr(pos, open - pos));
    const auto ref = param.substr(open + 2, close - open - 2);  // "parent.xxx"
    const auto name = ref.substr(std::string_view("parent.").size());
    std::string why;
    if (name == "log_id") {
      out.param += std::to_string(parent.log_id);
    } else if (name == "handle_msg") {
      out.param += parent.handle_msg;
    } else if (name == "output" || name.starts_with("output.")) {
      if (!parent.output) {
        why = fmt::format("fire {} returned no output", parent.log_id);
      } else if (name == "output") {
        out.param += Text(*parent.output);
      } else if (const auto* v = Member(*parent.output, name.substr(7), why)) {
        out.param += Text(*v);
      } else {
        why = fmt::format("the output of fire {} {}", parent.log_id, why);
      }
    } else {
      why = "unknown reference: use parent.output, parent.output.<path>, parent.handle_msg or parent.log_id";
    }
    if (!why.empty()) out.notes.push_back(fmt::format("parameter: {{{{{}}}}} replaced by '': {}", ref, why));
    pos = close + kClose.size();
  }
  out.param.append(param.substr(pos));
  return out;
}

}  // namespace cronwheel::admin
