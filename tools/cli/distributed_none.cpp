// tally CLI: `--distributed` in a build without MPI.
#include <cstdio>

#include "distributed.hpp"

namespace tally_cli {
int run_distributed(const dist_request&) {
  std::fprintf(stderr, "tally: --distributed needs MPI, and this build of tally has none "
                       "(install libopenmpi-dev and rebuild)\n");
  return 2;
}
}  // namespace tally_cli
