#include "cronwheel/status.hpp"

#include <absl/strings/cord.h>
#include <absl/strings/string_view.h>
#include <absl/types/optional.h>

namespace cronwheel {
namespace {

// Debian's Abseil is built with its own string_view (ABSL_OPTION_USE_STD_STRING_VIEW 0).
absl::string_view AbslView(std::string_view text) {
  return {text.data(), text.size()};
}

}  // namespace

absl::Status FieldError(std::string_view field, std::string_view message) {
  absl::Status status = absl::InvalidArgumentError(AbslView(message));
  status.SetPayload(AbslView(kFieldPayloadUrl), absl::Cord(AbslView(field)));
  return status;
}

std::string ErrorField(const absl::Status& status) {
  const absl::optional<absl::Cord> field = status.GetPayload(AbslView(kFieldPayloadUrl));
  return field ? std::string(*field) : std::string();
}

absl::Status ErrnoError(int err, std::string_view message) {
  const absl::StatusCode code = err == 0 ? absl::StatusCode::kUnknown : absl::ErrnoToStatusCode(err);
  return {code, AbslView(message)};
}

}  // namespace cronwheel
