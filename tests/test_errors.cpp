// Argument errors and aliasing on every backend and element type.
#include "support.hpp"

namespace tt {
namespace {

TEST_P(Typed, LengthMismatch) {
  with_type(t(), [&]<class T>() {
    auto x = put(ramp<T>(12345)), y = put(ramp<T>(678)), o = put(ramp<T>(12345));
    EXPECT_TRUE(throws_tally([&] { return tally::dot<T>(x.in(), y.in(), opt()); }, errc::length_mismatch,
                             {"12345", "678"}));
    EXPECT_TRUE(throws_tally([&] { tally::add<T>(x.in(), y.in(), o.out(), opt()); }, errc::length_mismatch,
                             {"12345", "678"}));
    EXPECT_TRUE(throws_tally([&] { tally::add<T>(y.in(), y.in(), o.out(), opt()); }, errc::length_mismatch,
                             {"12345", "678"}))
        << "out longer than the inputs";
    EXPECT_TRUE(throws_tally([&] { return tally::dot<T>(x.in(), {y.data(), 0}, opt()); },
                             errc::length_mismatch, {"12345", "0"}));
  });
}

TEST_P(Typed, NullPointerWithLength) {
  with_type(t(), [&]<class T>() {
    auto x = put(ramp<T>(5));
    const tally::view<const T> null{nullptr, 5};
    EXPECT_TRUE(throws_tally([&] { return tally::sum<T>(null, opt()); }, errc::null_pointer));
    EXPECT_TRUE(throws_tally([&] { return tally::dot<T>(null, x.in(), opt()); }, errc::null_pointer));
    EXPECT_TRUE(throws_tally([&] { return tally::dot<T>(x.in(), null, opt()); }, errc::null_pointer));
    auto o = put(ramp<T>(5));
    EXPECT_TRUE(throws_tally([&] { tally::add<T>(null, x.in(), o.out(), opt()); }, errc::null_pointer));
    EXPECT_TRUE(throws_tally([&] { tally::add<T>(x.in(), x.in(), tally::view<T>{nullptr, 5}, opt()); },
                             errc::null_pointer));
  });
}

TEST_P(Typed, NegativeLength) {
  with_type(t(), [&]<class T>() {
    auto x = put(ramp<T>(5)), o = put(ramp<T>(5));
    const tally::view<const T> neg{x.data(), -1};
    EXPECT_TRUE(throws_tally([&] { return tally::sum<T>(neg, opt()); }, errc::invalid_argument, {"-1"}));
    EXPECT_TRUE(throws_tally([&] { return tally::dot<T>(neg, neg, opt()); }, errc::invalid_argument));
    EXPECT_TRUE(throws_tally([&] { tally::add<T>(neg, neg, tally::view<T>{o.data(), -1}, opt()); },
                             errc::invalid_argument));
    EXPECT_TRUE(throws_tally([&] { return tally::sum<T>({nullptr, -3}, opt()); }, errc::invalid_argument));
  });
}

// out may be exactly x or exactly y (in place); any other overlap is invalid_argument.
TEST_P(Typed, AddAliasing) {
  with_type(t(), [&]<class T>() {
    const std::int64_t n = 10001;
    auto x = ramp<T>(2 * n, 0), y = ramp<T>(2 * n, 1);
    auto bx = put(x), by = put(y);
    tally::view<const T> vx{bx.data(), n}, vy{by.data(), n};
    for (std::int64_t shift : {std::int64_t(1), std::int64_t(2), std::int64_t(3), n - 1}) {
      SCOPED_TRACE("shift " + std::to_string(shift));
      // out starts inside x (or y)
      EXPECT_TRUE(throws_tally([&] { tally::add<T>(vx, vy, tally::view<T>{bx.data() + shift, n}, opt()); },
                               errc::invalid_argument, {"overlap"}));
      EXPECT_TRUE(throws_tally([&] { tally::add<T>(vx, vy, tally::view<T>{by.data() + shift, n}, opt()); },
                               errc::invalid_argument, {"overlap"}));
      // out ends inside x
      tally::view<const T> xs{bx.data() + shift, n};
      EXPECT_TRUE(throws_tally([&] { tally::add<T>(xs, vy, tally::view<T>{bx.data(), n}, opt()); },
                               errc::invalid_argument, {"overlap"}));
    }
    // The inputs must not have changed.
    EXPECT_EQ(bx.read(), x);
    EXPECT_EQ(by.read(), y);

    // Exact aliasing: out is x, out is y, all three the same.
    const std::vector<T> hx(x.begin(), x.begin() + n), hy(y.begin(), y.begin() + n);
    {
      auto ax = put(hx), ay = put(hy);
      tally::add<T>(ax.in(), ay.in(), ax.out(), opt());
      EXPECT_TRUE(add_matches(ax.read(), hx, hy)) << "out = x";
    }
    {
      auto ax = put(hx), ay = put(hy);
      tally::add<T>(ax.in(), ay.in(), ay.out(), opt());
      EXPECT_TRUE(add_matches(ay.read(), hx, hy)) << "out = y";
    }
    {
      auto ax = put(hx, 1);  // misaligned, in place
      tally::add<T>(ax.in(), ax.in(), ax.out(), opt());
      EXPECT_TRUE(add_matches(ax.read(), hx, hx)) << "out = x = y";
    }
    // Adjacent (touching, not overlapping) arrays are fine.
    {
      auto all = put(ramp<T>(3 * n, 0));
      auto h = ramp<T>(3 * n, 0);
      tally::add<T>({all.data(), n}, {all.data() + n, n}, tally::view<T>{all.data() + 2 * n, n}, opt());
      auto got = all.read();
      EXPECT_TRUE(add_matches(std::vector<T>(got.begin() + 2 * n, got.end()),
                              std::vector<T>(h.begin(), h.begin() + n),
                              std::vector<T>(h.begin() + n, h.begin() + 2 * n)));
    }
    // The inputs may overlap each other (only out is restricted): out = a[i] + a[i + 1].
    {
      auto all = put(ramp<T>(n + 1, 0));
      auto h = ramp<T>(n + 1, 0);
      buffer<T> o(b(), n, T(0));
      tally::add<T>({all.data(), n}, {all.data() + 1, n}, o.out(), opt());
      EXPECT_TRUE(add_matches(o.read(), std::vector<T>(h.begin(), h.end() - 1), std::vector<T>(h.begin() + 1, h.end())))
          << "x and y overlapping";
      EXPECT_TRUE(same_bits(tally::dot<T>({all.data(), n}, {all.data() + 1, n}, opt()),
                            exact_as<T>(exact_dot(h.data(), h.data() + 1, n).value)))
          << "dot(a, a + 1)";
      // In place on x while y overlaps out partially: invalid.
      EXPECT_TRUE(throws_tally([&] { tally::add<T>({all.data(), n}, {all.data() + 1, n},
                                                   tally::view<T>{all.data(), n}, opt()); },
                               errc::invalid_argument, {"overlap"}));
    }
    // dot(x, x) is allowed (the squared norm).
    EXPECT_TRUE(same_bits(tally::dot<T>(vx, vx, opt()), exact_as<T>(exact_dot(x.data(), x.data(), n).value)));
  });
}

// The asynchronous forms run on the CUDA backend only: with backend::cpu they throw
// invalid_argument; on the CUDA backend the result is left in device memory.
TEST_P(Typed, AsyncForms) {
  with_type(t(), [&]<class T>() {
    using R = tally::result_t<T>;
    const std::int64_t n = 4099;
    auto x = ramp<T>(n, 0), y = ramp<T>(n, 1);
    auto bx = put(x), by = put(y);
    buffer<R> res(b(), 1, R(99));
    buffer<int> st(b(), 1, 7);
    buffer<T> out(b(), n, T(0));
    if (b() == backend::cpu) {
      EXPECT_TRUE(throws_tally([&] { tally::sum_async<T>(bx.in(), res.data(), st.data(), opt()); },
                               errc::invalid_argument));
      EXPECT_TRUE(throws_tally([&] { tally::dot_async<T>(bx.in(), by.in(), res.data(), st.data(), opt()); },
                               errc::invalid_argument));
      EXPECT_TRUE(throws_tally([&] { tally::add_async<T>(bx.in(), by.in(), out.out(), st.data(), opt()); },
                               errc::invalid_argument));
      return;
    }
#if defined(TALLY_TEST_HAVE_CUDA)
    tally::sum_async<T>(bx.in(), res.data(), st.data(), opt());
    cuda::synchronize(nullptr);
    EXPECT_TRUE(same_bits(res.read()[0], exact_as<T>(exact_sum(x.data(), n).value))) << "sum_async";
    EXPECT_EQ(st.read()[0], 0);
    st.write({7});
    tally::dot_async<T>(bx.in(), by.in(), res.data(), st.data(), opt());
    cuda::synchronize(nullptr);
    EXPECT_TRUE(same_bits(res.read()[0], exact_as<T>(exact_dot(x.data(), y.data(), n).value))) << "dot_async";
    EXPECT_EQ(st.read()[0], 0);
    st.write({7});
    tally::add_async<T>(bx.in(), by.in(), out.out(), st.data(), opt());
    cuda::synchronize(nullptr);
    EXPECT_TRUE(add_matches(out.read(), x, y)) << "add_async";
    EXPECT_EQ(st.read()[0], 0);
    // Without a status pointer, and with the automatic backend (device memory -> CUDA).
    tally::sum_async<T>(bx.in(), res.data());
    cuda::synchronize(nullptr);
    EXPECT_TRUE(same_bits(res.read()[0], exact_as<T>(exact_sum(x.data(), n).value))) << "sum_async, auto";
    // Empty input: +0 and status 0.
    st.write({7});
    tally::sum_async<T>({nullptr, 0}, res.data(), st.data(), opt());
    cuda::synchronize(nullptr);
    EXPECT_TRUE(same_bits(res.read()[0], R(0)));
    EXPECT_EQ(st.read()[0], 0);
#endif
  });
}

// Each backend refuses the other side's memory: the CPU backend given device memory, the
// CUDA backend given host memory (both need a GPU to make the memory / run the check).
TEST_P(Typed, WrongMemory) {
  with_type(t(), [&]<class T>() {
    TT_REQUIRE_BACKEND(backend::cuda);
    const backend other = b() == backend::cpu ? backend::cuda : backend::cpu;
    buffer<T> x(other, ramp<T>(100)), y(other, ramp<T>(100)), o(other, 100, T(0));
    EXPECT_TRUE(throws_tally([&] { return tally::sum<T>(x.in(), opt()); }, errc::wrong_memory));
    EXPECT_TRUE(throws_tally([&] { return tally::dot<T>(x.in(), y.in(), opt()); }, errc::wrong_memory));
    EXPECT_TRUE(throws_tally([&] { tally::add<T>(x.in(), y.in(), o.out(), opt()); }, errc::wrong_memory));
    // One argument on the wrong side is enough.
    buffer<T> mine(b(), ramp<T>(100));
    EXPECT_TRUE(throws_tally([&] { return tally::dot<T>(mine.in(), y.in(), opt()); }, errc::wrong_memory));
    EXPECT_TRUE(throws_tally([&] { tally::add<T>(mine.in(), mine.in(), o.out(), opt()); }, errc::wrong_memory));
    // Declared memory kinds are checked too: host memory declared as device memory.
    if (b() == backend::cuda) {
      tally::view<const T> lie{x.data(), x.size(), tally::memory::device};
      EXPECT_TRUE(throws_tally([&] { return tally::sum<T>(lie, opt()); }, errc::wrong_memory));
    } else {
      tally::view<const T> declared{x.data(), x.size(), tally::memory::device};
      EXPECT_TRUE(throws_tally([&] { return tally::sum<T>(declared, opt()); }, errc::wrong_memory));
      // Device memory declared as host memory: an error, not a CPU read of device memory.
      tally::view<const T> as_host{x.data(), x.size(), tally::memory::host};
      EXPECT_TRUE(throws_tally([&] { return tally::sum<T>(as_host, opt()); }, errc::wrong_memory));
      EXPECT_TRUE(throws_tally([&] { return tally::sum<T>(as_host, tally::options{}); }, errc::wrong_memory));
    }
  });
}

// The type-erased layer every front end calls (core.hpp): the checks the templates cannot
// trip, and its small queries.
TEST_P(Backend, CoreLayerChecks) {
  using tally::array_ref;
  using tally::mutable_array_ref;
  auto f = put(std::vector<float>{1, 2, 3});
  auto d = put(std::vector<double>{1, 2, 3});
  const array_ref xf{f.data(), 3, dtype::float32};
  const array_ref xd{d.data(), 3, dtype::float64};
  double r = 0;
  EXPECT_TRUE(throws_tally([&] { tally::reduce(tally::reduce_op::dot, xf, xd, &r, opt()); },
                           errc::invalid_argument, {"float32", "float64"}));
  EXPECT_TRUE(throws_tally([&] { tally::reduce(tally::reduce_op::sum, xd, {}, nullptr, opt()); },
                           errc::null_pointer));
  buffer<double> o(b(), 3, 0.0);
  EXPECT_TRUE(throws_tally([&] { tally::add(xf, xf, mutable_array_ref{o.data(), 3, dtype::float64}, opt()); },
                           errc::invalid_argument));
  tally::reduce(tally::reduce_op::sum, xd, {}, &r, opt());
  EXPECT_EQ(r, 6.0);
  std::int64_t ri = 0;
  auto i32 = put(std::vector<std::int32_t>{-1, 2, 3});
  tally::reduce(tally::reduce_op::sum, array_ref{i32.data(), 3, dtype::int32}, {}, &ri, opt());
  EXPECT_EQ(ri, 4) << "int32 sums are written as int64";
  EXPECT_EQ(tally::result_dtype(tally::reduce_op::sum, dtype::int32), dtype::int64);
  EXPECT_EQ(tally::result_dtype(tally::reduce_op::dot, dtype::int64), dtype::int64);
  EXPECT_EQ(tally::result_dtype(tally::reduce_op::dot, dtype::float32), dtype::float32);
  EXPECT_EQ(tally::result_dtype(tally::reduce_op::sum, dtype::float64), dtype::float64);
  EXPECT_STREQ(tally::dtype_name(dtype::float32), "float32");
  EXPECT_STREQ(tally::dtype_name(dtype::int64), "int64");
  EXPECT_EQ(tally::dtype_size(dtype::int32), 4u);
  EXPECT_EQ(tally::dtype_size(dtype::float64), 8u);
  EXPECT_STREQ(tally::backend_name(b()), b() == backend::cpu ? "cpu" : "cuda");
}

}  // namespace
}  // namespace tt
