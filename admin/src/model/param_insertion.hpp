#pragma once
// How a reference's value goes into a job's parameter (private to admin/src/model; the rules are
// admin/model/parent_refs.hpp's, security review 2, N3): one implementation for child jobs and workflow
// nodes, at save (with no values) and when the fire is written.
//
// Plain functions; no state; thread-safe. Complexity: linear in the parameter and the values inserted.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "admin/model/parent_refs.hpp"

namespace cronwheel::admin::param_insertion {

// A reference's value: nullopt when it cannot be resolved, `why` saying so.
struct RefValue {
  std::optional<nlohmann::ordered_json> value;
  std::string why;
};
// The value of the reference named `name` (the text between "{{" and "}}"); nullopt when `name` is not a
// reference of the caller's (the text is then kept as it is).
using Lookup = std::function<std::optional<RefValue>(std::string_view name)>;

// `param` with its references' values inserted by the rules of parent_refs.hpp.
ResolvedParam Insert(std::string_view param, const Lookup& lookup);

}  // namespace cronwheel::admin::param_insertion
