# Every dependency comes from Debian packages (see scripts/install-deps).
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(msgpack REQUIRED)              # libmsgpack-cxx-dev (header only; target msgpackc-cxx)
find_package(cppzmq REQUIRED)               # cppzmq-dev + libzmq3-dev
find_package(fmt REQUIRED)                  # libfmt-dev
find_package(yaml-cpp REQUIRED)             # libyaml-cpp-dev
find_package(Boost 1.74 REQUIRED)           # Asio (header only)
find_package(absl REQUIRED)                 # libabsl-dev (flat_hash_map)
find_package(CURL REQUIRED)                 # libcurl4-openssl-dev
find_package(CLI11 REQUIRED)                # libcli11-dev (header only)
find_package(OpenSSL REQUIRED)              # libssl-dev (job cache directory digests: md5, sha256 ...)

# rapidjson-dev is header only and ships no CMake target.
find_path(RAPIDJSON_INCLUDE_DIR rapidjson/writer.h REQUIRED)
add_library(salttap_rapidjson INTERFACE)
target_include_directories(salttap_rapidjson SYSTEM INTERFACE ${RAPIDJSON_INCLUDE_DIR})
target_compile_definitions(salttap_rapidjson INTERFACE RAPIDJSON_HAS_STDSTRING=1)

find_package(ZLIB REQUIRED)                 # zlib1g-dev (the checkpoint's crc32; gunzip in tests)
# libisal-dev (ISA-L): igzip gzips bulk bodies, crc32_iscsi checksums the spool's and the journal's records.
pkg_check_modules(ISAL REQUIRED IMPORTED_TARGET libisal)
# libxxhash-dev ships no CMake config: deterministic document _ids (XXH3-128).
find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
find_library(XXHASH_LIBRARY xxhash REQUIRED)
add_library(salttap_xxhash INTERFACE)
target_include_directories(salttap_xxhash SYSTEM INTERFACE ${XXHASH_INCLUDE_DIR})
target_link_libraries(salttap_xxhash INTERFACE ${XXHASH_LIBRARY})
# libsystemd-dev: sd_notify (READY, STATUS, STOPPING, WATCHDOG) for the Type=notify unit.
pkg_check_modules(SYSTEMD REQUIRED IMPORTED_TARGET libsystemd)
