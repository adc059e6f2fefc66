# Project-wide compile options, applied per target with cronwheel_target_options(<target>).
# -Wconversion and -Wshadow catch the bugs that matter in time arithmetic (ms vs s, int vs int64).
# Third-party headers come in as SYSTEM includes (imported targets), so they do not trip these.
add_library(cronwheel_options INTERFACE)
target_compile_options(cronwheel_options INTERFACE
  -Wall -Wextra -Wshadow -Wconversion -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Woverloaded-virtual -Wimplicit-fallthrough
  # In optimised builds g++ 12 reports -Wnull-dereference and -Wmaybe-uninitialized inside libstdc++'s
  # own std::string, std::unordered_map and std::optional after inlining (false positives, GCC bug 80635
  # among others): a clean release build printed pages of them. They stay on where CI enforces warnings
  # (the debug build, -Werror), where the code itself is checked without the inliner's guesses. GCC only:
  # clang does not know -Wmaybe-uninitialized.
  $<$<CONFIG:Debug>:-Wnull-dereference>
  $<$<AND:$<CXX_COMPILER_ID:GNU>,$<NOT:$<CONFIG:Debug>>>:-Wno-maybe-uninitialized>
  # g++ 12 warns when a designated initializer omits a member that has a default member initializer,
  # which is exactly the house idiom for Settings structs (`Settings{.tick = 10ms}`); newer compilers
  # no longer warn there. Aggregate init without designators is not used for that reason either.
  -Wno-missing-field-initializers
  # clang's thread-safety analysis (issue 46): a field declared ABSL_GUARDED_BY(mu_) read or written without
  # its cronwheel::Mutex held, or a helper ABSL_EXCLUSIVE_LOCKS_REQUIRED called without it, is a warning
  # (base/include/cronwheel/mutex.hpp). -beta adds the lock order (ABSL_ACQUIRED_AFTER/BEFORE), which clang
  # 14 checks only there; the tree was clean under it when it was turned on. clang only (g++ has no such
  # analysis): it runs in the asan and tsan presets, which scripts/test builds with CRONWHEEL_WERROR=1.
  # ctest thread_safety_probe proves that the check fails when it should.
  $<$<CXX_COMPILER_ID:Clang>:-Wthread-safety>
  $<$<CXX_COMPILER_ID:Clang>:-Wthread-safety-beta>)
if(CRONWHEEL_WERROR)
  target_compile_options(cronwheel_options INTERFACE -Werror)
endif()

# Hardening of every binary (issue 21: release binaries lacked a stack protector, _FORTIFY_SOURCE and full
# RELRO), as Debian's dpkg-buildflags "hardening=+all" does. tests/tools/check_hardening.sh (ctest
# binary_hardening) reads the built binaries back.
#  * PIE (-fPIE at compile, -pie at link; CMake's POSITION_INDEPENDENT_CODE, set in CMakeLists.txt with
#    check_pie_supported): ASLR moves the program's own code too;
#  * -fstack-protector-strong: canaries in functions with arrays or address-taken locals;
#  * -fstack-clash-protection: a large stack allocation probes each page, so it cannot jump the guard page;
#  * -fcf-protection: Intel CET (IBT/SHSTK) markers, x86 only (checked: other targets skip it);
#  * -Wl,-z,relro,-z,now: every symbol is bound at start and the GOT is read-only after it (full RELRO);
#  * -D_FORTIFY_SOURCE=2: glibc's checked variants of memcpy, sprintf, read ... where sizes are known at
#    compile time. It needs optimisation (at -O0 glibc warns, and warnings are errors), so only in builds
#    other than Debug; and not under sanitizers, whose interceptors it would bypass (fuzz is optimised).
include(CheckCXXCompilerFlag)
target_compile_options(cronwheel_options INTERFACE -fstack-protector-strong)
foreach(flag -fstack-clash-protection -fcf-protection)
  string(MAKE_C_IDENTIFIER "CRONWHEEL_CXX_HAS${flag}" has_flag)
  check_cxx_compiler_flag(${flag} ${has_flag})
  if(${has_flag})
    target_compile_options(cronwheel_options INTERFACE ${flag})
  endif()
endforeach()
if(CRONWHEEL_SANITIZE STREQUAL "")
  # -U first: a toolchain that defines it already (Ubuntu's) would otherwise warn about a redefinition.
  target_compile_options(cronwheel_options INTERFACE
    "$<$<NOT:$<CONFIG:Debug>>:-U_FORTIFY_SOURCE;-D_FORTIFY_SOURCE=2>")
endif()
target_link_options(cronwheel_options INTERFACE LINKER:-z,relro LINKER:-z,now)

if(CRONWHEEL_SANITIZE STREQUAL "address,undefined")
  target_compile_options(cronwheel_options INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                                                     -fno-sanitize-recover=undefined)
  target_link_options(cronwheel_options INTERFACE -fsanitize=address,undefined)
elseif(CRONWHEEL_SANITIZE STREQUAL "thread")
  target_compile_options(cronwheel_options INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(cronwheel_options INTERFACE -fsanitize=thread)
  # Boost.Asio brackets each completion handler with std::atomic_thread_fence, which ThreadSanitizer does not
  # model (g++ refuses it under -Werror=tsan). The hand-over those fences order is already ordered by the
  # mutex of Asio's scheduler and reactor, which ThreadSanitizer does see, so its fence-free block is used.
  target_compile_definitions(cronwheel_options INTERFACE BOOST_ASIO_DISABLE_FENCED_BLOCK)
elseif(CRONWHEEL_SANITIZE STREQUAL "fuzzer")
  target_compile_options(cronwheel_options INTERFACE -fsanitize=fuzzer-no-link,address,undefined)
  target_link_options(cronwheel_options INTERFACE -fsanitize=address,undefined)
elseif(NOT CRONWHEEL_SANITIZE STREQUAL "")
  message(FATAL_ERROR "CRONWHEEL_SANITIZE='${CRONWHEEL_SANITIZE}': valid are '', 'address,undefined', 'thread', 'fuzzer'")
endif()

# Precompiled headers (cmake/precompiled.hpp), one per target of several sources (for one source the header
# would be compiled twice): parsing them is about half of a debug compile, and clean builds are most of CI's
# time. Off for a check that every source includes what it uses.
option(CRONWHEEL_PCH "Precompile the common headers of each target" ON)

# cronwheel_target_options(<target>): the warnings, sanitizers and precompiled headers above.
function(cronwheel_target_options target)
  target_link_libraries(${target} PRIVATE cronwheel_options)
  cronwheel_precompile(${target} "${PROJECT_SOURCE_DIR}/cmake/precompiled.hpp")
endfunction()

# cronwheel_precompile(<target> <header>...): precompiles the headers for a target of three sources or more.
function(cronwheel_precompile target)
  get_target_property(sources ${target} SOURCES)
  list(LENGTH sources count)
  if(CRONWHEEL_PCH AND count GREATER_EQUAL 3)
    target_precompile_headers(${target} PRIVATE ${ARGN})
  endif()
endfunction()
