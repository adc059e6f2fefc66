# Every dependency comes from a Debian 12 package (scripts/setup installs them).
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
# libpqxx and cpp-httplib ship no CMake config. cpp-httplib is a *compiled* library in Debian: its
# pkg-config file carries the CPPHTTPLIB_*_SUPPORT defines the .so was built with; consumers must see the
# same defines or class layouts differ (crash at exit). Always link PkgConfig::HTTPLIB.
pkg_check_modules(PQXX REQUIRED IMPORTED_TARGET libpqxx)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(date REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(CLI11 REQUIRED)
# Abseil (libabsl-dev): absl::Status / absl::StatusOr, the error convention below the admin
# (docs/architecture.md, "Errors"; ringwheel/status.hpp).
find_package(absl REQUIRED)
pkg_check_modules(SODIUM REQUIRED IMPORTED_TARGET libsodium)
find_package(OpenSSL REQUIRED)
# Boost.Asio and Boost.Beast (header-only): the admin's event-driven HTTP client to executors. Only
# admin/src/dispatch/executor_client.cpp includes them.
find_package(Boost 1.74 REQUIRED)
pkg_check_modules(CURL REQUIRED IMPORTED_TARGET libcurl)
# libical (libical-dev): the iCalendar parser calendars are imported with (admin/model/ics_import.hpp).
pkg_check_modules(ICAL REQUIRED IMPORTED_TARGET libical)
# Single sign-on (admin/auth/sso_service.hpp): the ID token's signature (libjwt) and LDAP logins (OpenLDAP's
# client library).
pkg_check_modules(JWT REQUIRED IMPORTED_TARGET libjwt)
pkg_check_modules(LDAP REQUIRED IMPORTED_TARGET ldap)
if(CRONWHEEL_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(CRONWHEEL_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()

# Debian's libpqxx 6.4 config header lacks PQXX_HAVE_OPTIONAL: without it, reading NULL into
# std::optional throws. One interface target carries the fix for everyone.
add_library(cronwheel_pqxx INTERFACE)
target_link_libraries(cronwheel_pqxx INTERFACE PkgConfig::PQXX)
target_compile_definitions(cronwheel_pqxx INTERFACE PQXX_HAVE_OPTIONAL=1)
add_library(cronwheel::pqxx ALIAS cronwheel_pqxx)
