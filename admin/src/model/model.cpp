// The admin's own enumerations (admin/model/model.hpp); XXL-JOB's are in xxljob/vocabulary.hpp.
#include "admin/model/model.hpp"

namespace cronwheel::admin {

std::string_view ToString(ConcurrencyPolicy p) {
  return p == ConcurrencyPolicy::kForbid ? "FORBID" : "ALLOW";
}

std::optional<ConcurrencyPolicy> ParseConcurrencyPolicy(std::string_view s) {
  if (s == "ALLOW") return ConcurrencyPolicy::kAllow;
  if (s == "FORBID") return ConcurrencyPolicy::kForbid;
  return std::nullopt;
}

std::string ValidValues(ConcurrencyPolicy /*unused*/) {
  return "ALLOW, FORBID";
}

const char* StateName(FireOutputArchive::State state) {
  switch (state) {
    case FireOutputArchive::State::kPending:
      return "pending";
    case FireOutputArchive::State::kArchived:
      return "archived";
    case FireOutputArchive::State::kFailed:
      return "failed";
    case FireOutputArchive::State::kNone:
      break;
  }
  return "none";
}

}  // namespace cronwheel::admin
