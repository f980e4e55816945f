# The version salttap reports (`salttap --version`, salttap_build_info):
# project(VERSION), plus `git describe` when built from a git tree. The header
# is rewritten at every build, but only when the text changes, so a new commit
# recompiles the few files that include it and nothing else.
set(SALTTAP_GENERATED_DIR "${PROJECT_BINARY_DIR}/generated")
set(SALTTAP_VERSION_HEADER "${SALTTAP_GENERATED_DIR}/common/build_version.h")
set(_salttap_write_version
  ${CMAKE_COMMAND} -DVERSION=${PROJECT_VERSION} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
  -DOUTPUT=${SALTTAP_VERSION_HEADER} -P ${PROJECT_SOURCE_DIR}/cmake/WriteVersion.cmake)
execute_process(COMMAND ${_salttap_write_version})  # exists before the first build
add_custom_target(salttap_version
  COMMAND ${_salttap_write_version}
  BYPRODUCTS ${SALTTAP_VERSION_HEADER}
  COMMENT "salttap version (git describe)")
