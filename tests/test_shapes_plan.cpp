// The shape layer's plan (src/cuda/shapes_tuning.hpp, a private header: tally is a static
// library): bad plans are refused by name and leave the plan in force unchanged. No GPU needed.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "cuda/shapes_tuning.hpp"
#include "tally/types.hpp"

namespace {

namespace tn = tally::cuda::tuning;

bool same(const tn::shapes_v3_plan& a, const tn::shapes_v3_plan& b) {
  return a.tile == b.tile && a.seg_tile == b.seg_tile && a.seg_split == b.seg_split && a.seg_lanes == b.seg_lanes && a.block_row_len == b.block_row_len &&
         a.blocks_per_sm == b.blocks_per_sm && a.col_blocks == b.col_blocks && a.groups_first == b.groups_first;
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
      {"groups_first", [](tn::shapes_v3_plan& p) { p.groups_first = 2; }},
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
  p.groups_first = 1;
  tn::set_shapes_v3_params(p);
  EXPECT_TRUE(same(tn::shapes_v3_params(), p));
  tn::set_shapes_v3_params(before);
  EXPECT_TRUE(same(tn::shapes_v3_params(), before));
}

}  // namespace
