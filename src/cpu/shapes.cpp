// CPU backend of the shape layer: per-row, per-column, per-segment and strided reductions.
//
// One engine walks every geometry (src/shapes_backend.hpp), with an "op" that folds a
// contiguous run of elements into an accumulator:
//  - row mode (segments, strided views, and axes whose reduced elements are the closer ones):
//    outputs of at most kPiece elements are spread over the threads (each output folded by one
//    thread); longer ones are cut into pieces of kPiece that the threads fold in parallel and
//    that are then combined pairwise in a fixed order. Strided runs are gathered into a
//    per-thread buffer first.
//  - column mode (axes whose outputs are the closer ones, e.g. columns of a row-major
//    matrix): tiles of kBlockOut adjacent outputs x kPieceRows rows are gathered row by row
//    (contiguous reads) into a transposed buffer and folded per output; with more than one
//    tile of rows the partials are combined pairwise per output, in a fixed order.
// Pieces depend only on the shape, so every result is independent of the thread count.
// Exact sums reuse the 1-D exact path (cpu::exact_sum_fold) per run into a superaccumulator
// per output, merged by integer addition and rounded once (bit-identical to tally::sum over
// the same elements); outputs of at most kCertifiedLen elements try the certified pass first
// (exact_sum_op::write_certified), with the same bits.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "cpu/exact.hpp"
#include "cpu/extreme_blocks.hpp"
#include "cpu/isa.hpp"
#include "shapes_backend.hpp"
#include "shapes_widen.hpp"
#include "tally/ops/certified.hpp"
#include "tally/ops/exact.hpp"
#include "tally/ops/extremes.hpp"
#include "tally/ops/reducers.hpp"
#include "tally/threads.hpp"

namespace tally::cpu {
namespace {

using shapes::geometry;
using shapes::kind;
using shapes::outcome;
using shapes::request;
namespace ex = ops::exact;

constexpr std::int64_t kPiece = 1 << 15;   // row mode: elements per piece
constexpr std::int64_t kBlockOut = 64;     // column mode: outputs per tile
constexpr std::int64_t kPieceRows = 2048;  // column mode: rows per tile
constexpr std::int64_t kWideOut = 1024;    // certified column mode: outputs per band
constexpr std::int64_t kBlock = 1024;      // fast sums: elements per lane block (as 1-D)
constexpr int kLanes = 8;
constexpr std::int64_t kByValueLen = 64;  // extremes: runs this long are scanned by value first
constexpr std::int64_t kCertifiedLen = 128;  // exact sums and means: outputs this short try the certified pass first

// Records the first overflowing output (any thread).
struct overflow_log {
  std::int64_t first = -1;
  void note(std::int64_t o) {
#pragma omp critical(tally_shapes_overflow)
    if (first < 0 || o < first) first = o;
  }
};

template <class T> void put(void* out, std::int64_t o, T v) { static_cast<T*>(out)[o] = v; }

// Whether the exact column sums and means take the certified tiles first (engine::
// columns_certified); TALLY_CPU_CERTIFIED=0 turns that off (the superaccumulator alone: the
// same bits; the tests run both), read once.
bool certified_columns() {
  static const bool on = [] {
    const char* v = std::getenv("TALLY_CPU_CERTIFIED");
    return !(v && v[0] == '0' && v[1] == 0);
  }();
  return on;
}

// ---- ops ----------------------------------------------------------------------------------

// Fast floating sum: float64 lanes over blocks of 1024, pairwise trees (the 1-D CPU scheme).
template <class T> struct fast_sum_op {
  using elem = T;
  using acc = double;
  void* out;
  dtype out_type;
  acc identity() const { return -0.0; }
  // A short run (rows of a few elements, n < kLanes): fold_block's tree written out, lane j
  // holding x[j] or -0.0, so the same bits; there the lanes stored one by one and read back as
  // vectors stalled store forwarding, half the time of a short row.
  [[gnu::always_inline]] static double short_tree(const T* x, std::int64_t n) {
    static_assert(kLanes == 8);
    auto v = [&](int j) { return j < n ? static_cast<double>(x[j]) : -0.0; };
    return ((v(0) + v(4)) + (v(2) + v(6))) + ((v(1) + v(5)) + (v(3) + v(7)));
  }
  static double fold_block(const T* x, std::int64_t n) {
    if (n < kLanes) return short_tree(x, n);
    double lane[kLanes];
    for (auto& l : lane) l = -0.0;
    std::int64_t body = n - n % kLanes;
    for (std::int64_t i = 0; i < body; i += kLanes)
      for (int j = 0; j < kLanes; ++j) lane[j] += static_cast<double>(x[i + j]);
    for (std::int64_t i = body; i < n; ++i) lane[i - body] += static_cast<double>(x[i]);
    for (int w = kLanes / 2; w >= 1; w /= 2)
      for (int j = 0; j < w; ++j) lane[j] += lane[j + w];
    return lane[0];
  }
  void fold(acc& a, const T* x, std::int64_t n, std::int64_t) const {
    if (n == 1) {  // (short_tree of one element: x[0] + -0.0, its other additions all -0.0 + -0.0)
      a += static_cast<double>(x[0]) + -0.0;
      return;
    }
    if (n <= kBlock) {  // one block (the tree below of one part)
      if (n > 0) a += n < kLanes ? short_tree(x, n) : fold_block(x, n);
      return;
    }
    double part[kPiece / kBlock];
    int blocks = 0;
    for (std::int64_t b = 0; b < n; b += kBlock) part[blocks++] = fold_block(x + b, std::min(kBlock, n - b));
    for (int w = 1; w < blocks; w *= 2)
      for (int i = 0; i + w < blocks; i += 2 * w) part[i] += part[i + w];
    if (blocks) a += part[0];
  }
  /// A column tile (engine::columns, adjacent outputs contiguous, kl <= kPieceRows rows): the
  /// additions of fold() on each column, in the same order (lane k mod 8 of each block of
  /// kBlock rows, the lanes' tree, the blocks' tree), with the outputs as the vector lanes:
  /// the same bits as the gathered columns, without the transpose.
  /// Matrices of at most kTileOut columns take them all as one tile (engine::columns), so that
  /// each row is read whole, in order, and the lane arrays (8 x 512 doubles) stay in L1:
  /// (100000, 100) 8.7 -> 3.7 ms, (20000, 500) 9.4 -> 5.8. Wider matrices take tiles of
  /// kTileOut too (kWideTiles; thirty-ninth session: (200, 50000) 12.7 -> 8.1 ms, (10000, 600)
  /// 4.9 -> 2.9, (1000, 10000) and (2000, 1000) unchanged; the thirty-eighth session had
  /// measured 256 and 1024 slower than 64 at (1000, 10000), 512 not). A software prefetch of
  /// the rows 8 ahead gained 10-15% on some wide shapes and lost as much on (2000, 1000).
  static constexpr std::int64_t kTileOut = 512;
  static constexpr bool kWideTiles = true;
  void fold_tile(acc* out, const T* p, std::int64_t ob, std::int64_t kl, std::int64_t row_stride, std::int64_t) const {
    static_assert(kPieceRows % kBlock == 0);
    // lane[kLanes][ob] and part[kPieceRows / kBlock][ob], rows of ls doubles: ob rounded up to
    // a line, plus one (so that the rows of a narrow tile do not share the L1 sets).
    // Tiles of up to kBlockOut outputs keep them on the stack (measured faster for 8 outputs).
    const std::int64_t ls = (ob + 7) / 8 * 8 + 8;
    constexpr std::int64_t kRowsOfArrays = kLanes + kPieceRows / kBlock;
    alignas(64) double small[kRowsOfArrays * (kBlockOut + 8)];
    thread_local std::vector<double> arrays;
    double* base = small;
    if (ob > kBlockOut) {
      arrays.resize(static_cast<std::size_t>(kRowsOfArrays * ls));
      base = arrays.data();
    }
    auto lane = [&](std::int64_t j) { return base + j * ls; };
    auto part = [&](std::int64_t q) { return base + (kLanes + q) * ls; };
    int blocks = 0;
    for (std::int64_t b0 = 0; b0 < kl; b0 += kBlock, ++blocks) {
      const std::int64_t n = std::min(kBlock, kl - b0);
      for (int j = 0; j < kLanes; ++j)
        for (std::int64_t b = 0; b < ob; ++b) lane(j)[b] = -0.0;
      for (std::int64_t i = 0; i < n; ++i) {
        const T* __restrict row = p + (b0 + i) * row_stride;
        double* __restrict l = lane(i % kLanes);
        for (std::int64_t b = 0; b < ob; ++b) l[b] += static_cast<double>(row[b]);
      }
      for (int w = kLanes / 2; w >= 1; w /= 2)
        for (int j = 0; j < w; ++j) {
          double *a = lane(j), *c = lane(j + w);
          for (std::int64_t b = 0; b < ob; ++b) a[b] += c[b];
        }
      std::copy(lane(0), lane(0) + ob, part(blocks));
    }
    for (int w = 1; w < blocks; w *= 2)
      for (int i = 0; i + w < blocks; i += 2 * w) {
        double *a = part(i), *c = part(i + w);
        for (std::int64_t b = 0; b < ob; ++b) a[b] += c[b];
      }
    for (std::int64_t b = 0; b < ob; ++b) out[b] = identity() + part(0)[b];
  }
  acc combine(acc a, acc b) const { return a + b; }
  void write(std::int64_t o, acc a, std::int64_t len) const {
    if (len == 0) a = 0.0;  // the sum of nothing is +0
    if (out_type == dtype::float32) put(out, o, static_cast<float>(a));
    else put(out, o, a);
  }
};

// Integer sum (and mean): exact 128-bit accumulator; pieces of <= 2^15 elements in int64 lanes.
template <class T> struct int_sum_op {
  using elem = T;
  using acc = ops::i128;
  void* out;
  dtype out_type;
  bool mean;
  overflow_log* log;
  bool to_u64 = false;  // a uint64 result (unsigned data): 0 <= sum < 2^64
  bool biased = false;  // uint64 data read as x - 2^63 (shapes_widen.hpp): len * 2^63 added back
  acc identity() const { return 0; }
  void fold(acc& a, const T* x, std::int64_t n, std::int64_t) const {
    for (std::int64_t b = 0; b < n; b += kPiece) {
      std::int64_t m = std::min(kPiece, n - b);
      std::int64_t hi[kLanes] = {}, lo[kLanes] = {};
      std::int64_t body = m - m % kLanes;
      const T* p = x + b;
      for (std::int64_t i = 0; i < body; i += kLanes)
        for (int j = 0; j < kLanes; ++j) {
          if constexpr (sizeof(T) == 8) {
            hi[j] += p[i + j] >> 32;
            lo[j] += static_cast<std::int64_t>(static_cast<std::uint64_t>(p[i + j]) & 0xffffffffu);
          } else {
            lo[j] += p[i + j];
          }
        }
      for (std::int64_t i = body; i < m; ++i) {
        if constexpr (sizeof(T) == 8) {
          hi[0] += p[i] >> 32;
          lo[0] += static_cast<std::int64_t>(static_cast<std::uint64_t>(p[i]) & 0xffffffffu);
        } else {
          lo[0] += p[i];
        }
      }
      ops::i128 h = 0, l = 0;
      for (int j = 0; j < kLanes; ++j) { h += hi[j]; l += lo[j]; }
      a += h * (ops::i128(1) << 32) + l;
    }
  }
  /// A column tile (engine::columns, adjacent outputs contiguous, kl <= kPieceRows rows):
  /// int64 sums per output, row by row with the outputs as the vector lanes (8-byte elements
  /// as their high and low 32 bits), exact, so the same value as fold().
  void fold_tile(acc* out, const T* p, std::int64_t ob, std::int64_t kl, std::int64_t row_stride, std::int64_t) const {
    static_assert(kPieceRows <= (std::int64_t(1) << 30));  // (2^30 sums of 32-bit parts fit int64)
    alignas(64) std::int64_t hi[kBlockOut] = {}, lo[kBlockOut] = {};
    for (std::int64_t k = 0; k < kl; ++k) {
      const T* row = p + k * row_stride;
      for (std::int64_t b = 0; b < ob; ++b) {
        if constexpr (sizeof(T) == 8) {
          hi[b] += row[b] >> 32;
          lo[b] += static_cast<std::int64_t>(static_cast<std::uint64_t>(row[b]) & 0xffffffffu);
        } else {
          lo[b] += row[b];
        }
      }
    }
    for (std::int64_t b = 0; b < ob; ++b) out[b] = ops::i128(hi[b]) * (ops::i128(1) << 32) + lo[b];
  }
  acc combine(acc a, acc b) const { return a + b; }
  void write(std::int64_t o, acc a, std::int64_t len) const {
    if (biased) a += static_cast<acc>(len) * (static_cast<acc>(1) << 63);
    if (mean) {
      if (len == 0) {
        if (out_type == dtype::float32) put(out, o, std::numeric_limits<float>::quiet_NaN());
        else put(out, o, std::numeric_limits<double>::quiet_NaN());
        return;
      }
      std::int64_t d[5];
      auto u = static_cast<ops::u128>(a);
      for (int i = 0; i < 4; ++i) d[i] = static_cast<std::int64_t>(static_cast<std::uint64_t>(u >> (32 * i)) & 0xffffffffu);
      d[4] = a < 0 ? -1 : 0;
      if (out_type == dtype::float32)
        put(out, o, ex::divide_round<float>(d, 5, 0, ex::seen_not_neg_zero, static_cast<std::uint64_t>(len)));
      else
        put(out, o, ex::divide_round<double>(d, 5, 0, ex::seen_not_neg_zero, static_cast<std::uint64_t>(len)));
      return;
    }
    if (to_u64) {
      const bool fits = a >= 0 && (a >> 64) == 0;
      if (!fits) log->note(o);
      put(out, o, fits ? static_cast<std::uint64_t>(a) : std::uint64_t(0));
      return;
    }
    int st = 0;
    std::int64_t v = ops::narrow_i64(a, st);
    if (st) log->note(o);
    put(out, o, v);
  }
};

// Exact floating sum (and mean): a superaccumulator per output, the 1-D exact fold per run.
template <class T> struct exact_sum_op {
  using elem = T;
  using L = std::conditional_t<std::is_same_v<T, float>, ex::f32_sum_layout, ex::f64_sum_layout>;
  struct acc {
    std::int64_t d[L::digits];
    unsigned flags;
  };
  void* out;
  dtype out_type;
  bool mean;
  acc identity() const {
    acc a;
    std::memset(&a, 0, sizeof a);
    return a;
  }
  void fold(acc& a, const T* x, std::int64_t n, std::int64_t) const {
    exact_sum_fold(std::is_same_v<T, float> ? dtype::float32 : dtype::float64, x, n, a.d, a.flags);
  }
  acc combine(acc a, const acc& b) const {
    for (int i = 0; i < L::digits; ++i) a.d[i] += b.d[i];
    a.flags |= b.flags;
    ex::normalize<L::digits>(a.d);
    return a;
  }
  /// Outputs of 1 to kCertifiedLen elements (a tall, narrow matrix's rows, short segments):
  /// the certified pass first (ops/certified.hpp, the GPU shape layer's: TwoSum into a
  /// three-double state with a running error bound, rounded when the state is exact or its
  /// interval proves the correctly rounded value, round_state / divide_state), and false,
  /// for the superaccumulator, only where it cannot prove it (ties of inexact sums, deep
  /// cancellation, overflow, NaN, infinities). The same bits either way. Before, each output
  /// cleared, folded and rounded a superaccumulator of ~1.1 KB: 130 ns for a one-element row
  /// (2^24 rows of 1 element: 2.2 s exact against 0.31 s fast; the mean 6.3 s). Now 0.25 s
  /// and 0.28 s on this project's 2-core machine; rows of 64: 88 ns where 219 (mean 456). The
  /// certified pass costs ~1.25 ns an element, the superaccumulator ~250 ns an output plus
  /// ~0.1: kCertifiedLen = 128 (rows of 128: 160 ns).
  /// Contiguous outputs of any length (rows, segments) of at least kVectorLen elements take
  /// the vectorised certified state instead (certified_sum_state, AVX2 lanes: ~0.3 ns an
  /// element where the scalar pass takes ~1.25 and the superaccumulator ~0.6 plus its setup).
  bool write_certified(std::int64_t o, const T* p, std::int64_t n, std::int64_t stride) const {
    namespace ce = ops::certified;
    if (n == 1) {  // the sum and the mean of one element: that element, rounded once to Out
      if (out_type == dtype::float32) put(out, o, static_cast<float>(p[0]));
      else put(out, o, static_cast<double>(p[0]));
      return true;
    }
    constexpr std::int64_t kVectorLen = 32;
    if (stride == 1 && n >= kVectorLen) {
      ce::state st;
      if (certified_sum_state(std::is_same_v<T, float> ? dtype::float32 : dtype::float64, p, n, st))
        return write_state(o, st, n);
    }
    if (n > kCertifiedLen) return false;
    if (stride == 1 && n >= 8) {  // four interleaved K = 2 states first (independent chains); what
                                  // they do not prove (mostly exact ties) goes on to K = 3 below
      ce::state q[4];
      std::int64_t k = 0;
      for (; k + 4 <= n; k += 4)
        for (int j = 0; j < 4; ++j) ce::add<2>(q[j], static_cast<double>(p[k + j]));
      for (; k < n; ++k) ce::add<2>(q[0], static_cast<double>(p[k]));
      if (write_state(o, ce::merge<2>(ce::merge<2>(q[0], q[1]), ce::merge<2>(q[2], q[3])), n)) return true;
    }
    ce::state st;
    for (std::int64_t k = 0; k < n; ++k) ce::add<3>(st, static_cast<double>(p[k * stride]));
    return write_state(o, st, n);
  }
  /// The certified state of the contiguous p[0, n) (certified_sum_state); false where the
  /// certified pass does not run.
  static bool piece_state(const T* p, std::int64_t n, ops::certified::state& st) {
    return certified_sum_state(std::is_same_v<T, float> ? dtype::float32 : dtype::float64, p, n, st);
  }
  /// Writes output o from the certified state of its n >= 1 elements when the state proves the
  /// correctly rounded result (round_state / divide_state); else false, nothing written.
  bool write_state(std::int64_t o, const ops::certified::state& st, std::int64_t n) const {
    namespace ce = ops::certified;
    auto emit = [&]<class Out>() {
      Out r;
      const bool ok = mean ? ce::divide_state<Out>(st, static_cast<std::uint64_t>(n), r) : ce::round_state<Out>(st, r);
      if (ok) put(out, o, r);
      return ok;
    };
    return out_type == dtype::float32 ? emit.template operator()<float>() : emit.template operator()<double>();
  }
  /// A band of columns (engine::columns_certified; adjacent outputs contiguous, kl >= 1 rows):
  /// the certified states (ops::certified::add<2>: hi by TwoSum, its errors into lo with the
  /// running bound; the terms in row order) of its ob outputs, with the outputs as the vector
  /// lanes (certify_columns), into st[0, ob).
  static void certify_tile(ops::certified::state* st, const T* p, std::int64_t ob, std::int64_t kl,
                           std::int64_t row_stride) {
    if (cpu_has_avx2()) certify_columns_avx2(st, p, ob, kl, row_stride);
    else certify_columns<16>(st, p, ob, kl, row_stride);
  }
  [[gnu::target("avx2")]] static void certify_columns_avx2(ops::certified::state* st, const T* p, std::int64_t ob,
                                                          std::int64_t kl, std::int64_t row_stride) {
    certify_columns<32>(st, p, ob, kl, row_stride);
  }
  // Two VB-byte vectors of outputs at a time, their states in registers over all kl rows (GCC
  // / Clang vector types; TwoSum spelt out); the last outputs one at a time.
  template <int VB>
  [[gnu::always_inline]] static inline void certify_columns(ops::certified::state* st, const T* p, std::int64_t ob,
                                                            std::int64_t kl, std::int64_t row_stride) {
    constexpr int L = VB / 8, G = 2;
    // (element types spelt dependent on T: GCC 12 drops vector_size(VB) from a non-dependent one)
    typedef decltype(T{} * 1.0) vd __attribute__((vector_size(VB)));
    typedef std::make_signed_t<decltype(sizeof(T))> vi __attribute__((vector_size(VB)));
    typedef T vt __attribute__((vector_size(L * sizeof(T))));
    const vi abs_mask = vi{} + std::numeric_limits<std::int64_t>::max();
    // Rows in chunks of kRows = 16, the groups' states in registers within a chunk, in arrays
    // between; the band is up to kWideOut outputs wide (columns_certified). Each group
    // advances 16 row streams by one line, and the next group reads the lines beside them, so
    // every element is read once in nearly row order. (Before: tiles of 64 outputs in chunks
    // of 256 rows, each line of a group a row apart: perf put 70% of the time on the loads,
    // which the hardware prefetchers do not follow at that stride; 1000 x 10000 took 14 ms
    // and 100000 x 100 25-43 ms, now 5 and 6, NumPy 4.5 and 3.8.) kAhead: a software
    // prefetch that many rows ahead.
    constexpr std::int64_t kRows = 16, kAhead = 16;
    const std::int64_t full = ob - ob % (G * L);
    std::vector<double> arrays(static_cast<std::size_t>(4 * ob));
    double *hs = arrays.data(), *ms = hs + ob, *ls = ms + ob, *bs_ = ls + ob;
    for (std::int64_t b = 0; b < ob; ++b) {
      hs[b] = -0.0;
      ms[b] = ls[b] = bs_[b] = 0;
    }
    // The last ob - full outputs: by one more group over the last G * L outputs, with states of
    // its own (the outputs it shares with the group before are computed twice, the same way:
    // the same states), or one at a time when the tile has fewer than G * L outputs.
    const bool tail = full < ob && ob >= G * L;
    const std::int64_t tb = ob - G * L;
    alignas(64) double ht[G * L], mt[G * L], lt[G * L], bt[G * L];
    for (int j = 0; j < G * L; ++j) {
      ht[j] = -0.0;
      mt[j] = lt[j] = bt[j] = 0;
    }
    // Rows k0 .. k1 of the G * L outputs from b0, states in hs/ms/ls/bs (their element 0 for b0).
    // (always inlined: a lambda is compiled for the baseline, not for this function's AVX2)
    auto group = [&](std::int64_t b0, std::int64_t k0, std::int64_t k1, double* hs, double* ms, double* ls, double* bs)
                     __attribute__((always_inline)) {
      vd hi[G], mid[G], lo[G], bd[G];  // (K = 2: mid stays 0, kept for the state layout)
      for (int g = 0; g < G; ++g) {
        std::memcpy(&hi[g], hs + g * L, sizeof(vd));
        std::memcpy(&mid[g], ms + g * L, sizeof(vd));
        std::memcpy(&lo[g], ls + g * L, sizeof(vd));
        std::memcpy(&bd[g], bs + g * L, sizeof(vd));
      }
      for (std::int64_t k = k0; k < k1; ++k) {
        const T* row = p + k * row_stride + b0;
        __builtin_prefetch(row + kAhead * row_stride);
        for (int g = 0; g < G; ++g) {
          vt xt;
          std::memcpy(&xt, row + g * L, sizeof xt);
          const vd x = __builtin_convertvector(xt, vd);
          const vd s = hi[g] + x, sb = s - hi[g], e = (hi[g] - (s - sb)) + (x - sb);
          hi[g] = s;
          lo[g] += e;
          bd[g] += reinterpret_cast<vd>(reinterpret_cast<vi>(lo[g]) & abs_mask);  // |lo|
        }
      }
      for (int g = 0; g < G; ++g) {
        std::memcpy(hs + g * L, &hi[g], sizeof(vd));
        std::memcpy(ms + g * L, &mid[g], sizeof(vd));
        std::memcpy(ls + g * L, &lo[g], sizeof(vd));
        std::memcpy(bs + g * L, &bd[g], sizeof(vd));
      }
    };
    for (std::int64_t k0 = 0; k0 < kl; k0 += kRows) {
      const std::int64_t k1 = std::min(kl, k0 + kRows);
      for (std::int64_t b0 = 0; b0 < full; b0 += G * L) group(b0, k0, k1, hs + b0, ms + b0, ls + b0, bs_ + b0);
      if (tail) {
        group(tb, k0, k1, ht, mt, lt, bt);
        continue;
      }
      for (std::int64_t b = full; b < ob; ++b) {  // (a tile of fewer than G * L outputs)
        ops::certified::state a{hs[b], ms[b], ls[b], bs_[b]};
        for (std::int64_t k = k0; k < k1; ++k) ops::certified::add<3>(a, static_cast<double>(p[k * row_stride + b]));
        hs[b] = a.hi;
        ms[b] = a.mid;
        ls[b] = a.lo;
        bs_[b] = a.bound;
      }
    }
    if (tail)
      for (std::int64_t b = full; b < ob; ++b) {
        hs[b] = ht[b - tb];
        ms[b] = mt[b - tb];
        ls[b] = lt[b - tb];
        bs_[b] = bt[b - tb];
      }
    for (std::int64_t b = 0; b < ob; ++b) st[b] = {hs[b], ms[b], ls[b], bs_[b]};
  }
  void write(std::int64_t o, acc a, std::int64_t len) const {
    auto emit = [&]<class Out>() {
      Out r;
      if (mean) r = len == 0 ? std::numeric_limits<Out>::quiet_NaN()
                             : ex::divide_round<Out>(a.d, L::digits, L::base, a.flags, static_cast<std::uint64_t>(len));
      else r = len == 0 ? Out(0) : ex::round_in_place<L, Out>(a.d, a.flags);
      put(out, o, r);
    };
    if (out_type == dtype::float32) emit.template operator()<float>();
    else emit.template operator()<double>();
  }
};

// min / max and the first index within the output (ops::extreme_reducer).
template <class T, bool MAX, bool SKIP> struct extreme_op_ {
  using elem = T;
  using R = ops::extreme_reducer<T, MAX, SKIP>;
  using acc = typename R::acc_t;
  T* values;
  std::int64_t* index;
  shapes::store as = shapes::store::same;  // widened data: values written as the caller's type
  acc identity() const { return R::identity(); }
  void fold(acc& a, const T* x, std::int64_t n, std::int64_t k0) const {
    if (n >= kByValueLen) {  // blocks by value first (cpu/extreme_blocks.hpp), indices moved by k0
      acc r = index ? extreme_blocks::fold_range<R, T, true>(x, 0, n) : extreme_blocks::fold_range<R, T, false>(x, 0, n);
      if (r.index != ops::kNoIndex) r.index += k0;
      if (r.nan_index != ops::kNoIndex) r.nan_index += k0;
      a = R::combine(a, r);
      return;
    }
    if (n >= 4) {  // short runs by value first too: four interleaved bests (no index), a NaN flag,
                   // then the first element equal to the best (its value: a zero's sign is the
                   // first one's); a run holding a NaN goes element by element below
      auto pick = [](T v, T m) { return (MAX ? v > m : v < m) ? v : m; };
      T m[4] = {x[0], x[1], x[2], x[3]};
      bool nan = false;
      for (int j = 0; j < 4; ++j) nan |= ops::is_nan(m[j]);
      std::int64_t i = 4;
      for (; i + 4 <= n; i += 4)
        for (int j = 0; j < 4; ++j) {
          m[j] = pick(x[i + j], m[j]);
          nan |= ops::is_nan(x[i + j]);
        }
      for (; i < n; ++i) {
        m[0] = pick(x[i], m[0]);
        nan |= ops::is_nan(x[i]);
      }
      if (!nan) {
        const T best = pick(pick(m[1], m[0]), pick(m[3], m[2]));
        std::int64_t j = 0;
        while (!(x[j] == best)) ++j;
        acc r = R::identity();
        R::accumulate(r, x[j], k0 + j);
        a = R::combine(a, r);
        return;
      }
    }
    for (std::int64_t i = 0; i < n; ++i) R::accumulate(a, x[i], k0 + i);
  }
  /// A column tile (engine::columns, adjacent outputs contiguous): row by row, the outputs in
  /// vector lanes (cpu/extreme_blocks.hpp). Tiles of up to kTileOut outputs, also in matrices
  /// wider than that (kWideTiles): two arrays of kTileOut elements stay in L1.
  static constexpr std::int64_t kTileOut = extreme_blocks::kTileOut;
  static constexpr bool kWideTiles = true;
  void fold_tile(acc* out, const T* p, std::int64_t ob, std::int64_t kl, std::int64_t row_stride, std::int64_t k0) const {
    if (index) extreme_blocks::fold_columns<true, R, T>(out, p, ob, kl, row_stride, k0);
    else extreme_blocks::fold_columns<false, R, T>(out, p, ob, kl, row_stride, k0);
  }
  acc combine(acc a, acc b) const { return R::combine(a, b); }
  void write(std::int64_t o, acc a, std::int64_t len) const {
    int st = 0;
    auto r = R::finalize(a, st);
    T v = r.value;
    std::int64_t i = r.index;
    if (i == ops::kNoIndex) {
      i = -1;
      if constexpr (!std::numeric_limits<T>::is_integer)
        if (len > 0) v = std::numeric_limits<T>::quiet_NaN();  // only NaNs, skipped
    }
    if (values) shapes::put_value(values, o, as, v);
    if (index) index[o] = i;
  }
};

// ---- the engine -----------------------------------------------------------------------------

template <class Op> struct engine {
  using T = typename Op::elem;
  using A = typename Op::acc;
  const geometry& g;
  const Op& op;
  const T* x() const { return static_cast<const T*>(g.x); }
  std::int64_t len_of(std::int64_t o) const { return g.offsets ? g.offsets[o + 1] - g.offsets[o] : g.len; }
  std::int64_t base_of(std::int64_t o) const { return g.offsets ? g.offsets[o] : o * g.outer; }
  std::int64_t inner() const { return g.offsets ? 1 : g.inner; }

  // Folds elements k0 .. k0 + n of the run at p (stride s) into a.
  void fold_run(A& a, const T* p, std::int64_t n, std::int64_t s, std::int64_t k0, std::vector<T>& buf) const {
    if (s == 1 || n == 1) return op.fold(a, p + k0 * s, n, k0);  // (one element: the stride is never stepped)
    buf.resize(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k) buf[static_cast<std::size_t>(k)] = p[(k0 + k) * s];
    op.fold(a, buf.data(), n, k0);
  }

  // Outputs of one element each (a length-1 axis): the same fold and write per output as
  // rows(), in a plain static loop (no per-output length, scheduling or buffer work).
  void single_rows() const {
    const std::int64_t m = g.outputs;
#pragma omp parallel for schedule(static) if (m >= (1 << 16) && ::tally::detail::cpu_threads_allowed())
    for (std::int64_t o = 0; o < m; ++o) {
      const T* p = x() + base_of(o);
      if constexpr (requires { op.write_certified(o, p, 1, 1); })
        if (op.write_certified(o, p, 1, 1)) continue;
      A a = op.identity();
      op.fold(a, p, 1, 0);
      op.write(o, a, 1);
    }
  }

  // Contiguous outputs (rows of a row-major matrix, segments) usually follow each other in
  // memory, and each ends in mispredicted branches that hold up the loads behind them: the
  // output after the next one (n elements from `end`) is prefetched before this one is
  // reduced, for outputs of kRowAheadMin to kRowAheadBytes bytes (measured, one thread,
  // exact sums: (100000, 100) 15.1 -> 8.5 ms, (20000, 500) 9.5 -> 8.3, fast 5.8 -> 3.8; rows of
  // 8 KB and more were as fast or slower with it). (The addresses may lie past x's end: a
  // prefetch never faults.)
  static constexpr std::int64_t kRowAheadBytes = extreme_blocks::kRowAheadBytes, kRowAheadMin = 256;
  static void prefetch_after(const T* end, std::int64_t n) {
    const std::int64_t bytes = n * static_cast<std::int64_t>(sizeof(T));
    if (bytes > kRowAheadBytes) return;
    if (bytes < kRowAheadMin) return;
    const char* p = reinterpret_cast<const char*>(end + n);
    for (std::int64_t b = 0; b < bytes; b += 64) __builtin_prefetch(p + b);
  }

  // Pairwise combination of part[first + i * step], i < count, in a fixed order.
  A tree(std::vector<A>& part, std::int64_t first, std::int64_t step, std::int64_t count) const {
    for (std::int64_t w = 1; w < count; w *= 2)
      for (std::int64_t i = 0; i + w < count; i += 2 * w)
        part[static_cast<std::size_t>(first + i * step)] =
            op.combine(part[static_cast<std::size_t>(first + i * step)], part[static_cast<std::size_t>(first + (i + w) * step)]);
    return count ? part[static_cast<std::size_t>(first)] : op.identity();
  }

  void rows() const {
    const std::int64_t s = inner();
    const std::int64_t m = g.outputs;
    if (!g.offsets && g.len == 1) return single_rows();
#pragma omp parallel if ((g.n >= (1 << 16) || m >= 4096) && ::tally::detail::cpu_threads_allowed())
    {
      std::vector<T> buf;
#pragma omp for schedule(dynamic, 64)
      for (std::int64_t o = 0; o < m; ++o) {
        std::int64_t n = len_of(o);
        if (n > kPiece) continue;
        if (s == 1) prefetch_after(x() + base_of(o) + n, n);
        if constexpr (requires { op.write_certified(o, x(), n, s); })
          if (n > 0 && (n <= kCertifiedLen || s == 1) && op.write_certified(o, x() + base_of(o), n, s)) continue;
        A a = op.identity();
        if (n > 0) fold_run(a, x() + base_of(o), n, s, 0, buf);
        op.write(o, a, n);
      }
    }
    if (!g.offsets && g.len <= kPiece) return;  // (no long output)
    for (std::int64_t o = 0; o < m; ++o) {  // long outputs: their pieces in parallel
      std::int64_t n = len_of(o);
      if (n <= kPiece) continue;
      std::int64_t np = (n + kPiece - 1) / kPiece;
      const T* p = x() + base_of(o);
      if constexpr (requires { op.piece_state(p, n, std::declval<ops::certified::state&>()); })
        if (s == 1 && write_long_certified(o, p, n, np)) continue;
      std::vector<A> part(static_cast<std::size_t>(np));
#pragma omp parallel if (::tally::detail::cpu_threads_allowed())
      {
        std::vector<T> buf;
#pragma omp for schedule(static)
        for (std::int64_t q = 0; q < np; ++q) {
          A a = op.identity();
          fold_run(a, p, std::min(kPiece, n - q * kPiece), s, q * kPiece, buf);
          part[static_cast<std::size_t>(q)] = a;
        }
      }
      op.write(o, tree(part, 0, 1, np), n);
    }
  }

  // A long contiguous output of an op with certified states (exact sums and means): the
  // pieces' states in parallel, merged in piece order, written where they prove the result;
  // false (nothing written) where they do not, or where the certified pass does not run.
  bool write_long_certified(std::int64_t o, const T* p, std::int64_t n, std::int64_t np) const {
    namespace ce = ops::certified;
    std::vector<ce::state> st(static_cast<std::size_t>(np));
    bool on = true;
#pragma omp parallel for schedule(static) reduction(&& : on) if (::tally::detail::cpu_threads_allowed())
    for (std::int64_t q = 0; q < np; ++q)  // (every piece gives the same answer: whether the pass runs)
      on = op.piece_state(p + q * kPiece, std::min(kPiece, n - q * kPiece), st[static_cast<std::size_t>(q)]) && on;
    if (!on) return false;
    ce::state total;
    for (const ce::state& a : st) total = ce::merge<2>(total, a);
    return op.write_state(o, total, n);
  }

  // Column mode for the exact sums and means (ops with certify_tile) of matrices whose
  // adjacent outputs are contiguous: each tile's certified states computed in vector lanes,
  // the tiles' states merged per output in tile order, and each output written from its state
  // where that proves the correctly rounded result; the others (ties, deep cancellation,
  // NaN, infinities, overflow) by the superaccumulator over the whole column, gathered piece
  // by piece. The same bits either way (both are the correctly rounded value).
  void columns_certified() const {
    namespace ce = ops::certified;
    const std::int64_t m = g.outputs, n = g.len;
    // Bands of kWideOut outputs (certify_columns: 16 rows at a time across the band).
    const std::int64_t bw = kWideOut;
    const std::int64_t nb = (m + bw - 1) / bw, np = (n + kPieceRows - 1) / kPieceRows;
    std::vector<ce::state> st(static_cast<std::size_t>(np * m));
    std::vector<unsigned char> proved(static_cast<std::size_t>(m));
#pragma omp parallel if ((g.n >= (1 << 16)) && ::tally::detail::cpu_threads_allowed())
    {
#pragma omp for schedule(static)
      for (std::int64_t task = 0; task < nb * np; ++task) {
        const std::int64_t blk = task / np, q = task % np;
        const std::int64_t o0 = blk * bw, ob = std::min(bw, m - o0);
        const std::int64_t k0 = q * kPieceRows, kl = std::min(kPieceRows, n - k0);
        op.certify_tile(st.data() + q * m + o0, x() + k0 * g.inner + o0, ob, kl, g.inner);
      }
#pragma omp for schedule(static)
      for (std::int64_t o = 0; o < m; ++o) {
        ce::state a = st[static_cast<std::size_t>(o)];
        for (std::int64_t q = 1; q < np; ++q) a = ce::merge<3>(a, st[static_cast<std::size_t>(q * m + o)]);
        proved[static_cast<std::size_t>(o)] = op.write_state(o, a, n);
      }
      std::vector<T> buf;
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t o = 0; o < m; ++o) {
        if (proved[static_cast<std::size_t>(o)]) continue;
        A a = op.identity();
        for (std::int64_t k0 = 0; k0 < n; k0 += kPiece) {
          A piece = op.identity();
          fold_run(piece, x() + o * g.outer, std::min(kPiece, n - k0), g.inner, k0, buf);
          a = op.combine(a, piece);
        }
        op.write(o, a, n);
      }
    }
  }

  void columns() const {
    const std::int64_t m = g.outputs, n = g.len;
    if (n == 0) {
      for (std::int64_t o = 0; o < m; ++o) op.write(o, op.identity(), 0);
      return;
    }
    if constexpr (requires { op.certify_tile(nullptr, x(), m, n, g.inner); })
      if (g.outer == 1 && certified_columns()) return columns_certified();
    // Tiles of kBlockOut outputs, or all m as one where the op folds tiles in place and m is
    // at most its kTileOut.
    // Ops with kWideTiles take tiles of kTileOut outputs however wide the matrix is (halved,
    // down to kBlockOut, while there are fewer than four tiles a thread).
    std::int64_t tw = kBlockOut;
    const std::int64_t np = (n + kPieceRows - 1) / kPieceRows;
    if constexpr (requires { Op::kTileOut; })
      if (g.outer == 1) {
        if (m <= Op::kTileOut) tw = std::max(m, kBlockOut);
        else if constexpr (requires { Op::kWideTiles; }) {
          tw = Op::kTileOut;
          const std::int64_t want = 4 * static_cast<std::int64_t>(omp_get_max_threads());
          while (tw > kBlockOut && (m + tw - 1) / tw * np < want) tw /= 2;
        }
      }
    const std::int64_t nb = (m + tw - 1) / tw;
    std::vector<A> part(np > 1 ? static_cast<std::size_t>(np * m) : 0);
#pragma omp parallel if ((g.n >= (1 << 16)) && ::tally::detail::cpu_threads_allowed())
    {
      std::vector<T> buf(static_cast<std::size_t>(kBlockOut * kPieceRows));
#pragma omp for schedule(static)
      for (std::int64_t task = 0; task < nb * np; ++task) {
        const std::int64_t blk = task / np, q = task % np;
        const std::int64_t o0 = blk * tw, ob = std::min(tw, m - o0);
        const std::int64_t k0 = q * kPieceRows, kl = std::min(kPieceRows, n - k0);
        if constexpr (requires { op.fold_tile(nullptr, x(), ob, kl, g.inner, k0); })
          if (g.outer == 1) {  // adjacent outputs contiguous: the op folds the tile in place
            std::vector<A> accs(static_cast<std::size_t>(ob));
            op.fold_tile(accs.data(), x() + k0 * g.inner + o0, ob, kl, g.inner, k0);
            for (std::int64_t b = 0; b < ob; ++b) {
              if (np == 1) op.write(o0 + b, accs[b], n);
              else part[static_cast<std::size_t>(q * m + o0 + b)] = accs[b];
            }
            continue;
          }
        for (std::int64_t k = 0; k < kl; ++k) {  // row by row: adjacent outputs are close
          const T* row = x() + (k0 + k) * g.inner + o0 * g.outer;
          for (std::int64_t b = 0; b < ob; ++b) buf[static_cast<std::size_t>(b * kPieceRows + k)] = row[b * g.outer];
        }
        for (std::int64_t b = 0; b < ob; ++b) {
          if constexpr (requires { op.write_certified(o0, buf.data(), kl, 1); })
            if (np == 1 && n <= kCertifiedLen && op.write_certified(o0 + b, buf.data() + b * kPieceRows, kl, 1)) continue;
          A a = op.identity();
          op.fold(a, buf.data() + b * kPieceRows, kl, k0);
          if (np == 1) op.write(o0 + b, a, n);
          else part[static_cast<std::size_t>(q * m + o0 + b)] = a;
        }
      }
    }
    if (np > 1) {
#pragma omp parallel for schedule(static) if ((m >= 64) && ::tally::detail::cpu_threads_allowed())
      for (std::int64_t o = 0; o < m; ++o) op.write(o, tree(part, o, m, np), n);
    }
  }

  void run() const {
    auto mag = [](std::int64_t v) { return v < 0 ? -v : v; };
    bool column_mode = !g.offsets && g.outputs > 1 && mag(g.outer) < mag(g.inner);
    if (column_mode) columns();
    else rows();
  }
};

template <class Op> void go(const geometry& g, const Op& op) { engine<Op>{g, op}.run(); }

// `as`: the caller's element type when g is a widened copy (shapes_widen.hpp).
template <class T> void run_t(const geometry& g, const request& r, outcome& st, shapes::store as = shapes::store::same) {
  if (r.what == kind::extreme) {
    T* v = static_cast<T*>(r.out);
    bool mx = r.eop == extreme_op::max, skip = r.nans == nan_policy::omit;
    if (mx && skip) go(g, extreme_op_<T, true, true>{v, r.index, as});
    else if (mx) go(g, extreme_op_<T, true, false>{v, r.index, as});
    else if (skip) go(g, extreme_op_<T, false, true>{v, r.index, as});
    else go(g, extreme_op_<T, false, false>{v, r.index, as});
    return;
  }
  bool mean = r.what == kind::mean;
  if constexpr (std::is_integral_v<T>) {
    overflow_log log;
    go(g, int_sum_op<T>{r.out, r.out_type, mean, &log, r.out_type == dtype::uint64, as == shapes::store::u64});
    st.overflow_at = log.first;
  } else {
    if (mean || r.acc == accuracy::exact) go(g, exact_sum_op<T>{r.out, r.out_type, mean});
    else go(g, fast_sum_op<T>{r.out, r.out_type});
  }
}

// A narrow element type (shapes_widen.hpp): its elements widened into a compact copy, then
// the copy reduced as its wide type W.
template <class Src, class W> void run_widened(const geometry& g, const request& r, outcome& st) {
  std::vector<W> copy(static_cast<std::size_t>(g.n));
  const shapes::source_map at(g);
  const Src* x = static_cast<const Src*>(g.x);
#pragma omp parallel for schedule(static) if ((g.n >= (1 << 16)) && ::tally::detail::cpu_threads_allowed())
  for (std::int64_t i = 0; i < g.n; ++i) {
    if constexpr (std::is_same_v<Src, bool>)
      copy[static_cast<std::size_t>(i)] = shapes::widen_bool(reinterpret_cast<const std::uint8_t*>(x)[at(i)]);
    else
      copy[static_cast<std::size_t>(i)] = shapes::widen_one(x[at(i)]);
  }
  run_t<W>(shapes::compact(g, copy.data()), r, st, shapes::store_of(g.type));
}

}  // namespace

void shapes_run(const geometry& g, const request& r, outcome& st) {
  switch (g.type) {
    case dtype::float32: return run_t<float>(g, r, st);
    case dtype::float64: return run_t<double>(g, r, st);
    case dtype::int32: return run_t<std::int32_t>(g, r, st);
    case dtype::int64: return run_t<std::int64_t>(g, r, st);
    case dtype::float16: return run_widened<float16, float>(g, r, st);
    case dtype::bfloat16: return run_widened<bfloat16, float>(g, r, st);
    case dtype::int8: return run_widened<std::int8_t, std::int32_t>(g, r, st);
    case dtype::int16: return run_widened<std::int16_t, std::int32_t>(g, r, st);
    case dtype::uint8: return run_widened<std::uint8_t, std::int32_t>(g, r, st);
    case dtype::uint16: return run_widened<std::uint16_t, std::int32_t>(g, r, st);
    case dtype::bool_: return run_widened<bool, std::int32_t>(g, r, st);
    case dtype::uint32: return run_widened<std::uint32_t, std::int64_t>(g, r, st);
    case dtype::uint64: return run_widened<std::uint64_t, std::int64_t>(g, r, st);
  }
}

}  // namespace tally::cpu
