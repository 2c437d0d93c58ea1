// tally CLI: `--distributed`, one process per MPI rank, each reading its slice of a .npy file.
#pragma once

#include <string>

namespace tally_cli {

/// A distributed command: sum, dot, mean, norm, min, max, argmin, argmax.
struct dist_request {
  std::string cmd;
  std::string a, b;       // .npy files (b for dot)
  std::string backend;    // auto, cpu or cuda
  std::string accuracy;   // exact or fast
  bool json = false;
  bool skip_nan = false;
};

/// Runs `r` under MPI (initialising and finalising it): every rank reads only its slice of
/// the file(s), tally::mpi combines the parts, and rank 0 prints the result as the
/// single-process command would (the same bits in exact mode). Returns the exit status
/// (0 ok, 1 library error, 2 input error); rank 0 prints the error on stderr, one line as one
/// process would (the first failing rank's own message; no rank prefix). Every .npy type is
/// read, uint64 above 2^63 - 1 included, and an integer sum or dot product need only fit as a
/// whole, as in one process. In a build without MPI it reports that and returns 2.
int run_distributed(const dist_request& r);

}  // namespace tally_cli
