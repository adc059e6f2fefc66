#pragma once
// Checks for the admin's error convention (admin/model/result.hpp; docs/architecture.md, "Errors"): the
// fields a refusal names, for the unit tests of the catalog's services.

#include <string>
#include <vector>

#include "admin/model/result.hpp"

namespace cwtest {

// The fields `e` names, in order (each FieldError's `field`).
inline std::vector<std::string> Fields(const cronwheel::admin::Error& e) {
  std::vector<std::string> out;
  out.reserve(e.fields.size());
  for (const auto& f : e.fields)
    out.push_back(f.field);
  return out;
}

}  // namespace cwtest
