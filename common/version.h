#pragma once
// Which salttap this is: the project version (CMakeLists.txt), and the git
// describe of the tree it was built from, when it was built from one.
// `salttap --version` prints it; /metrics carries it as salttap_build_info.

#include <string_view>

namespace salttap {

class Metrics;

std::string_view project_version();  // "0.1.0"
std::string_view git_describe();     // "cc5bbea", "v0.2.0-3-gcc5bbea-dirty"; empty when not built from git
std::string_view version();          // project_version(), "+" and git_describe() when there is one

// salttap_build_info{version="<version()>"} 1
void publish_build_info(Metrics& metrics);

}  // namespace salttap
