# Compile policy shared by every target (linked PRIVATE):
#   salttap_settings  - defines, sanitizer flags
#   salttap_warnings  - warnings on our own code; errors under SALTTAP_WARNINGS_AS_ERRORS
add_library(salttap_settings INTERFACE)
add_library(salttap_warnings INTERFACE)

target_compile_options(salttap_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
  -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough)
if(SALTTAP_WARNINGS_AS_ERRORS)
  target_compile_options(salttap_warnings INTERFACE -Werror)
endif()

if(SALTTAP_SANITIZE)
  target_compile_options(salttap_settings INTERFACE
    -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(salttap_settings INTERFACE -fsanitize=address,undefined)
endif()

# salttap_library(NAME SOURCES... DEPS ...) : one library per folder.
function(salttap_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} salttap_settings PRIVATE salttap_warnings)
endfunction()
