#include "admin/model/result.hpp"

namespace cronwheel::admin {

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

}  // namespace cronwheel::admin
