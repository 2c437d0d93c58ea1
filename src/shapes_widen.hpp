// The shape layer's narrow element types (float16, bfloat16, int8, int16, uint8, uint16,
// uint32, uint64, bool): a backend widens them, exactly, into a compact copy of a type its
// kernels read (float32, int32 or int64), runs that, and writes the results in the caller's
// types. Shared by src/cpu/shapes.cpp and src/cuda/shapes.cu, so both backends read the same
// copy in the same layout (and give the same bits where the four core types do). The CUDA
// backend reads rows, columns and segments of all nine in place (src/cuda/shapes_narrow.cu,
// shapes_narrow_int.cu: widen_one on each element as it is loaded) and widens only the other
// layouts and a few exact float cases (docs/types.md).
//
//   float16, bfloat16          -> float32   (every value exact: to_float)
//   int8, int16, uint8, uint16 -> int32     (exact)
//   bool                       -> int32     (0 or 1; any nonzero byte reads as 1)
//   uint32                     -> int64     (exact)
//   uint64                     -> int64     x - 2^63 (the bits x ^ 2^63: order-preserving)
//
// uint64's bias is undone where the results are written: a sum or mean adds len * 2^63 to its
// exact 128-bit sum (exact: |sum| <= len * 2^63 < 2^127), a min/max flips the bit back.
#pragma once

#include <cstdint>
#include <limits>

#include "shapes_backend.hpp"
#include "tally/types.hpp"

namespace tally::shapes {

/// The type a backend reads elements of type t as (t itself for the four core types).
constexpr dtype wide_of(dtype t) noexcept {
  switch (t) {
    case dtype::float16:
    case dtype::bfloat16: return dtype::float32;
    case dtype::int8:
    case dtype::int16:
    case dtype::uint8:
    case dtype::uint16:
    case dtype::bool_: return dtype::int32;
    case dtype::uint32:
    case dtype::uint64: return dtype::int64;
    default: return t;
  }
}

/// How min/max values of a widened input are written back (`same`: not widened).
enum class store : std::uint8_t { same, f16, bf16, i8, i16, u8, u16, b8, u32, u64 };

constexpr store store_of(dtype t) noexcept {
  switch (t) {
    case dtype::float16: return store::f16;
    case dtype::bfloat16: return store::bf16;
    case dtype::int8: return store::i8;
    case dtype::int16: return store::i16;
    case dtype::uint8: return store::u8;
    case dtype::uint16: return store::u16;
    case dtype::bool_: return store::b8;
    case dtype::uint32: return store::u32;
    case dtype::uint64: return store::u64;
    default: return store::same;
  }
}

/// One element widened (Src: the C++ type of a narrow dtype; bool is read as its byte).
template <class Src> TALLY_TYPES_HD auto widen_one(const Src& v) {
  if constexpr (std::is_same_v<Src, float16> || std::is_same_v<Src, bfloat16>) return to_float(v);
  else if constexpr (std::is_same_v<Src, std::uint64_t>) return static_cast<std::int64_t>(v ^ (std::uint64_t(1) << 63));
  else if constexpr (std::is_same_v<Src, std::uint32_t>) return static_cast<std::int64_t>(v);
  else return static_cast<std::int32_t>(v);
}
/// bool's byte (NumPy: 0 or 1; any other nonzero value counts as true).
TALLY_TYPES_HD inline std::int32_t widen_bool(std::uint8_t byte) { return byte != 0 ? 1 : 0; }

/// Writes min/max value v (of the wide type W) at values[o] as the caller's type. Integers are
/// saturated: the values of real elements are always in range, and the wide type's empty
/// result (its highest for min, lowest for max) becomes the narrow type's (bool: true / false).
template <class W> TALLY_TYPES_HD void put_value(void* values, std::int64_t o, store s, W v) {
  if constexpr (std::is_same_v<W, float>) {
    if (s == store::f16) static_cast<float16*>(values)[o] = to_float16(v);  // (exact; NaN: the canonical 0x7e00)
    else if (s == store::bf16) static_cast<bfloat16*>(values)[o] = to_bfloat16(v);
    else static_cast<float*>(values)[o] = v;
  } else if constexpr (std::is_same_v<W, std::int32_t> || std::is_same_v<W, std::int64_t>) {
    auto sat = [&](auto lo, auto hi) {
      using N = decltype(lo);
      return v < static_cast<W>(lo) ? lo : v > static_cast<W>(hi) ? hi : static_cast<N>(v);
    };
    switch (s) {
      case store::i8: static_cast<std::int8_t*>(values)[o] = sat(std::int8_t(-128), std::int8_t(127)); break;
      case store::i16: static_cast<std::int16_t*>(values)[o] = sat(std::int16_t(-32768), std::int16_t(32767)); break;
      case store::u8: static_cast<std::uint8_t*>(values)[o] = sat(std::uint8_t(0), std::uint8_t(255)); break;
      case store::u16: static_cast<std::uint16_t*>(values)[o] = sat(std::uint16_t(0), std::uint16_t(65535)); break;
      case store::b8: static_cast<std::uint8_t*>(values)[o] = sat(std::uint8_t(0), std::uint8_t(1)); break;
      case store::u32:
        static_cast<std::uint32_t*>(values)[o] = sat(std::uint32_t(0), std::uint32_t(0xffffffffu));
        break;
      case store::u64:
        static_cast<std::uint64_t*>(values)[o] = static_cast<std::uint64_t>(v) ^ (std::uint64_t(1) << 63);
        break;
      default: static_cast<W*>(values)[o] = v; break;
    }
  } else {
    static_cast<W*>(values)[o] = v;
  }
}

/// The widened copy's geometry: g's elements in a compact array, column mode kept (element k
/// of output o at k * outputs + o when g reads its outputs as columns, else at o * len + k;
/// segments: the same offsets over the copy of x).
inline geometry compact(const geometry& g, const void* copy) {
  geometry c = g;
  c.x = copy;
  c.type = wide_of(g.type);
  if (g.offsets) return c;
  auto mag = [](std::int64_t v) { return v < 0 ? -v : v; };
  const bool column_mode = g.outputs > 1 && mag(g.outer) < mag(g.inner);
  c.outer = g.outputs > 1 ? (column_mode ? 1 : g.len) : 0;
  c.inner = g.len > 1 ? (column_mode ? g.outputs : 1) : 0;
  return c;
}

/// Where element i of the compact copy (compact(g, ...)) is in g's x, in elements.
struct source_map {
  std::int64_t outputs, len, outer, inner;
  bool column_mode, contiguous;
  explicit source_map(const geometry& g) : outputs(g.outputs), len(g.len), outer(g.outer), inner(g.inner) {
    auto mag = [](std::int64_t v) { return v < 0 ? -v : v; };
    column_mode = !g.offsets && g.outputs > 1 && mag(g.outer) < mag(g.inner);
    contiguous = g.offsets != nullptr || g.n <= 1 || (column_mode ? (g.outer == 1 && g.inner == g.outputs)
                                                                 : ((g.outputs <= 1 || g.outer == g.len) && (g.len <= 1 || g.inner == 1)));
  }
  TALLY_TYPES_HD std::int64_t operator()(std::int64_t i) const {
    if (contiguous) return i;
    if (column_mode) return (i % outputs) * outer + (i / outputs) * inner;
    return (i / len) * outer + (i % len) * inner;
  }
};

}  // namespace tally::shapes
