#include "admin/request_bodies.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace cronwheel::admin {

bool ValidAppName(const std::string& name) {
  if (name.size() < 4 || name.size() > 64 || !std::isalnum(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

std::string CheckRegistration(const protocol::RegistryParam& p) {
  if (!ValidAppName(p.registry_key)) {
    return fmt::format(
        "field 'registryKey': '{}' is not a valid AppName: 4 to 64 letters, digits, '.', '_' or '-', "
        "starting "
        "with a letter or digit",
        p.registry_key.substr(0, 80));
  }
  std::string why;
  if (!protocol::ParseHttpAddress(p.registry_value, &why))
    return fmt::format("field 'registryValue': {}", why);
  return "";
}

}  // namespace cronwheel::admin
