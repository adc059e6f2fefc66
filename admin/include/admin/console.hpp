#pragma once
// The server side of the web console, beyond the jobs API of api_rest.cpp: authentication (login, logout,
// me), users, API tokens, the audit log, the dashboard, schedule previews, job copies and glue versions,
// a fire's executor output (live tail), kill and clearing of fires, the OpenAPI document, and the static
// pages of web/ (api_console.cpp, web_assets.cpp).
//
// ApiServer registers these routes when its Services carry a ConsoleServices (AdminApp always does; some
// tests of the jobs API do not). Lifetime: every referenced part must outlive the ApiServer.

#include <string>
#include <vector>

#include "admin/audit_log.hpp"
#include "admin/auth_service.hpp"
#include "admin/console_repository.hpp"
#include "admin/executor_client.hpp"

namespace cronwheel::admin {

// One REST route as the OpenAPI document names it: method and path template ("/api/v1/jobs/{id}").
struct RouteInfo {
  std::string method;
  std::string path;
};

struct ConsoleServices {
  AuthService& auth;
  AuditLog& audit;
  ConsoleRepository& store;
  ExecutorClient& executors;  // for a fire's output (/log) and kill (/kill)
  std::string web_dir;        // serve the pages from this folder instead of the embedded copy ("" = embedded)
  // Filled while the server registers its routes: every /api/v1 route (for the OpenAPI completeness test).
  std::vector<RouteInfo> routes{};
};

}  // namespace cronwheel::admin
