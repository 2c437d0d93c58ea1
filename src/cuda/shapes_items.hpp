// The order in which the v3 rows kernel's persistent blocks take its work items
// (src/cuda/shapes_v3.cuh): items [0, tiles) are tiles, the rest groups of short outputs. A
// plain function of integers, so the CPU tests check it without a GPU.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define TALLY_ITEMS_HD __host__ __device__ __forceinline__
#else
#define TALLY_ITEMS_HD inline
#endif

namespace tally::cuda::shapes_k {

/// The item order of tuning::shapes_v3_plan::item_order.
enum item_order : int {
  tiles_first = 0,   // the tiles, then the group items
  groups_first = 1,  // the group items, then the tiles
  interleaved = 2,   // the tiles spread evenly among the group items (tile j at position floor(j items / tiles))
};

/// The item taken at position `taken` (0 <= taken < items) of the order: a bijection of
/// [0, items), so every item is taken exactly once whatever the order. What an item computes
/// does not depend on when it is taken, so the order never changes the bits.
///
/// interleaved: with I = items and T = tiles (0 < T <= I), the tiles sit at the positions
/// p_j = floor(j I / T), strictly increasing since I >= T; the tiles before position k number
/// c = min(T, ceil(k T / I)), so k holds tile c when p_c == k, else group item k - c.
TALLY_ITEMS_HD std::int64_t item_at(std::int64_t taken, std::int64_t tiles, std::int64_t items, int order) {
  const std::int64_t groups = items - tiles;
  if (order == groups_first) return taken < groups ? tiles + taken : taken - groups;
  // (past 2^62 for items x tiles, the products below could overflow: tiles first)
  if (order != interleaved || tiles == 0 || groups == 0 || items > (std::int64_t(1) << 62) / tiles) return taken;
  std::int64_t c = (taken * tiles + items - 1) / items;  // ceil(taken tiles / items)
  if (c > tiles) c = tiles;
  if (c < tiles && c * items / tiles == taken) return c;
  return tiles + (taken - c);
}

}  // namespace tally::cuda::shapes_k
