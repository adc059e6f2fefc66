#include "admin/model/result.hpp"

namespace cronwheel::admin {

int HttpStatus(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalid:
      return 400;
    case ErrorKind::kUnauthenticated:
      return 401;
    case ErrorKind::kForbidden:
      return 403;
    case ErrorKind::kNotFound:
      return 404;
    case ErrorKind::kConflict:
      return 409;
    case ErrorKind::kThrottled:
      return 429;
    case ErrorKind::kUnavailable:
      return 503;
  }
  return 400;
}

std::string_view ToString(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalid:
      return "invalid";
    case ErrorKind::kUnauthenticated:
      return "unauthenticated";
    case ErrorKind::kForbidden:
      return "forbidden";
    case ErrorKind::kNotFound:
      return "not_found";
    case ErrorKind::kConflict:
      return "conflict";
    case ErrorKind::kThrottled:
      return "throttled";
    case ErrorKind::kUnavailable:
      return "unavailable";
  }
  return "invalid";
}

nlohmann::json ToJson(const FieldErrors& errors) {
  auto arr = nlohmann::json::array();
  for (const auto& e : errors) {
    nlohmann::json j{{"field", e.field}, {"message", e.message}};
    if (!e.code.empty()) {
      j["code"] = e.code;
      j["params"] = e.params;
    }
    arr.push_back(std::move(j));
  }
  return arr;
}

}  // namespace cronwheel::admin
