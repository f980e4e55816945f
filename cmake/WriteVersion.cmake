# cmake -DVERSION=x.y.z -DSOURCE_DIR=... -DOUTPUT=.../build_version.h -P WriteVersion.cmake
# SALTTAP_VERSION is VERSION, or VERSION+<git describe> (semver build metadata)
# when SOURCE_DIR is a git tree and git is installed.
set(describe "")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" describe --tags --always --dirty
    WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE describe RESULT_VARIABLE rc
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT rc EQUAL 0)
    set(describe "")
  endif()
endif()
set(full "${VERSION}")
if(describe)
  set(full "${VERSION}+${describe}")
endif()
file(WRITE "${OUTPUT}.tmp" "#pragma once
// Written at every build by cmake/WriteVersion.cmake.
#define SALTTAP_PROJECT_VERSION \"${VERSION}\"
#define SALTTAP_GIT_DESCRIBE \"${describe}\"
#define SALTTAP_VERSION \"${full}\"
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
