#pragma once
// Files compiled into the admin binary by cmake/EmbedFiles.cmake.
#include <span>
#include <string_view>

namespace cronwheel::admin {

struct EmbeddedFile {
  std::string_view path;  // relative to the embedded folder, '/'-separated
  std::string_view data;
};

// sql/NNN_name.sql, sorted by path.
std::span<const EmbeddedFile> EmbeddedMigrations();
// web/** (the console's pages, scripts, vendored libraries and openapi.json), sorted by path.
std::span<const EmbeddedFile> EmbeddedWebFiles();

}  // namespace cronwheel::admin
