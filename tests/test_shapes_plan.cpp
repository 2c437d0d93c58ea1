// The shape layer's plan (src/cuda/shapes_tuning.hpp, a private header: tally is a static
// library): bad plans are refused by name and leave the plan in force unchanged. No GPU needed.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cuda/shapes_items.hpp"
#include "cuda/shapes_tuning.hpp"
#include "tally/types.hpp"

namespace {

namespace tn = tally::cuda::tuning;

bool same(const tn::shapes_v3_plan& a, const tn::shapes_v3_plan& b) {
  return a.tile == b.tile && a.seg_tile == b.seg_tile && a.seg_split == b.seg_split && a.seg_lanes == b.seg_lanes && a.block_row_len == b.block_row_len &&
         a.blocks_per_sm == b.blocks_per_sm && a.col_blocks == b.col_blocks && a.item_order == b.item_order && a.tile_probe == b.tile_probe;
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
      {"seg_lanes", [](tn::shapes_v3_plan& p) { p.seg_lanes = 2; }},
      {"seg_lanes", [](tn::shapes_v3_plan& p) { p.seg_lanes = 64; }},
      {"seg_tile must be at most 64 seg_split", [](tn::shapes_v3_plan& p) { p.seg_split = 1024; p.seg_tile = 65 * 1024; }},
      {"block_row_len", [](tn::shapes_v3_plan& p) { p.block_row_len = 0; }},
      {"blocks_per_sm", [](tn::shapes_v3_plan& p) { p.blocks_per_sm = 65; }},
      {"col_blocks", [](tn::shapes_v3_plan& p) { p.col_blocks = 0; }},
      {"col_blocks", [](tn::shapes_v3_plan& p) { p.col_blocks = (std::int64_t(1) << 20) + 1; }},
      {"item_order", [](tn::shapes_v3_plan& p) { p.item_order = 3; }},
      {"item_order", [](tn::shapes_v3_plan& p) { p.item_order = -1; }},
      {"tile_probe", [](tn::shapes_v3_plan& p) { p.tile_probe = 2; }},
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
  p.block_row_len = 1;
  p.blocks_per_sm = -1;
  p.col_blocks = 1;
  p.item_order = 2;
  p.tile_probe = 0;
  tn::set_shapes_v3_params(p);
  EXPECT_TRUE(same(tn::shapes_v3_params(), p));
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
            if (last_pos >= 0) EXPECT_LE(k - last_pos, (items + tiles - 1) / tiles) << "evenly spread";
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
  const std::pair<const char*, const char*> bad[] = {
      {"tile=abc", "not name=integer"},
      {"tile", "not name=integer"},
      {"tiles=1024", "no field 'tiles'"},
      {"item_order=4294967298", "out of range"},  // would wrap to 2 as an int
      {"tile_probe=-4294967295", "out of range"},
      {"item_order=3", "item_order"},
      {"tile_probe=2", "tile_probe"},
      {"seg_lanes=6", "seg_lanes"},
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
