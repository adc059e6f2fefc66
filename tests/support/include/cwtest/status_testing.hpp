#pragma once
// Checks for the error convention below the admin (docs/architecture.md, "Errors"): a function returns
// absl::Status or absl::StatusOr<T>, and a test reads the message it holds.

#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <gtest/gtest.h>

#include <string>

namespace cwtest {

// The message of the error `status` holds, after checking (non-fatally) that it is an error with `code`.
inline std::string ErrorOf(const absl::Status& status,
                           absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  EXPECT_FALSE(status.ok()) << "expected an error";
  EXPECT_EQ(status.code(), code) << status;
  return std::string(status.message());
}

// The message of the error `r` holds, after checking (non-fatally) that it holds one with `code`.
template <class T>
std::string ErrorOf(const absl::StatusOr<T>& r, absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  return ErrorOf(r.status(), code);
}

}  // namespace cwtest
