// salttap: taps a Salt master's event bus. The command line is cli/ (docs/ARCHITECTURE.md).
#include "cli/cli.h"

int main(int argc, char** argv) { return salttap::cli::run_cli(argc, argv); }
