// CPU backend: which x86-64 vector extensions this CPU has, asked once (GCC / Clang builtins).
// Kernels compiled for AVX2 or AVX-512 ([[gnu::target]]) are chosen by these at run time; the
// library itself is built for the baseline (SSE2), so it runs on any x86-64 CPU.
//
// TALLY_CPU_ISA=avx2 or =sse2 in the environment caps the choice (tests run every path on one
// machine that way; any other value, or none, lets the CPU decide).
#pragma once

#include <cstdlib>
#include <cstring>

namespace tally::cpu {

/// The cap TALLY_CPU_ISA sets: 2 (none, or AVX-512), 1 (avx2), 0 (sse2).
inline int cpu_isa_cap() {
  static const int cap = [] {
    const char* v = std::getenv("TALLY_CPU_ISA");
    if (v && std::strcmp(v, "sse2") == 0) return 0;
    if (v && std::strcmp(v, "avx2") == 0) return 1;
    return 2;
  }();
  return cap;
}

/// AVX-512 F, BW and VL (512-bit vectors of every element width).
inline bool cpu_has_avx512() {
  static const bool yes = cpu_isa_cap() >= 2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512bw");
  return yes;
}
/// AVX2 and FMA (256-bit vectors).
inline bool cpu_has_avx2() {
  static const bool yes = cpu_isa_cap() >= 1 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}

}  // namespace tally::cpu
