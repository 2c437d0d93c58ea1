// Thread level: 16-byte vector loads and the per-thread fold of a grid-stride range.
#pragma once

#include <cstdint>
#include <type_traits>

namespace tally::cuda {

/// V elements of T loaded as one 16-byte (or narrower when V*sizeof(T) < 16) access.
template <class T, int V> struct alignas(sizeof(T) * V) vec {
  T v[V];
};

/// Read-only, cache-global load of a whole vector (LDG.E.128 for 16-byte vectors).
template <class T, int V> __device__ __forceinline__ vec<T, V> load(const vec<T, V>* p) {
  vec<T, V> r;
  if constexpr (sizeof(vec<T, V>) == 16) {
    int4 w = __ldg(reinterpret_cast<const int4*>(p));
    r = *reinterpret_cast<vec<T, V>*>(&w);
  } else if constexpr (sizeof(vec<T, V>) == 8) {
    int2 w = __ldg(reinterpret_cast<const int2*>(p));
    r = *reinterpret_cast<vec<T, V>*>(&w);
  } else if constexpr (sizeof(vec<T, V>) == 4) {  // (1-, 2- and 4-byte loads through integer
    unsigned w = __ldg(reinterpret_cast<const unsigned*>(p));  // types: bool and the 16-bit
    __builtin_memcpy(&r, &w, sizeof r);                          // float storage have no __ldg)
  } else if constexpr (sizeof(vec<T, V>) == 2) {
    unsigned short w = __ldg(reinterpret_cast<const unsigned short*>(p));
    __builtin_memcpy(&r, &w, sizeof r);
  } else {
    static_assert(sizeof(vec<T, V>) == 1);
    unsigned char w = __ldg(reinterpret_cast<const unsigned char*>(p));
    __builtin_memcpy(&r, &w, sizeof r);
  }
  return r;
}

/// An accumulator's 32-bit words (N = sizeof(A) / 4, lowest first), and back. 128-bit
/// integers by shifts: through a memcpy, NVVM moved them via local memory (ncu, run 125: an
/// STL.128 and an LDL.128 at each level of the byte sums' and float16 fixed-point sums' group
/// merges); anything else by memcpy, which stays in registers.
template <class A> __device__ __forceinline__ void words_of(const A& v, unsigned (&w)[sizeof(A) / 4]) {
  if constexpr (std::is_same_v<A, __int128> || std::is_same_v<A, unsigned __int128>) {
    const auto u = static_cast<unsigned __int128>(v);
    const auto lo = static_cast<unsigned long long>(u), hi = static_cast<unsigned long long>(u >> 64);
    w[0] = static_cast<unsigned>(lo);
    w[1] = static_cast<unsigned>(lo >> 32);
    w[2] = static_cast<unsigned>(hi);
    w[3] = static_cast<unsigned>(hi >> 32);
  } else {
    __builtin_memcpy(w, &v, sizeof v);
  }
}
template <class A> __device__ __forceinline__ A from_words(const unsigned (&w)[sizeof(A) / 4]) {
  if constexpr (std::is_same_v<A, __int128> || std::is_same_v<A, unsigned __int128>) {
    const unsigned long long lo = (static_cast<unsigned long long>(w[1]) << 32) | w[0];
    const unsigned long long hi = (static_cast<unsigned long long>(w[3]) << 32) | w[2];
    return static_cast<A>((static_cast<unsigned __int128>(hi) << 64) | lo);
  } else {
    A r;
    __builtin_memcpy(&r, w, sizeof r);
    return r;
  }
}

/// Load bypassing L1 (L2 is coherent across the grid): for partials other blocks wrote.
template <class T> __device__ __forceinline__ T load_cg(const T* p) {
  static_assert(sizeof(T) % 4 == 0, "accumulators are whole 32-bit words");
  constexpr int N = int(sizeof(T) / 4);
  unsigned w[N];
  auto* src = reinterpret_cast<const unsigned*>(p);
#pragma unroll
  for (int i = 0; i < N; ++i) w[i] = __ldcg(src + i);
  return from_words<T>(w);
}

/// Number of leading elements before `p` is aligned to V elements (0 when it already is).
/// Requires p aligned to sizeof(T).
template <class T, int V> inline std::int64_t head_count(const T* p) {
  auto e = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p) / sizeof(T)) % V;
  return e == 0 ? 0 : V - e;
}

}  // namespace tally::cuda
