// The error convention's helpers (base/include/cronwheel/status.hpp): a status that names its field, and a
// status from errno that is never OK.
#include "cronwheel/status.hpp"

#include <gtest/gtest.h>

#include <cerrno>

namespace {

TEST(Status, FieldErrorNamesItsField) {
  const absl::Status e = cronwheel::FieldError("time_zone", "unknown time zone 'X'");
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(e.message(), "unknown time zone 'X'");
  EXPECT_EQ(cronwheel::ErrorField(e), "time_zone");
  EXPECT_EQ(cronwheel::ErrorField(absl::InvalidArgumentError("no field")), "");
  EXPECT_EQ(cronwheel::ErrorField(absl::OkStatus()), "");
}

TEST(Status, ErrnoErrorFollowsErrnoAndIsNeverOk) {
  EXPECT_EQ(cronwheel::ErrnoError(ENOENT, "cannot read 'x'").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(cronwheel::ErrnoError(EACCES, "cannot read 'x'").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(cronwheel::ErrnoError(EACCES, "cannot read 'x'").message(), "cannot read 'x'");
  EXPECT_EQ(cronwheel::ErrnoError(0, "a read error").code(), absl::StatusCode::kUnknown);
}

}  // namespace
