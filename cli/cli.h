#pragma once
// The salttap command line: `salttap <command> ...`. main() only calls this.

namespace salttap::cli {

int run_cli(int argc, char** argv);

}  // namespace salttap::cli
