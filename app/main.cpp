// salttap: taps a Salt master's event bus. All wiring lives in service/.
#include "service/cli.h"

int main(int argc, char** argv) { return salttap::service::run_cli(argc, argv); }
