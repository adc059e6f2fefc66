#pragma once
// The checks of request bodies the admin receives that need no database: pure functions of their input,
// so a fuzzer can drive them (fuzz/admin). The REST handlers and the XXL-JOB endpoints call them before
// anything that needs PostgreSQL (a group exists, a name is free).
//
// Every error names the field, the value and what would be valid. Thread-safety: pure functions.

#include <string>

#include "executor/protocol.hpp"

namespace cronwheel::admin {

// An executor's AppName (a group's app_name, a registration's registryKey): 4 to 64 ASCII letters, digits,
// '.', '_' or '-', starting with a letter or digit.
bool ValidAppName(const std::string& name);

// What is wrong with a registration (/api/registry, /api/registryRemove) that parsed: "" when it is valid.
// The registryKey must be an AppName and the registryValue an http(s) address (protocol::ParseHttpAddress),
// so nothing but an address the admin could call reaches executor_registry.
std::string CheckRegistration(const protocol::RegistryParam& p);

}  // namespace cronwheel::admin
