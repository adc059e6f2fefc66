# ctest thread_safety_probe (tests/tools/CMakeLists.txt; clang only): compiles thread_safety_probe.cpp with
# -fsyntax-only -Wthread-safety -Werror twice. Without PROBE_LOCKED it reads a guarded field unlocked and
# must fail, naming the mutex; with PROBE_LOCKED it must compile. Either way round, the test fails.
#   cmake -DCXX=<clang++> -DSOURCE=<probe.cpp> -DINCLUDES=<dir;dir> -P thread_safety_probe.cmake
set(flags -std=c++20 -fsyntax-only -Wthread-safety -Werror)
foreach(dir IN LISTS INCLUDES)
  list(APPEND flags "-I${dir}")
endforeach()

execute_process(COMMAND ${CXX} ${flags} -DPROBE_LOCKED ${SOURCE}
                RESULT_VARIABLE locked_rc OUTPUT_VARIABLE locked_out ERROR_VARIABLE locked_out)
if(NOT locked_rc EQUAL 0)
  message(FATAL_ERROR "the probe with the lock taken does not compile (so the check below would prove "
                      "nothing):\n${locked_out}")
endif()

execute_process(COMMAND ${CXX} ${flags} ${SOURCE}
                RESULT_VARIABLE unlocked_rc OUTPUT_VARIABLE unlocked_out ERROR_VARIABLE unlocked_out)
if(unlocked_rc EQUAL 0)
  message(FATAL_ERROR "the probe reads a guarded field without its lock and compiled: -Wthread-safety "
                      "checks nothing on cronwheel::Mutex")
endif()
if(NOT unlocked_out MATCHES "requires holding mutex 'mu_'")
  message(FATAL_ERROR "the unlocked probe failed, but not on the thread-safety analysis:\n${unlocked_out}")
endif()
message(STATUS "thread_safety_probe: the unlocked read is refused, the locked one compiles")
