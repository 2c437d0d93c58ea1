// The shape layer's plan (src/cuda/shapes_tuning.hpp, a private header: tally is a static
// library): bad plans are refused by name and leave the plan in force unchanged (no GPU
// needed); on a GPU, the plan fields documented as never changing the bits do not.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cuda/shapes_items.hpp"
#include "cuda/shapes_tuning.hpp"
#include "device_buffer.hpp"
#include "tally/tally.hpp"
#include "tally/types.hpp"

namespace {

namespace tn = tally::cuda::tuning;

bool same(const tn::shapes_v3_plan& a, const tn::shapes_v3_plan& b) {
  return a.tile == b.tile && a.seg_tile == b.seg_tile && a.seg_split == b.seg_split && a.seg_lanes == b.seg_lanes && a.few_lanes == b.few_lanes && a.block_row_len == b.block_row_len &&
         a.heavy_lane_len == b.heavy_lane_len &&
         a.seg_block_len == b.seg_block_len && a.seg_flat_len == b.seg_flat_len &&
         a.blocks_per_sm == b.blocks_per_sm && a.col_blocks == b.col_blocks && a.col_wave == b.col_wave && a.byte_col_wide == b.byte_col_wide && a.short_col_wide == b.short_col_wide && a.half_col_wide == b.half_col_wide && a.f16_in_place == b.f16_in_place && a.half_gated == b.half_gated && a.half_fast_col_blocks == b.half_fast_col_blocks && a.item_order == b.item_order && a.tile_probe == b.tile_probe &&
         a.cert_cols == b.cert_cols && a.col_run == b.col_run && a.pdl == b.pdl &&
         a.row_stages == b.row_stages && a.gate_blocks == b.gate_blocks &&
         a.cert_col_waves == b.cert_col_waves && a.seg_claim_ahead == b.seg_claim_ahead && a.done_fence == b.done_fence &&
         a.seg_check_late == b.seg_check_late && a.seg_warp_claim == b.seg_warp_claim && a.check_end == b.check_end;
}

TEST(ShapesPlan, BadPlansAreRefusedByNameAndChangeNothing) {
  const tn::shapes_v3_plan before = tn::shapes_v3_params();
  struct bad {
    const char* field;
    void (*change)(tn::shapes_v3_plan&);
  };
  const bad cases[] = {
      {"tile", [](tn::shapes_v3_plan& p) { p.tile = 1023; }},
      {"tile", [](tn::shapes_v3_plan& p) { p.tile = (std::int64_t(1) << 30) + 1; }},
      {"seg_tile", [](tn::shapes_v3_plan& p) { p.seg_tile = 0; }},
      {"seg_split", [](tn::shapes_v3_plan& p) { p.seg_split = 1000; }},
      {"seg_lanes", [](tn::shapes_v3_plan& p) { p.seg_lanes = 3; }},
      {"seg_lanes", [](tn::shapes_v3_plan& p) { p.seg_lanes = 64; }},
      {"seg_tile must be at most 64 seg_split", [](tn::shapes_v3_plan& p) { p.seg_split = 1024; p.seg_tile = 65 * 1024; }},
      {"few_lanes", [](tn::shapes_v3_plan& p) { p.few_lanes = 3; }},
      {"few_lanes", [](tn::shapes_v3_plan& p) { p.few_lanes = 64; }},
      {"few_lanes", [](tn::shapes_v3_plan& p) { p.few_lanes = -1; }},
      {"block_row_len", [](tn::shapes_v3_plan& p) { p.block_row_len = 0; }},
      {"heavy_lane_len", [](tn::shapes_v3_plan& p) { p.heavy_lane_len = 0; }},
      {"heavy_lane_len", [](tn::shapes_v3_plan& p) { p.heavy_lane_len = 65537; }},
      {"seg_block_len", [](tn::shapes_v3_plan& p) { p.seg_block_len = -1; }},
      {"seg_flat_len", [](tn::shapes_v3_plan& p) { p.seg_flat_len = -1; }},
      {"seg_lanes", [](tn::shapes_v3_plan& p) { p.seg_lanes = 1; }},  // (removed in the sixteenth session)
      {"seg_lanes", [](tn::shapes_v3_plan& p) { p.seg_lanes = 2; }},
      {"blocks_per_sm", [](tn::shapes_v3_plan& p) { p.blocks_per_sm = 65; }},
      {"col_blocks", [](tn::shapes_v3_plan& p) { p.col_blocks = 0; }},
      {"col_blocks", [](tn::shapes_v3_plan& p) { p.col_blocks = (std::int64_t(1) << 20) + 1; }},
      {"col_wave", [](tn::shapes_v3_plan& p) { p.col_wave = 2; }},
      {"col_wave", [](tn::shapes_v3_plan& p) { p.col_wave = -1; }},
      {"byte_col_wide", [](tn::shapes_v3_plan& p) { p.byte_col_wide = 2; }},
      {"byte_col_wide", [](tn::shapes_v3_plan& p) { p.byte_col_wide = -1; }},
      {"short_col_wide", [](tn::shapes_v3_plan& p) { p.short_col_wide = 2; }},
      {"half_col_wide", [](tn::shapes_v3_plan& p) { p.half_col_wide = -1; }},
      {"f16_in_place", [](tn::shapes_v3_plan& p) { p.f16_in_place = 2; }},
      {"half_gated", [](tn::shapes_v3_plan& p) { p.half_gated = 2; }},
      {"half_gated", [](tn::shapes_v3_plan& p) { p.half_gated = -1; }},
      {"half_fast_col_blocks", [](tn::shapes_v3_plan& p) { p.half_fast_col_blocks = 0; }},
      {"half_fast_col_blocks", [](tn::shapes_v3_plan& p) { p.half_fast_col_blocks = (std::int64_t(1) << 20) + 1; }},
      {"item_order", [](tn::shapes_v3_plan& p) { p.item_order = 3; }},
      {"item_order", [](tn::shapes_v3_plan& p) { p.item_order = -1; }},
      {"tile_probe", [](tn::shapes_v3_plan& p) { p.tile_probe = 2; }},
      {"seg_claim_ahead", [](tn::shapes_v3_plan& p) { p.seg_claim_ahead = 3; }},
      {"seg_claim_ahead", [](tn::shapes_v3_plan& p) { p.seg_claim_ahead = -1; }},
      {"done_fence", [](tn::shapes_v3_plan& p) { p.done_fence = 2; }},
      {"done_fence", [](tn::shapes_v3_plan& p) { p.done_fence = -1; }},
      {"check_end", [](tn::shapes_v3_plan& p) { p.check_end = 3; }},
      {"seg_check_late", [](tn::shapes_v3_plan& p) { p.seg_check_late = 2; }},
      {"seg_warp_claim", [](tn::shapes_v3_plan& p) { p.seg_warp_claim = -1; }},
      {"seg_warp_claim", [](tn::shapes_v3_plan& p) { p.seg_warp_claim = 65; }},
      {"seg_lanes", [](tn::shapes_v3_plan& p) { p.seg_lanes = -1; }},  // (removed in the forty-sixth session)
      {"cert_cols", [](tn::shapes_v3_plan& p) { p.cert_cols = 2; }},
      {"cert_cols", [](tn::shapes_v3_plan& p) { p.cert_cols = -2; }},
      {"col_run", [](tn::shapes_v3_plan& p) { p.col_run = 2; }},
      {"pdl", [](tn::shapes_v3_plan& p) { p.pdl = -1; }},
      {"row_stages", [](tn::shapes_v3_plan& p) { p.row_stages = 2; }},
      {"gate_blocks", [](tn::shapes_v3_plan& p) { p.gate_blocks = -1; }},
      {"gate_blocks", [](tn::shapes_v3_plan& p) { p.gate_blocks = 17; }},
      {"cert_col_waves", [](tn::shapes_v3_plan& p) { p.cert_col_waves = 0; }},
      {"cert_col_waves", [](tn::shapes_v3_plan& p) { p.cert_col_waves = 65; }},
  };
  for (const bad& c : cases) {
    tn::shapes_v3_plan p = before;
    c.change(p);
    try {
      tn::set_shapes_v3_params(p);
      ADD_FAILURE() << "a plan with a bad " << c.field << " was accepted";
    } catch (const tally::error& e) {
      EXPECT_EQ(e.code(), tally::errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(c.field), std::string::npos) << e.what();
    }
    EXPECT_TRUE(same(tn::shapes_v3_params(), before)) << c.field;
  }
}

TEST(ShapesPlan, AGoodPlanIsKeptUntilReplaced) {
  const tn::shapes_v3_plan before = tn::shapes_v3_params();
  tn::shapes_v3_plan p = before;
  p.tile = 1024;
  p.seg_tile = 1 << 30;
  p.seg_split = 1 << 24;
  p.seg_lanes = 8;
  p.few_lanes = 4;
  p.block_row_len = 1;
  p.heavy_lane_len = 1;
  p.seg_block_len = 0;
  p.seg_flat_len = 1000;
  p.blocks_per_sm = -1;
  p.col_blocks = 1;
  p.col_wave = 0;
  p.byte_col_wide = 0;
  p.short_col_wide = 0;
  p.half_col_wide = 0;
  p.f16_in_place = 0;
  p.half_gated = 0;
  p.half_fast_col_blocks = 77;
  p.item_order = 2;
  p.tile_probe = 0;
  p.seg_claim_ahead = 2;
  tn::set_shapes_v3_params(p);
  EXPECT_TRUE(same(tn::shapes_v3_params(), p));
  for (const int lanes : {1, 2, 8, 16, 32}) {  // (every lane count the narrow kernels have)
    p.few_lanes = lanes;
    tn::set_shapes_v3_params(p);
    EXPECT_EQ(tn::shapes_v3_params().few_lanes, lanes);
  }
  tn::set_shapes_v3_params(before);
  EXPECT_TRUE(same(tn::shapes_v3_params(), before));
}

}  // namespace

// The rows kernel's item orders (cuda/shapes_items.hpp): each a bijection of [0, items), so
// every item is taken once; interleaved puts tile j at floor(j items / tiles) (evenly spread,
// the first at 0), tiles in increasing order, group items in increasing order.
TEST(ShapesPlan, ItemOrdersTakeEveryItemOnceAndInterleavedSpreadsTheTiles) {
  namespace sk = tally::cuda::shapes_k;
  const std::int64_t cases[][2] = {{0, 0}, {0, 5}, {5, 5}, {1, 1}, {1, 2}, {2, 1000}, {1024, 6267}, {1024, 1181},
                                   {7, 8}, {999, 1000}, {1000, 1001}, {3, 10}, {4096, 4096 + 157}, {65536, 65537}};
  for (const auto& c : cases) {
    const std::int64_t tiles = c[0], items = c[1];
    for (int order : {0, 1, 2}) {
      std::vector<int> seen(static_cast<std::size_t>(items), 0);
      std::int64_t last_tile = -1, last_group = tiles - 1, last_pos = -1;
      for (std::int64_t k = 0; k < items; ++k) {
        const std::int64_t it = sk::item_at(k, tiles, items, order);
        ASSERT_TRUE(it >= 0 && it < items) << tiles << " " << items << " " << order << " " << k;
        ++seen[static_cast<std::size_t>(it)];
        if (it < tiles) {
          EXPECT_EQ(it, last_tile + 1) << "tiles in order";
          last_tile = it;
          if (order == 2) {
            EXPECT_EQ(k, it * items / tiles) << tiles << " " << items;
            if (last_pos >= 0) {
              EXPECT_LE(k - last_pos, (items + tiles - 1) / tiles) << "evenly spread";
            }
            last_pos = k;
          }
        } else {
          EXPECT_EQ(it, last_group + 1) << "group items in order";
          last_group = it;
        }
      }
      for (std::int64_t i = 0; i < items; ++i) EXPECT_EQ(seen[static_cast<std::size_t>(i)], 1) << "item " << i << " order " << order;
    }
  }
  EXPECT_EQ(sk::item_at(0, 2, 10, 1), 2);  // groups first: the 8 group items (items 2..9), then tile 0
  EXPECT_EQ(sk::item_at(8, 2, 10, 1), 0);
  EXPECT_EQ(sk::item_at(5, 2, 10, 2), 1);  // interleaved: tiles at 0 and 5
  EXPECT_EQ(sk::item_at(1, 2, 10, 2), 2);
}

// TALLY_SHAPES_PLAN's form (tests run the GPU shape suite under other plans with it): named
// fields parsed, the rest left at their defaults; a bad item refused by what is wrong with it.
TEST(ShapesPlan, PlanTextIsParsedAndBadItemsAreRefusedByName) {
  const tn::shapes_v3_plan p = tn::parse_shapes_plan("tile=1024,seg_lanes=4,item_order=2,tile_probe=0");
  EXPECT_EQ(p.tile, 1024);
  EXPECT_EQ(p.seg_lanes, 4);
  EXPECT_EQ(p.item_order, 2);
  EXPECT_EQ(p.tile_probe, 0);
  EXPECT_EQ(p.seg_tile, tn::shapes_v3_plan{}.seg_tile);
  EXPECT_EQ(tn::parse_shapes_plan("seg_flat_len=4096").seg_flat_len, 4096);
  EXPECT_EQ(tn::parse_shapes_plan("col_wave=0").col_wave, 0);
  EXPECT_EQ(p.col_wave, 1);
  EXPECT_EQ(tn::parse_shapes_plan("byte_col_wide=0").byte_col_wide, 0);
  EXPECT_EQ(tn::parse_shapes_plan("byte_col_wide=1").byte_col_wide, 1);
  EXPECT_EQ(p.byte_col_wide, tn::shapes_v3_plan{}.byte_col_wide);  // (the default unless named)
  EXPECT_EQ(tn::parse_shapes_plan("short_col_wide=1").short_col_wide, 1);
  EXPECT_EQ(tn::parse_shapes_plan("short_col_wide=0").short_col_wide, 0);
  EXPECT_EQ(p.short_col_wide, tn::shapes_v3_plan{}.short_col_wide);
  EXPECT_EQ(tn::parse_shapes_plan("half_col_wide=1").half_col_wide, 1);
  EXPECT_EQ(tn::parse_shapes_plan("half_col_wide=0").half_col_wide, 0);
  EXPECT_EQ(p.half_col_wide, tn::shapes_v3_plan{}.half_col_wide);
  EXPECT_EQ(tn::parse_shapes_plan("f16_in_place=1").f16_in_place, 1);
  EXPECT_EQ(tn::parse_shapes_plan("f16_in_place=0").f16_in_place, 0);
  EXPECT_EQ(p.f16_in_place, tn::shapes_v3_plan{}.f16_in_place);
  EXPECT_EQ(tn::parse_shapes_plan("half_gated=0").half_gated, 0);
  EXPECT_EQ(tn::parse_shapes_plan("half_gated=1").half_gated, 1);
  EXPECT_EQ(tn::parse_shapes_plan("tile=2048").half_gated, 1);  // (the default unless named)
  EXPECT_EQ(tn::parse_shapes_plan("half_fast_col_blocks=1000").half_fast_col_blocks, 1000);
  EXPECT_EQ(p.half_fast_col_blocks, tn::shapes_v3_plan{}.half_fast_col_blocks);
  EXPECT_EQ(tn::parse_shapes_plan("heavy_lane_len=16").heavy_lane_len, 16);
  EXPECT_EQ(p.seg_flat_len, 0);  // (off unless named)
  const tn::shapes_v3_plan q = tn::parse_shapes_plan("cert_cols=1,col_run=0,pdl=0,row_stages=0,gate_blocks=2");
  EXPECT_EQ(q.cert_cols, 1);
  EXPECT_EQ(q.col_run, 0);
  EXPECT_EQ(q.pdl, 0);
  EXPECT_EQ(q.row_stages, 0);
  EXPECT_EQ(q.gate_blocks, 2);
  EXPECT_EQ(tn::parse_shapes_plan("seg_claim_ahead=2").seg_claim_ahead, 2);
  EXPECT_EQ(tn::parse_shapes_plan("tile=2048").seg_claim_ahead, 0);  // (the default unless named)
  EXPECT_EQ(tn::parse_shapes_plan("done_fence=1").done_fence, 1);
  EXPECT_EQ(tn::parse_shapes_plan("tile=2048").done_fence, 0);
  EXPECT_EQ(tn::parse_shapes_plan("check_end=0").check_end, 0);
  EXPECT_EQ(tn::parse_shapes_plan("check_end=2").check_end, 2);
  EXPECT_EQ(tn::parse_shapes_plan("tile=2048").check_end, 2);  // (the default unless named)
  EXPECT_EQ(tn::parse_shapes_plan("seg_check_late=1").seg_check_late, 1);
  EXPECT_EQ(tn::parse_shapes_plan("seg_warp_claim=64").seg_warp_claim, 64);
  EXPECT_EQ(tn::parse_shapes_plan("tile=2048").seg_warp_claim, 2);  // (the default unless named)
  EXPECT_EQ(tn::parse_shapes_plan("seg_warp_claim=0").seg_warp_claim, 0);
  EXPECT_EQ(p.cert_cols, -1);  // (the measured rule, running sums and the dependent launch by default)
  EXPECT_EQ(p.col_run, 1);
  EXPECT_EQ(p.pdl, 1);
  EXPECT_EQ(p.row_stages, 1);
  EXPECT_EQ(p.gate_blocks, 0);  // (the defaults: 8 a SM for rows and segments, 4 for columns)
  EXPECT_EQ(tn::parse_shapes_plan("gate_blocks=16").gate_blocks, 16);
  EXPECT_EQ(p.cert_col_waves, 1);
  EXPECT_EQ(tn::parse_shapes_plan("cert_col_waves=4").cert_col_waves, 4);
  const std::pair<const char*, const char*> bad[] = {
      {"tile=abc", "not name=integer"},
      {"tile", "not name=integer"},
      {"tiles=1024", "no field 'tiles'"},
      {"item_order=4294967298", "out of range"},  // would wrap to 2 as an int
      {"tile_probe=-4294967295", "out of range"},
      {"item_order=3", "item_order"},
      {"tile_probe=2", "tile_probe"},
      {"seg_stage=1", "no field 'seg_stage'"},  // (measured slower, run 43, and removed)
      {"seg_lazy_tiles=0", "no field 'seg_lazy_tiles'"},  // (forty-sixth session: lazy tiles always)
      {"seg_lanes=6", "seg_lanes"},
      {"seg_lanes=-1", "seg_lanes"},  // (lanes per item: removed, forty-sixth session)
      {"seg_flat_len=-5", "seg_flat_len"},
      {"cert_cols=3", "cert_cols"},
      {"col_run=-1", "col_run"},
      {"pdl=2", "pdl"},
      {"row_stages=-1", "row_stages"},
      {"seg_groups_first=1", "no field 'seg_groups_first'"},  // (twenty-first session: fixed by accumulator size)
      {"gate_blocks=17", "gate_blocks"},
      {"cert_col_waves=0", "cert_col_waves"},
      {"seg_warp_claim=65", "seg_warp_claim"},
      {"half_extreme_cols=1", "no field 'half_extreme_cols'"},  // (forty-sixth session: the packed way always)
      {"ext_col_blocks=3", "no field 'ext_col_blocks'"},        // (run 159: no gain, removed)
      {"ext_col_lean=1", "no field 'ext_col_lean'"},            // (run 167: won, the only form now)
      {"col_wave=2", "col_wave"},
      {"short_col_lean=1", "no field 'short_col_lean'"},        // (run 170: won, the only form now)
  };
  for (const auto& [text, why] : bad) {
    try {
      tn::parse_shapes_plan(text);
      ADD_FAILURE() << "accepted " << text;
    } catch (const tally::error& e) {
      EXPECT_EQ(e.code(), tally::errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << text << ": " << e.what();
    }
  }
}

// The fields that only change who takes which item and how it is read (item_order,
// tile_probe, seg_claim_ahead, seg_check_late, done_fence, blocks_per_sm) give the same bits as the default plan: fast float32
// and float64 segment sums and argmax (value and index), over equal, uneven and random
// segments with empty ones, from an element-aligned base and from one element past a 16-byte
// boundary (so the vector loads start mid-segment).
TEST(ShapesPlanGpu, FieldsThatKeepTheBitsKeepThem) {
  using tally::dtype;
  if (!tally::cuda_available()) GTEST_SKIP() << "no CUDA GPU";
  const tn::shapes_v3_plan base = tn::shapes_v3_params();
  std::vector<std::pair<const char*, tn::shapes_v3_plan>> plans;
  auto with = [&](const char* name, auto change) {
    tn::shapes_v3_plan p = base;
    change(p);
    plans.emplace_back(name, p);
  };
  // (every launch with tiles takes them lazily: the group items first, then the tiles
  // claimed; item_order only orders the items of the rows read a block each, which have no
  // tiles, and is kept here as a field that must not change the bits)
  with("groups first", [](auto& p) { p.item_order = 1; });
  with("interleaved", [](auto& p) { p.item_order = 2; });
  with("no probe", [](auto& p) { p.tile_probe = 0; });
  with("a block per SM, interleaved, no probe", [](auto& p) { p.blocks_per_sm = 1; p.item_order = 2; p.tile_probe = 0; });
  with("lazy tiles, a block per SM", [](auto& p) { p.blocks_per_sm = 1; });
  with("lazy tiles, a block per item, no probe", [](auto& p) { p.blocks_per_sm = -1; p.tile_probe = 0; });
  with("lazy tiles claimed once a tile's first part is read", [](auto& p) { p.seg_claim_ahead = 2; });
  with("lazy tiles claimed a tile ahead", [](auto& p) { p.seg_claim_ahead = 1; });
  with("every thread fenced before the block counts itself done", [](auto& p) { p.done_fence = 1; });
  with("the offsets checked after the group items", [](auto& p) { p.seg_check_late = 1; });
  with("warp claims (the certified pass's only: none here)", [](auto& p) { p.seg_warp_claim = 3; p.blocks_per_sm = 1; });
  // flat group items (seg_flat_len) change the bits of fast sums (the order within a
  // segment), so they are compared among themselves: the grid and the probe keep them
  tn::shapes_v3_plan flat = base;
  flat.seg_flat_len = 1 << 30;
  flat.seg_block_len = 0;
  std::vector<std::pair<const char*, tn::shapes_v3_plan>> flat_plans;
  for (auto [name, bpsm, probe] : {std::tuple{"flat, a block per SM", 1, 1}, std::tuple{"flat, a block per item, no probe", -1, 0}}) {
    tn::shapes_v3_plan p = flat;
    p.blocks_per_sm = bpsm;
    p.tile_probe = probe;
    flat_plans.emplace_back(name, p);
  }

  std::mt19937_64 gen(7);
  std::vector<std::vector<std::int64_t>> sets;
  for (std::int64_t len : {1, 3, 200, 1023, 5000}) {  // equal segments
    std::vector<std::int64_t> o{0};
    while (o.back() < 600000) o.push_back(o.back() + len);
    sets.push_back(o);
  }
  {  // one huge among tiny ones, empty ones included
    std::vector<std::int64_t> o{0};
    for (int s = 0; s < 4001; ++s) o.push_back(o.back() + (s == 2000 ? 900000 : s % 4));
    sets.push_back(o);
  }
  {  // random lengths 0..300 with runs of empty ones, and a few of 20,000-70,000
    std::vector<std::int64_t> o{0};
    for (int s = 0; s < 6000; ++s)
      o.push_back(o.back() + (s % 97 == 5 ? 20000 + static_cast<std::int64_t>(gen() % 50000)
                              : s % 13 < 3 ? 0 : static_cast<std::int64_t>(gen() % 301)));
    sets.push_back(o);
  }
  {  // mean lengths past seg_block_len (a block per segment): equal ones of 24Ki, then random
     // lengths 0..70,000 with empty ones and two past the tile (the tile items)
    std::vector<std::int64_t> o{0};
    for (int s = 0; s < 30; ++s) o.push_back(o.back() + 24576);
    sets.push_back(o);
    o.assign(1, 0);
    for (int s = 0; s < 40; ++s)
      o.push_back(o.back() + (s == 7 || s == 31 ? 150000 + static_cast<std::int64_t>(gen() % 50000)
                              : s % 5 == 2 ? 0 : static_cast<std::int64_t>(gen() % 70001)));
    sets.push_back(o);
  }
  // the sums' bits, then argmax's values and indices, of every segment
  auto run = [&](dtype t, std::size_t esz, const tt::cuda::device_buffer& x, std::size_t shift,
                 const std::vector<std::int64_t>& off) {
    const std::int64_t segs = static_cast<std::int64_t>(off.size()) - 1, n = off.back();
    const std::size_t s = static_cast<std::size_t>(segs);
    tt::cuda::device_buffer doff(off.size() * sizeof(std::int64_t)), sum(s * esz + 8), val(s * esz + 8),
        idx(s * sizeof(std::int64_t) + 8);
    doff.upload(0, off.data(), off.size() * sizeof(std::int64_t));
    const void* xp = static_cast<const char*>(x.get()) + shift;
    const auto* dof = static_cast<const std::int64_t*>(doff.get());
    tally::options fast{tally::backend::cuda, nullptr, tally::accuracy::fast};
    tally::reduce_segments(tally::reduce_op::sum, {xp, n, t, tally::memory::device}, dof, segs,
                           {sum.get(), segs, t, tally::memory::device}, fast);
    tally::extreme_segments(tally::extreme_op::max, tally::nan_policy::propagate, {xp, n, t, tally::memory::device}, dof,
                            segs, {val.get(), segs, t, tally::memory::device},
                            {idx.get(), segs, dtype::int64, tally::memory::device}, fast);
    std::vector<unsigned char> h(s * (2 * esz + sizeof(std::int64_t)));
    sum.download(h.data(), 0, s * esz);
    val.download(h.data() + s * esz, 0, s * esz);
    idx.download(h.data() + 2 * s * esz, 0, s * sizeof(std::int64_t));
    return h;
  };
  for (dtype t : {dtype::float32, dtype::float64}) {
    const std::size_t esz = t == dtype::float32 ? 4 : 8;
    std::int64_t most = 0;
    for (const auto& o : sets) most = std::max(most, o.back());
    std::vector<unsigned char> hx(static_cast<std::size_t>(most + 4) * esz);
    for (std::size_t i = 0; i < hx.size() / esz; ++i) {  // many magnitudes and both signs, no NaN
      const double v = std::ldexp(static_cast<double>(static_cast<std::int64_t>(gen() % 2000001) - 1000000),
                                  -static_cast<int>(gen() % 40));
      if (esz == 4) {
        const float f = static_cast<float>(v);
        std::memcpy(&hx[i * 4], &f, 4);
      } else {
        std::memcpy(&hx[i * 8], &v, 8);
      }
    }
    tt::cuda::device_buffer x(hx.size());
    x.upload(0, hx.data(), hx.size());
    for (const auto& off : sets) {
      for (std::size_t shift : {std::size_t(0), esz}) {
        SCOPED_TRACE(std::string(esz == 4 ? "float32" : "float64") + ", segments " + std::to_string(off.size() - 1) +
                     ", elements " + std::to_string(off.back()) + ", base shifted by " + std::to_string(shift) + " bytes");
        for (const auto& [first, others] : {std::pair{base, &plans}, std::pair{flat, &flat_plans}}) {
          tn::set_shapes_v3_params(first);
          const std::vector<unsigned char> want = run(t, esz, x, shift, off);
          for (const auto& [name, p] : *others) {
            SCOPED_TRACE(name);
            tn::set_shapes_v3_params(p);
            EXPECT_TRUE(run(t, esz, x, shift, off) == want);
          }
        }
      }
    }
  }
  tn::set_shapes_v3_params(base);
}

// Exact column sums by every column route of the GPU: the certified pass with a running sum
// per output and the next rows loaded ahead (plan col_run = 1, float32) or four rows a term
// (col_run = 0), or the exact
// kernels (cert_cols = 0), and the measured rule (-1); the gated exact kernel launched as a
// programmatic dependent of the pass or plainly (pdl), at 4 blocks a SM or 1 (gate_blocks); the pass in one wave of row chunks or three (cert_col_waves). Blocking and stream-ordered, each
// twice on the same stream (the merge slots are the stream's zero-between-calls memory, left
// zero by every call): the same bits as the cpu backend's exact result every time, and the
// stream-ordered status words (-1, -1) over stale ones. The data: one sign and one range (the
// running sums accepted), columns with one element 2^40 times the rest every 16 rows (those
// running sums refused: the rows read again), ill-conditioned columns (the pass refuses the
// outputs: the exact kernels behind the gate), and columns of signed zeros, exact
// cancellations, infinities and NaN. Tall, square-ish and wide shapes, and a width that is not
// a multiple of the 16-byte vector.
TEST(ShapesPlanGpu, ExactColumnsByEveryRouteAreCorrectlyRounded) {
  using tally::dtype;
  if (!tally::cuda_available()) GTEST_SKIP() << "no CUDA GPU";
  const tn::shapes_v3_plan base = tn::shapes_v3_params();
  std::vector<std::pair<std::string, tn::shapes_v3_plan>> plans;
  for (int cert : {-1, 0, 1})
    for (int run : {0, 1})
      for (int pdl : {1, 0}) {
        if (cert == 0 && (run != 0 || pdl == 0)) continue;  // (the exact kernels alone: neither applies)
        if (pdl == 0 && run != 1) continue;                 // (the launch is the same for every col_run)
        tn::shapes_v3_plan p = base;
        p.cert_cols = cert;
        p.col_run = run;
        p.pdl = pdl;
        plans.emplace_back("cert_cols " + std::to_string(cert) + ", col_run " + std::to_string(run) + ", pdl " + std::to_string(pdl), p);
      }
  {  // the gated exact launch at one block a SM (plan gate_blocks; row chunks for 132 blocks, not 528)
    tn::shapes_v3_plan p = base;
    p.cert_cols = 1;
    p.gate_blocks = 1;
    plans.emplace_back("cert_cols 1, gate_blocks 1", p);
    p.gate_blocks = 0;
    p.cert_col_waves = 3;  // (three waves of shorter row chunks)
    plans.emplace_back("cert_cols 1, cert_col_waves 3", p);
  }
  std::mt19937_64 gen(20261202);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto value = [&](int kind, std::int64_t i, std::int64_t j, std::int64_t rows) -> double {
    switch (kind) {
      case 0: return u(gen);  // one sign, one range
      case 1: {  // every third column: one element in 16 rows 2^40 times the others
        const double v = u(gen) + 0.5;
        return j % 3 == 0 && i % 16 == j % 16 ? std::ldexp(v, 40) : v;
      }
      case 2: {  // ill-conditioned: +-2^e pairs down the column (rows i, i + 1), a small rest
        std::uint64_t h = static_cast<std::uint64_t>((i / 2) * 131 + j) * 0x9e3779b97f4a7c15ULL;  // (splitmix64's finaliser)
        h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
        h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
        h ^= h >> 31;
        const double big = std::ldexp(1.0 + static_cast<double>(h % 1024) / 1024, static_cast<int>((h >> 10) % 90) - 10);
        if (i + 1 < rows || rows % 2 == 0) return i % 2 == 0 ? big : -big;
        return std::ldexp(u(gen), -30);
      }
      default: {  // specials by column
        const double inf = std::numeric_limits<double>::infinity();
        switch (j % 7) {
          case 1: return i == rows / 2 ? inf : u(gen);
          case 2: return i == rows - 1 ? std::numeric_limits<double>::quiet_NaN() : u(gen);
          case 3: return i == 0 ? inf : i == rows - 1 ? -inf : 1.0;
          case 4: return -0.0;
          case 5: return i % 2 == 0 ? 0.75 : -0.75;
          default: return std::ldexp(u(gen), -static_cast<int>(gen() % 100));
        }
      }
    }
  };
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes{{70001, 64}, {601, 5000}, {40, 70000}, {1000, 1027}};
  for (dtype t : {dtype::float32, dtype::float64}) {
    const std::size_t esz = t == dtype::float32 ? 4 : 8;
    for (const auto& [rows, cols] : shapes) {
      for (int kind = 0; kind < 4; ++kind) {
        SCOPED_TRACE(std::string(esz == 4 ? "float32" : "float64") + ", " + std::to_string(rows) + " x " + std::to_string(cols) +
                     ", data " + std::to_string(kind));
        const std::size_t n = static_cast<std::size_t>(rows * cols), m = static_cast<std::size_t>(cols);
        std::vector<unsigned char> hx(n * esz);
        for (std::int64_t i = 0; i < rows; ++i)
          for (std::int64_t j = 0; j < cols; ++j) {
            const double v = value(kind, i, j, rows);
            const std::size_t at = static_cast<std::size_t>(i * cols + j) * esz;
            if (esz == 4) {
              const float f = static_cast<float>(v);
              std::memcpy(&hx[at], &f, 4);
            } else {
              std::memcpy(&hx[at], &v, 8);
            }
          }
        std::vector<unsigned char> want(m * esz);
        tally::reduce_axis(tally::reduce_op::sum, {hx.data(), rows, cols, cols, 1, t, tally::memory::host}, 0,
                           {want.data(), cols, t, tally::memory::host}, tally::options{tally::backend::cpu});
        tt::cuda::device_buffer x(hx.size()), out(m * esz), st(2 * sizeof(std::int64_t));
        x.upload(0, hx.data(), hx.size());
        const tally::options gpu{tally::backend::cuda};
        for (const auto& [name, p] : plans) {
          SCOPED_TRACE(name);
          tn::set_shapes_v3_params(p);
          for (int call = 0; call < 4; ++call) {  // blocking, stream-ordered, blocking, stream-ordered
            std::vector<unsigned char> got(m * esz, 0xab);
            out.upload(0, got.data(), got.size());
            const tally::matrix_ref xr{x.get(), rows, cols, cols, 1, t, tally::memory::device};
            const tally::mutable_array_ref orf{out.get(), cols, t, tally::memory::device};
            if (call % 2 == 0) {
              tally::reduce_axis(tally::reduce_op::sum, xr, 0, orf, gpu);
            } else {
              const std::int64_t stale[2] = {5, 5};
              st.upload(0, stale, sizeof stale);
              tally::reduce_axis_async(tally::reduce_op::sum, xr, 0, orf, static_cast<std::int64_t*>(st.get()), gpu);
              std::int64_t words[2];
              st.download(words, 0, sizeof words);  // (blocking: after the call on the legacy stream)
              EXPECT_EQ(words[0], -1) << "call " << call;
              EXPECT_EQ(words[1], -1) << "call " << call;
            }
            out.download(got.data(), 0, got.size());
            for (std::size_t o = 0; o < m; ++o)
              ASSERT_EQ(std::memcmp(&got[o * esz], &want[o * esz], esz), 0) << "column " << o << ", call " << call;
          }
        }
        tn::set_shapes_v3_params(base);
      }
    }
  }
}

// bfloat16 fast column sums of row-major matrices whose rows are whole 16-byte vectors: 8
// columns a lane with scaled float64 terms (v3::cols_halves_fast_wide, plan half_col_wide=1, the
// default) give the same bits as cols_body's 16-byte vectors of float32 -> float64 terms
// (half_col_wide=0), under several row chunkings (plan col_blocks: 1, 37, the default 512,
// 4096), blocking and stream-ordered (status words (-1, -1) over stale ones), into float32 and
// float64 outputs. The data: random magnitudes over 80 binades with both signs, subnormals and
// zeros of both signs; a column of -0.0 (the sum -0.0), of values near bfloat16's largest
// (a float64 sum past float32's range: +inf in float32), one +inf, one NaN, +inf and -inf
// (NaN), and -inf twice. Each output also against the float64 sum of its column taken in
// long double: within 2^-24 of it relatively (float32) or n 2^-53 of the sum of magnitudes,
// and the specials by IEEE's rules.
TEST(ShapesPlanGpu, Bfloat16FastColumnSumsKeepTheirBitsEightColumnsALane) {
  using tally::dtype;
  if (!tally::cuda_available()) GTEST_SKIP() << "no CUDA GPU";
  const tn::shapes_v3_plan base = tn::shapes_v3_params();
  struct shape {
    std::int64_t rows, cols, rs;  // (rs: the row stride, elements)
  };
  std::mt19937_64 gen(5501);
  auto value_of = [](std::uint16_t b) {
    const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  };
  for (const shape sh : {shape{8192, 256, 256}, shape{70001, 16, 16}, shape{4099, 264, 264}, shape{600, 520, 520},
                         shape{300, 24, 32}, shape{257, 8, 8}, shape{1, 256, 256}, shape{9000, 8, 24}, shape{20000, 1024, 1024}}) {
    SCOPED_TRACE(std::to_string(sh.rows) + " x " + std::to_string(sh.cols) + ", row stride " + std::to_string(sh.rs));
    const std::size_t n = static_cast<std::size_t>(sh.rows * sh.rs);
    std::vector<std::uint16_t> hx(n, 0x7fc1);  // (the padding: NaN, never read)
    for (std::int64_t i = 0; i < sh.rows; ++i)
      for (std::int64_t j = 0; j < sh.cols; ++j) {
        std::uint16_t b = static_cast<std::uint16_t>((gen() % 2) << 15 | (gen() % 80 + 90) << 7 | gen() % 128);
        const unsigned pick = static_cast<unsigned>(gen() % 64);
        if (pick == 0) b = static_cast<std::uint16_t>(gen() % 128 | (gen() % 2) << 15);  // (a subnormal or a zero)
        if (pick == 1) b = (gen() % 2) ? 0x8000 : 0x0000;
        switch (j % 16) {
          case 9: b = 0x8000; break;                                        // -0.0
          case 10: b = static_cast<std::uint16_t>(0x7f00 | gen() % 128); break;  // near the largest
          case 11: b = i == sh.rows / 2 ? 0x7f80 : b; break;                 // one +inf
          case 12: b = i == sh.rows - 1 ? 0x7fc0 : b; break;                 // one NaN, last
          case 13: b = i == 0 ? 0x7f80 : i == sh.rows / 3 ? 0xff80 : b; break;  // +inf and -inf
          case 14: b = i == sh.rows / 4 || i == sh.rows / 5 ? 0xff80 : b; break;  // -inf twice
          default: break;
        }
        hx[static_cast<std::size_t>(i * sh.rs + j)] = b;
      }
    // the float64 references: the exact sums (long double holds these well enough for the bound)
    std::vector<long double> exact(static_cast<std::size_t>(sh.cols)), mags(static_cast<std::size_t>(sh.cols));
    std::vector<int> pinf(static_cast<std::size_t>(sh.cols)), ninf(static_cast<std::size_t>(sh.cols)), nan(static_cast<std::size_t>(sh.cols));
    for (std::int64_t i = 0; i < sh.rows; ++i)
      for (std::int64_t j = 0; j < sh.cols; ++j) {
        const float v = value_of(hx[static_cast<std::size_t>(i * sh.rs + j)]);
        const std::size_t o = static_cast<std::size_t>(j);
        if (std::isnan(v)) nan[o] = 1;
        else if (std::isinf(v)) (v > 0 ? pinf : ninf)[o] = 1;
        else {
          exact[o] += v;
          mags[o] += std::fabs(v);
        }
      }
    tt::cuda::device_buffer x(n * 2), out(static_cast<std::size_t>(sh.cols) * 8), st(2 * sizeof(std::int64_t));
    x.upload(0, hx.data(), n * 2);
    const tally::options fast{tally::backend::cuda, nullptr, tally::accuracy::fast};
    const tally::matrix_ref xr{x.get(), sh.rows, sh.cols, sh.rs, 1, dtype::bfloat16, tally::memory::device};
    for (const dtype ot : {dtype::float32, dtype::float64}) {
      const std::size_t esz = ot == dtype::float32 ? 4 : 8;
      for (const int cb : {1, 37, 384, 512, 4096}) {  // (the blocks: min(col_blocks, half_fast_col_blocks))
        std::vector<unsigned char> first;
        for (const int wide : {0, 1}) {
          tn::shapes_v3_plan p = base;
          p.half_col_wide = wide;
          p.col_blocks = cb % 2 ? cb : 4096;
          p.half_fast_col_blocks = cb % 2 ? 4096 : cb;
          tn::set_shapes_v3_params(p);
          for (int call = 0; call < 2; ++call) {  // blocking, stream-ordered
            SCOPED_TRACE(std::string(ot == dtype::float32 ? "float32" : "float64") + " outputs, col_blocks " +
                         std::to_string(cb) + ", half_col_wide " + std::to_string(wide) + (call ? ", stream-ordered" : ", blocking"));
            std::vector<unsigned char> got(static_cast<std::size_t>(sh.cols) * esz, 0xab);
            out.upload(0, got.data(), got.size());
            const tally::mutable_array_ref orf{out.get(), sh.cols, ot, tally::memory::device};
            if (call == 0) {
              tally::reduce_axis(tally::reduce_op::sum, xr, 0, orf, fast);
            } else {
              const std::int64_t stale[2] = {5, 5};
              st.upload(0, stale, sizeof stale);
              tally::reduce_axis_async(tally::reduce_op::sum, xr, 0, orf, static_cast<std::int64_t*>(st.get()), fast);
              std::int64_t words[2];
              st.download(words, 0, sizeof words);
              EXPECT_EQ(words[0], -1);
              EXPECT_EQ(words[1], -1);
            }
            out.download(got.data(), 0, got.size());
            if (first.empty()) first = got;
            else ASSERT_TRUE(got == first) << "bits differ from half_col_wide 0's (blocking)";
            for (std::int64_t j = 0; j < sh.cols; ++j) {
              const std::size_t o = static_cast<std::size_t>(j);
              double g = 0;
              if (esz == 4) {
                float f;
                std::memcpy(&f, &got[o * 4], 4);
                g = f;
              } else {
                std::memcpy(&g, &got[o * 8], 8);
              }
              if (nan[o] || (pinf[o] && ninf[o])) {
                ASSERT_TRUE(std::isnan(g)) << "column " << j << ": " << g;
              } else if (pinf[o] || ninf[o]) {
                ASSERT_EQ(g, pinf[o] ? HUGE_VAL : -HUGE_VAL) << "column " << j;
              } else if (esz == 4 && std::fabs(static_cast<double>(exact[o])) > 3.4028234663852886e38 * (1 + 0x1p-25)) {
                ASSERT_TRUE(std::isinf(g) && (g > 0) == (exact[o] > 0)) << "column " << j << ": " << g;
              } else {
                const long double bound = (esz == 4 ? 0x1p-24L * std::fabs(exact[o]) : 0.0L) +
                                          static_cast<long double>(sh.rows) * 0x1p-53L * mags[o] * (1 + 0x1p-20L) + 0x1p-149L;
                ASSERT_LE(std::fabs(static_cast<long double>(g) - exact[o]), bound)
                    << "column " << j << ": " << g << " against " << static_cast<double>(exact[o]);
              }
              if (j % 16 == 9) {
                ASSERT_TRUE(g == 0 && std::signbit(g)) << "column " << j << " (every element -0.0): " << g;
              }
            }
          }
        }
      }
    }
    tn::set_shapes_v3_params(base);
  }
}

// Exact float32 row and segment sums through the certified pass and, where it refuses an
// output, the exact kernels behind it (launched as a programmatic dependent of the pass or
// plainly, plan pdl; the pass's vectors staged through shared memory or not, plan row_stages;
// the gated launch at 8
// blocks a SM or 1, plan gate_blocks;
// the tile merge slots the stream's zero-between-calls memory), blocking and
// stream-ordered (status words (-1, -1) over stale ones): the same bits as the cpu backend's
// exact result. Rows longer than a tile item (70001), a block each
// (5000), a few lanes each (1000) and short unaligned ones (37); one segment of a million
// among tiny and empty ones; segments of mean length past seg_block_len (a block each, some
// longer than a tile, some short enough for a warp). Data: uniform; one element 2^40 times the rest every 16 (the
// sixteen-element steps refused and read again); ill-conditioned pairs (outputs refused: the
// exact kernels behind the gate).
TEST(ShapesPlanGpu, ExactRowsAndSegmentsBehindTheGateAreCorrectlyRounded) {
  using tally::dtype;
  if (!tally::cuda_available()) GTEST_SKIP() << "no CUDA GPU";
  const tn::shapes_v3_plan base = tn::shapes_v3_params();
  std::mt19937_64 gen(1202);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  auto fill = [&](std::vector<float>& v, int kind) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (kind == 0) v[i] = u(gen);
      else if (kind == 1) v[i] = i % 16 == 5 ? std::ldexp(u(gen) + 0.5f, 40) : u(gen) + 0.5f;
      else v[i] = i % 2 == 0 ? std::ldexp(1.0f + u(gen), static_cast<int>(gen() % 90) - 10) : -v[i - 1];
    }
    if (kind == 2) v.back() = 0x1p-30f;
  };
  std::vector<std::int64_t> uneven{0}, blocky{0};
  for (int s = 0; s < 3001; ++s) uneven.push_back(uneven.back() + (s == 1500 ? 1000000 : s % 4));
  // (a mean past seg_block_len: a block per segment, block_batch; some past a tile, some a warp's)
  for (int s = 0; s < 40; ++s) blocky.push_back(blocky.back() + std::array<std::int64_t, 5>{30001, 1500, 70000, 0, 17}[s % 5]);
  struct shape {
    std::int64_t rows, cols;  // rows x cols; rows = 0: the uneven segments above, -1: the blocky ones
  };
  for (const shape sh : {shape{300, 70001}, shape{200, 5000}, shape{3000, 1000}, shape{20000, 37}, shape{0, 0}, shape{-1, 0}}) {
    const bool seg = sh.rows <= 0;
    const std::vector<std::int64_t>& offs = sh.rows == 0 ? uneven : blocky;
    const std::int64_t n = seg ? offs.back() : sh.rows * sh.cols, m = seg ? static_cast<std::int64_t>(offs.size()) - 1 : sh.rows;
    for (int kind = 0; kind < 3; ++kind) {
      SCOPED_TRACE((seg ? std::string(sh.rows == 0 ? "uneven segments" : "blocky segments")
                        : std::to_string(sh.rows) + " x " + std::to_string(sh.cols)) +
                   ", data " + std::to_string(kind));
      std::vector<float> hx(static_cast<std::size_t>(n));
      fill(hx, kind);
      std::vector<float> want(static_cast<std::size_t>(m));
      const tally::options cpu{tally::backend::cpu};
      if (seg)
        tally::reduce_segments(tally::reduce_op::sum, {hx.data(), n, dtype::float32, tally::memory::host}, offs.data(), m,
                               {want.data(), m, dtype::float32, tally::memory::host}, cpu);
      else
        tally::reduce_axis(tally::reduce_op::sum, {hx.data(), sh.rows, sh.cols, sh.cols, 1, dtype::float32, tally::memory::host}, 1,
                           {want.data(), m, dtype::float32, tally::memory::host}, cpu);
      tt::cuda::device_buffer x(hx.size() * 4), out(want.size() * 4), st(16), off(offs.size() * 8);
      x.upload(0, hx.data(), hx.size() * 4);
      off.upload(0, offs.data(), offs.size() * 8);
      // (plan pdl, row_stages, gate_blocks)
      for (const auto& [pdl, stages, gates] : {std::tuple{1, 1, 0}, std::tuple{0, 1, 0}, std::tuple{1, 0, 0}, std::tuple{1, 1, 1}}) {
        tn::shapes_v3_plan p = base;
        p.pdl = pdl;
        p.row_stages = stages;
        p.gate_blocks = gates;
        tn::set_shapes_v3_params(p);
        for (int call = 0; call < 4; ++call) {  // blocking, stream-ordered, twice
          SCOPED_TRACE("pdl " + std::to_string(pdl) + ", row_stages " + std::to_string(stages) + ", gate_blocks " + std::to_string(gates) + ", call " + std::to_string(call));
          std::vector<float> got(want.size(), 7.0f);
          out.upload(0, got.data(), got.size() * 4);
          const tally::mutable_array_ref o{out.get(), m, dtype::float32, tally::memory::device};
          const tally::options gpu{tally::backend::cuda};
          auto* stp = static_cast<std::int64_t*>(st.get());
          const std::int64_t stale[2] = {5, 5};
          st.upload(0, stale, sizeof stale);
          if (seg) {
            const tally::array_ref xr{x.get(), n, dtype::float32, tally::memory::device};
            const auto* dof = static_cast<const std::int64_t*>(off.get());
            if (call % 2 == 0) tally::reduce_segments(tally::reduce_op::sum, xr, dof, m, o, gpu);
            else tally::reduce_segments_async(tally::reduce_op::sum, xr, dof, m, o, stp, gpu);
          } else {
            const tally::matrix_ref xr{x.get(), sh.rows, sh.cols, sh.cols, 1, dtype::float32, tally::memory::device};
            if (call % 2 == 0) tally::reduce_axis(tally::reduce_op::sum, xr, 1, o, gpu);
            else tally::reduce_axis_async(tally::reduce_op::sum, xr, 1, o, stp, gpu);
          }
          if (call % 2 == 1) {
            std::int64_t words[2];
            st.download(words, 0, sizeof words);
            EXPECT_EQ(words[0], -1);
            EXPECT_EQ(words[1], -1);
          }
          out.download(got.data(), 0, got.size() * 4);
          for (std::size_t i = 0; i < want.size(); ++i)
            ASSERT_EQ(std::memcmp(&got[i], &want[i], 4), 0) << "output " << i << " of " << want.size();
        }
      }
      tn::set_shapes_v3_params(base);
    }
  }
}

// Plan seg_warp_claim (the certified pass over segments, once its tiles have run: the group
// items after them taken by warps from a counter the last block resets): one segment past the
// tiles' split among 40,000 tiny ones (0..7 elements, empty ones included), three kinds of data,
// as many warp items as the grid has warps several times over (so claims are handed out), with
// the default grid and a block a SM, three calls each (blocking, stream-ordered, blocking: a
// counter not reset would leave group items unread): every output the correctly rounded sum,
// the CPU backend's bits.
TEST(ShapesPlanGpu, ExactSegmentsClaimedByWarpsAfterTheTilesAreCorrectlyRounded) {
  using tally::dtype;
  if (!tally::cuda_available()) GTEST_SKIP() << "no CUDA GPU";
  const tn::shapes_v3_plan base = tn::shapes_v3_params();
  std::mt19937_64 gen(2603);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<std::int64_t> offs{0};
  for (int s = 0; s < 40001; ++s) offs.push_back(offs.back() + (s == 17000 ? 1500000 : static_cast<std::int64_t>(gen() % 8)));
  const std::int64_t n = offs.back(), m = static_cast<std::int64_t>(offs.size()) - 1;
  tt::cuda::device_buffer x(static_cast<std::size_t>(n) * 4), out(static_cast<std::size_t>(m) * 4), st(16), off(offs.size() * 8);
  off.upload(0, offs.data(), offs.size() * 8);
  for (int kind = 0; kind < 3; ++kind) {
    SCOPED_TRACE("data " + std::to_string(kind));
    std::vector<float> hx(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < hx.size(); ++i)
      hx[i] = kind == 0   ? u(gen)
              : kind == 1 ? (i % 16 == 5 ? std::ldexp(u(gen) + 0.5f, 40) : u(gen) - 0.5f)
                          : (i % 2 == 0 ? std::ldexp(1.0f + u(gen), static_cast<int>(gen() % 90) - 10) : -hx[i - 1] * 0.75f);
    x.upload(0, hx.data(), hx.size() * 4);
    std::vector<float> want(static_cast<std::size_t>(m));
    tally::reduce_segments(tally::reduce_op::sum, {hx.data(), n, dtype::float32, tally::memory::host}, offs.data(), m,
                           {want.data(), m, dtype::float32, tally::memory::host}, tally::options{tally::backend::cpu});
    for (const auto& [claim, bpsm] : {std::pair{0, 0}, std::pair{1, 0}, std::pair{3, 0}, std::pair{1, 1}, std::pair{64, 1}}) {
      tn::shapes_v3_plan p = base;
      p.seg_warp_claim = claim;
      p.blocks_per_sm = bpsm;
      tn::set_shapes_v3_params(p);
      for (int call = 0; call < 3; ++call) {
        SCOPED_TRACE("seg_warp_claim " + std::to_string(claim) + ", blocks_per_sm " + std::to_string(bpsm) + ", call " +
                     std::to_string(call));
        std::vector<float> got(want.size(), 7.0f);
        out.upload(0, got.data(), got.size() * 4);
        const tally::array_ref xr{x.get(), n, dtype::float32, tally::memory::device};
        const tally::mutable_array_ref o{out.get(), m, dtype::float32, tally::memory::device};
        const auto* dof = static_cast<const std::int64_t*>(off.get());
        const tally::options gpu{tally::backend::cuda};
        if (call == 1) {
          auto* stp = static_cast<std::int64_t*>(st.get());
          tally::reduce_segments_async(tally::reduce_op::sum, xr, dof, m, o, stp, gpu);
          std::int64_t words[2];
          st.download(words, 0, sizeof words);
          EXPECT_EQ(words[0], -1);
          EXPECT_EQ(words[1], -1);
        } else {
          tally::reduce_segments(tally::reduce_op::sum, xr, dof, m, o, gpu);
        }
        out.download(got.data(), 0, got.size() * 4);
        for (std::size_t i = 0; i < want.size(); ++i)
          ASSERT_EQ(std::memcmp(&got[i], &want[i], 4), 0) << "output " << i << " of " << want.size();
      }
    }
    tn::set_shapes_v3_params(base);
  }
}

// Byte min / max along rows and per segment (int8, uint8, bool), under plan row_stages 1 and 0
// (the bytes' vectors are loaded into registers either way since run 146, which measured them
// staged through shared memory 6-8% slower; a plan field that keeps the bits must keep them): each
// output's extreme placed once at a position spread over its whole length (so most lie in a
// lane's later groups, past the staging's first round), met again later in the output (ties:
// the first index stays), over background values that never reach it; rows of a warp's
// length (8195: 32 lanes), of a block (65541), past a tile (200003), a few lanes' (1000) and
// short (37); one segment of a million among tiny and empty ones, and segments past
// seg_block_len. Blocking and stream-ordered, against the cpu backend's values and indices.
TEST(ShapesPlanGpu, ByteExtremesStagedOrNotKeepTheFirstIndex) {
  using tally::dtype;
  if (!tally::cuda_available()) GTEST_SKIP() << "no CUDA GPU";
  const tn::shapes_v3_plan base = tn::shapes_v3_params();
  std::vector<std::int64_t> uneven{0}, blocky{0};
  for (int s = 0; s < 3001; ++s) uneven.push_back(uneven.back() + (s == 1500 ? 1000000 : s % 4));
  for (int s = 0; s < 40; ++s) blocky.push_back(blocky.back() + std::array<std::int64_t, 5>{30001, 1500, 70000, 0, 17}[s % 5]);
  struct shape {
    std::int64_t rows, cols;  // rows = 0: the uneven segments above, -1: the blocky ones
  };
  std::mt19937_64 gen(4101);
  for (const dtype t : {dtype::int8, dtype::uint8, dtype::bool_}) {
    // background values strictly between the extremes (bool: none; its extremes are 0 and 1,
    // so a bool output is 0 but for its maximum and its ties, or 1 but for its minimum)
    const int lo = t == dtype::int8 ? -128 : 0, hi = t == dtype::int8 ? 127 : t == dtype::uint8 ? 255 : 1;
    for (const shape sh : {shape{64, 8195}, shape{12, 65541}, shape{3, 200003}, shape{500, 1000}, shape{2000, 37}, shape{0, 0},
                           shape{-1, 0}}) {
      const bool seg = sh.rows <= 0;
      const std::vector<std::int64_t>& offs = sh.rows == 0 ? uneven : blocky;
      const std::int64_t n = seg ? offs.back() : sh.rows * sh.cols, m = seg ? static_cast<std::int64_t>(offs.size()) - 1 : sh.rows;
      auto begin = [&](std::int64_t o) { return seg ? offs[static_cast<std::size_t>(o)] : o * sh.cols; };
      auto length = [&](std::int64_t o) { return seg ? offs[static_cast<std::size_t>(o) + 1] - offs[static_cast<std::size_t>(o)] : sh.cols; };
      for (const bool mx : {true, false}) {
        SCOPED_TRACE(std::string(tally::dtype_name(t)) + (mx ? " max, " : " min, ") +
                     (seg ? std::string(sh.rows == 0 ? "uneven segments" : "blocky segments")
                          : std::to_string(sh.rows) + " x " + std::to_string(sh.cols)));
        std::vector<std::uint8_t> hx(static_cast<std::size_t>(n));
        for (auto& e : hx) {
          const int v = t == dtype::bool_ ? (mx ? 0 : 1) : lo + 1 + static_cast<int>(gen() % static_cast<unsigned>(hi - lo - 1));
          e = static_cast<std::uint8_t>(v);
        }
        for (std::int64_t o = 0; o < m; ++o) {
          const std::int64_t len = length(o);
          if (len == 0) continue;
          const std::int64_t at = (o * 7919 + 13) % len;  // spread over the output's length
          for (std::int64_t k : {at, at + (len - at) / 2, len - 1})
            if (k >= at) hx[static_cast<std::size_t>(begin(o) + k)] = static_cast<std::uint8_t>(mx ? hi : lo);
        }
        const tally::extreme_op op = mx ? tally::extreme_op::max : tally::extreme_op::min;
        const tally::nan_policy nans = tally::nan_policy::propagate;
        std::vector<std::uint8_t> want_v(static_cast<std::size_t>(m));
        std::vector<std::int64_t> want_i(static_cast<std::size_t>(m));
        const tally::options cpu{tally::backend::cpu};
        const tally::mutable_array_ref wv{want_v.data(), m, t, tally::memory::host}, wi{want_i.data(), m, dtype::int64, tally::memory::host};
        if (seg) tally::extreme_segments(op, nans, {hx.data(), n, t, tally::memory::host}, offs.data(), m, wv, wi, cpu);
        else tally::extreme_axis(op, nans, {hx.data(), sh.rows, sh.cols, sh.cols, 1, t, tally::memory::host}, 1, wv, wi, cpu);
        for (std::int64_t o = 0; o < m; ++o) {  // (the reference itself: the first placed extreme)
          if (length(o) > 0) { ASSERT_EQ(want_i[static_cast<std::size_t>(o)], (o * 7919 + 13) % length(o)) << "output " << o; }
        }
        tt::cuda::device_buffer x(hx.size() + 1), vals(want_v.size() + 1), idx(want_i.size() * 8 + 8), st(16), off(offs.size() * 8);
        x.upload(0, hx.data(), hx.size());
        off.upload(0, offs.data(), offs.size() * 8);
        for (const int stages : {1, 0}) {
          tn::shapes_v3_plan p = base;
          p.row_stages = stages;
          tn::set_shapes_v3_params(p);
          for (int call = 0; call < 2; ++call) {  // blocking, stream-ordered
            SCOPED_TRACE("row_stages " + std::to_string(stages) + (call == 0 ? ", blocking" : ", stream-ordered"));
            std::vector<std::uint8_t> gv(want_v.size(), 0x55);
            std::vector<std::int64_t> gi(want_i.size(), -7);
            vals.upload(0, gv.data(), gv.size());
            idx.upload(0, gi.data(), gi.size() * 8);
            const tally::mutable_array_ref v{vals.get(), m, t, tally::memory::device}, i{idx.get(), m, dtype::int64, tally::memory::device};
            const tally::options gpu{tally::backend::cuda};
            auto* stp = static_cast<std::int64_t*>(st.get());
            if (seg) {
              const tally::array_ref xr{x.get(), n, t, tally::memory::device};
              const auto* dof = static_cast<const std::int64_t*>(off.get());
              if (call == 0) tally::extreme_segments(op, nans, xr, dof, m, v, i, gpu);
              else tally::extreme_segments_async(op, nans, xr, dof, m, v, i, stp, gpu);
            } else {
              const tally::matrix_ref xr{x.get(), sh.rows, sh.cols, sh.cols, 1, t, tally::memory::device};
              if (call == 0) tally::extreme_axis(op, nans, xr, 1, v, i, gpu);
              else tally::extreme_axis_async(op, nans, xr, 1, v, i, stp, gpu);
            }
            if (call == 1) {
              std::int64_t words[2];
              st.download(words, 0, sizeof words);
              EXPECT_EQ(words[0], -1);
              EXPECT_EQ(words[1], -1);
            }
            vals.download(gv.data(), 0, gv.size());
            idx.download(gi.data(), 0, gi.size() * 8);
            for (std::size_t o = 0; o < want_i.size(); ++o) {
              ASSERT_EQ(gi[o], want_i[o]) << "output " << o << " of " << m;
              ASSERT_EQ(gv[o], want_v[o]) << "output " << o << " of " << m;
            }
          }
        }
        tn::set_shapes_v3_params(base);
      }
    }
  }
}

// v3::finish::check_end (plan check_end): the stream-ordered segment calls of the ops that never
// record an overflow (here int8 sums, means and max with index) end without block_done, in a
// set of persistent words of their own (1 or 2, in turn) that the next such call cleans; the
// others (int32 sums, which may overflow; blocking calls; column sums) keep set 0. A
// pseudo-random sequence of such calls on one stream, queued in runs of 1 to 4 before the
// stream is waited for: good offsets (equal segments of 200; short ones with two past
// seg_split, so tile items and their tickets) and bad ones (one decreasing inside the long
// segments, which leaves tickets counted wrongly; a bad first or last entry). Every output of
// a call with good offsets equals the host's and every status is [-1, -1]; a call with bad
// offsets reports the first bad entry. Under check_end 1, 2 and 0.
TEST(ShapesPlanGpu, CheckEndSetsThroughGoodBadAndOtherCalls) {
  using tally::dtype;
  if (!tally::cuda_available()) GTEST_SKIP() << "no CUDA GPU";
  const tn::shapes_v3_plan base = tn::shapes_v3_params();
  std::mt19937_64 gen(5959);
  const std::int64_t n = 300000;
  std::vector<std::int8_t> hx(static_cast<std::size_t>(n));
  for (auto& v : hx) v = static_cast<std::int8_t>(static_cast<int>(gen() % 256) - 128);
  std::vector<std::int32_t> hx32(hx.begin(), hx.end());
  tt::cuda::device_buffer x(static_cast<std::size_t>(n)), x32(static_cast<std::size_t>(n) * 4);
  x.upload(0, hx.data(), hx.size());
  x32.upload(0, hx32.data(), hx32.size() * 4);
  using offs = std::vector<std::int64_t>;
  offs equal{0}, mixed{0};
  while (equal.back() + 200 < n) equal.push_back(equal.back() + 200);
  equal.push_back(n);
  for (int s = 0; mixed.back() < n - 150000; ++s)
    mixed.push_back(mixed.back() + (s == 300 ? 40000 : s == 700 ? 60000 : static_cast<std::int64_t>(gen() % 301)));
  mixed.push_back(n);
  const std::size_t at_long = 302;  // (mixed[301] - mixed[300] is the 40,000-element segment)
  ASSERT_EQ(mixed[301] - mixed[300], 40000);
  offs bad_long = mixed, bad_first = mixed, bad_last = equal;
  bad_long[at_long] = bad_long[at_long - 1] - 1;  // (decreasing: the entry at_long is the first bad one)
  bad_first[0] = 1;
  bad_last.back() = n - 1;
  struct offsets_case {
    const offs* o;
    std::int64_t first_bad;
    tt::cuda::device_buffer d;
  };
  std::vector<offsets_case> cases;
  for (auto [o, bad] : {std::pair{&equal, std::int64_t(-1)}, std::pair{&mixed, std::int64_t(-1)},
                        std::pair{&bad_long, static_cast<std::int64_t>(at_long)}, std::pair{&bad_first, std::int64_t(0)},
                        std::pair{&bad_last, static_cast<std::int64_t>(equal.size() - 1)}}) {
    cases.push_back({o, bad, tt::cuda::device_buffer(o->size() * 8)});
    cases.back().d.upload(0, o->data(), o->size() * 8);
  }
  const tally::options opt{tally::backend::cuda, nullptr, tally::accuracy::exact};
  const tally::array_ref xr{x.get(), n, dtype::int8, tally::memory::device};
  const tally::array_ref xr32{x32.get(), n, dtype::int32, tally::memory::device};
  // one queued call: kind 0 int8 sum, 1 int8 mean, 2 int8 max with index (check_end), 3 int32
  // sum (set 0), 4 blocking int8 sum (set 0), 5 int8 column sums of (n / 200, 200), stream-ordered (set 0)
  struct call {
    int kind;
    const offsets_case* c;
    tt::cuda::device_buffer out, idx, st;
  };
  auto check = [&](call& q) {
    const offs& o = *q.c->o;
    const std::int64_t segs = static_cast<std::int64_t>(o.size()) - 1;
    std::vector<std::int64_t> st(2, 7);
    if (q.kind != 4) q.st.download(st.data(), 0, 16);
    if (q.kind == 5) {
      std::vector<std::int64_t> got(200);
      q.out.download(got.data(), 0, 200 * 8);
      EXPECT_EQ(st, (std::vector<std::int64_t>{-1, -1}));
      for (std::int64_t c = 0; c < 200; ++c) {
        std::int64_t want = 0;
        for (std::int64_t r = 0; r < n / 200; ++r) want += hx[static_cast<std::size_t>(r * 200 + c)];
        ASSERT_EQ(got[static_cast<std::size_t>(c)], want) << "column " << c;
      }
      return;
    }
    if (q.c->first_bad >= 0) {  // (kind 4: the blocking call threw, EXPECT_THROW below)
      if (q.kind != 4) EXPECT_EQ(st, (std::vector<std::int64_t>{q.c->first_bad, -1}));
      return;
    }
    if (q.kind != 4) {
      EXPECT_EQ(st, (std::vector<std::int64_t>{-1, -1}));
    }
    std::vector<std::int64_t> got(static_cast<std::size_t>(segs)), gi(static_cast<std::size_t>(segs));
    std::vector<double> gm(static_cast<std::size_t>(segs));
    std::vector<std::int8_t> gv(static_cast<std::size_t>(segs));
    if (q.kind == 1) q.out.download(gm.data(), 0, gm.size() * 8);
    else if (q.kind == 2) {
      q.out.download(gv.data(), 0, gv.size());
      q.idx.download(gi.data(), 0, gi.size() * 8);
    } else {
      q.out.download(got.data(), 0, got.size() * 8);
    }
    for (std::int64_t s = 0; s < segs; ++s) {
      const auto b = o[static_cast<std::size_t>(s)], e = o[static_cast<std::size_t>(s) + 1];
      std::int64_t sum = 0, at = -1;
      int best = -129;
      for (std::int64_t k = b; k < e; ++k) {
        const int v = hx[static_cast<std::size_t>(k)];
        sum += v;
        if (v > best) best = v, at = k - b;
      }
      const std::size_t i = static_cast<std::size_t>(s);
      if (q.kind == 1) {
        if (e == b) ASSERT_TRUE(std::isnan(gm[i])) << "segment " << s;
        else ASSERT_EQ(gm[i], static_cast<double>(sum) / static_cast<double>(e - b)) << "segment " << s;
      } else if (q.kind == 2) {
        ASSERT_EQ(gi[i], at) << "segment " << s;
        ASSERT_EQ(static_cast<int>(gv[i]), e == b ? -128 : best) << "segment " << s;
      } else {
        ASSERT_EQ(got[i], sum) << "segment " << s;
      }
    }
  };
  for (int end : {1, 2, 0}) {
    SCOPED_TRACE("check_end " + std::to_string(end));
    tn::shapes_v3_plan p = base;
    p.check_end = end;
    tn::set_shapes_v3_params(p);
    int step = 0;
    while (step < 60) {
      std::vector<call> run;
      const int len = 1 + static_cast<int>(gen() % 4);
      for (int k = 0; k < len; ++k, ++step) {
        const int kind = static_cast<int>(gen() % 6);
        const offsets_case* c = kind == 5 ? &cases[0] : &cases[static_cast<std::size_t>(gen() % cases.size())];
        const std::int64_t segs = static_cast<std::int64_t>(c->o->size()) - 1;
        call q{kind, c, tt::cuda::device_buffer(static_cast<std::size_t>(std::max<std::int64_t>(segs, 200)) * 8 + 8),
               tt::cuda::device_buffer(static_cast<std::size_t>(segs) * 8 + 8), tt::cuda::device_buffer(16)};
        const std::int64_t st_init[2] = {5, 5};
        q.st.upload(0, st_init, 16);
        auto* sd = static_cast<std::int64_t*>(q.st.get());
        const auto* od = static_cast<const std::int64_t*>(c->d.get());
        const tally::mutable_array_ref o64{q.out.get(), segs, dtype::int64, tally::memory::device};
        SCOPED_TRACE("step " + std::to_string(step) + ", kind " + std::to_string(kind) + ", first bad " + std::to_string(c->first_bad));
        if (kind == 0) tally::reduce_segments_async(tally::reduce_op::sum, xr, od, segs, o64, sd, opt);
        if (kind == 1)
          tally::mean_segments_async(xr, od, segs, {q.out.get(), segs, dtype::float64, tally::memory::device}, sd, opt);
        if (kind == 2)
          tally::extreme_segments_async(tally::extreme_op::max, tally::nan_policy::propagate, xr, od, segs,
                                        {q.out.get(), segs, dtype::int8, tally::memory::device},
                                        {q.idx.get(), segs, dtype::int64, tally::memory::device}, sd, opt);
        if (kind == 3) tally::reduce_segments_async(tally::reduce_op::sum, xr32, od, segs, o64, sd, opt);
        if (kind == 4) {
          if (c->first_bad >= 0) {
            EXPECT_THROW(tally::reduce_segments(tally::reduce_op::sum, xr, od, segs, o64, opt), tally::error);
          } else {
            tally::reduce_segments(tally::reduce_op::sum, xr, od, segs, o64, opt);
          }
        }
        if (kind == 5)
          tally::reduce_axis_async(tally::reduce_op::sum, {x.get(), n / 200, 200, 200, 1, dtype::int8, tally::memory::device}, 0,
                                   {q.out.get(), 200, dtype::int64, tally::memory::device}, sd, opt);
        run.push_back(std::move(q));
      }
      tt::cuda::synchronize(nullptr);
      for (auto& q : run) {
        SCOPED_TRACE("kind " + std::to_string(q.kind) + ", first bad " + std::to_string(q.c->first_bad));
        check(q);
        if (HasFatalFailure()) {
          tn::set_shapes_v3_params(base);
          return;
        }
      }
    }
  }
  tn::set_shapes_v3_params(base);
}
