// The headers every target precompiles (cmake/Warnings.cmake, CRONWHEEL_PCH): the standard library and the
// dependencies most translation units parse, which take about half of a debug compile. A dependency's headers
// are included only when the target links it (each one's imported target brings the macro tested here), so a
// target never sees a library it does not use, with defines that differ from the library's build.
// Sources still include what they use: a build with CRONWHEEL_PCH=OFF (and clang-tidy) checks that.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#ifdef FMT_SHARED
#include <fmt/format.h>
#endif
#ifdef SPDLOG_COMPILED_LIB
#include <spdlog/spdlog.h>
#endif
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
#include <httplib.h>
#endif
#ifdef PQXX_HAVE_OPTIONAL
#include <pqxx/pqxx>
#endif
