// salttap: taps a Salt master's event bus. All wiring lives in service/.
#include "cli/cli.h"

int main(int argc, char** argv) { return salttap::cli::run_cli(argc, argv); }
