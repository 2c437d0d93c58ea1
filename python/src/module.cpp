// tally._tally: the compiled layer of the Python module. Thin: it maps NumPy (DLPack) arrays
// onto tally::array_ref and tally::error onto Python exceptions; python/tally/__init__.py
// holds the documented API.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <string>

#include "tally/core.hpp"

namespace nb = nanobind;

namespace {

using host_array = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
using host_out = nb::ndarray<nb::c_contig, nb::device::cpu>;

tally::dtype dtype_of(const nb::dlpack::dtype& t, const char* fn) {
  using code = nb::dlpack::dtype_code;
  if (t.lanes == 1) {
    auto is = [&](code c, int bits) { return t.code == static_cast<std::uint8_t>(c) && t.bits == bits; };
    if (is(code::Float, 32)) return tally::dtype::float32;
    if (is(code::Float, 64)) return tally::dtype::float64;
    if (is(code::Float, 16)) return tally::dtype::float16;
    if (is(code::Bfloat, 16)) return tally::dtype::bfloat16;
    if (is(code::Int, 8)) return tally::dtype::int8;
    if (is(code::Int, 16)) return tally::dtype::int16;
    if (is(code::Int, 32)) return tally::dtype::int32;
    if (is(code::Int, 64)) return tally::dtype::int64;
    if (is(code::UInt, 8)) return tally::dtype::uint8;
    if (is(code::UInt, 16)) return tally::dtype::uint16;
    if (is(code::UInt, 32)) return tally::dtype::uint32;
    if (is(code::UInt, 64)) return tally::dtype::uint64;
    if (is(code::Bool, 8)) return tally::dtype::bool_;
  }
  throw nb::type_error((std::string("tally.") + fn +
                        ": unsupported dtype (float16, float32, float64, int8-int64, uint8-uint64 and bool are supported)")
                           .c_str());
}

// One element of type t at p as a Python number (the 16-bit floats as their exact value).
nb::object py_value(tally::dtype t, const void* p) {
  return tally::visit(t, [&](auto tag) -> nb::object {
    using T = typename decltype(tag)::type;
    T v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (std::is_same_v<T, tally::float16> || std::is_same_v<T, tally::bfloat16>)
      return nb::float_(static_cast<double>(tally::to_float(v)));
    else if constexpr (std::is_floating_point_v<T>) return nb::float_(static_cast<double>(v));
    else if constexpr (std::is_same_v<T, bool>) return nb::bool_(v);
    else return nb::int_(v);
  });
}

tally::array_ref ref(const host_array& a, const char* fn) {
  return {a.data(), static_cast<std::int64_t>(a.size()), dtype_of(a.dtype(), fn), tally::memory::host};
}

tally::options options(const std::string& accuracy, const std::string& backend, const char* fn) {
  tally::options o;
  if (accuracy == "exact") o.accuracy = tally::accuracy::exact;
  else if (accuracy == "fast") o.accuracy = tally::accuracy::fast;
  else throw nb::value_error((std::string("tally.") + fn + ": accuracy must be 'exact' or 'fast', not '" + accuracy + "'").c_str());
  if (backend == "auto") o.backend = tally::backend::automatic;
  else if (backend == "cpu") o.backend = tally::backend::cpu;
  else if (backend == "cuda") o.backend = tally::backend::cuda;
  else throw nb::value_error((std::string("tally.") + fn + ": backend must be 'auto', 'cpu' or 'cuda', not '" + backend + "'").c_str());
  return o;
}

nb::object reduce(tally::reduce_op op, const host_array& x, const host_array* y, const std::string& out,
                  const std::string& accuracy, const std::string& backend) {
  const char* fn = op == tally::reduce_op::sum ? "sum" : "dot";
  tally::array_ref rx = ref(x, fn), ry = y ? ref(*y, fn) : tally::array_ref{};
  tally::dtype rt = tally::result_dtype(op, rx.type);
  if (out == "float32") rt = tally::dtype::float32;
  else if (out == "float64") rt = tally::dtype::float64;
  else if (out == "int64") rt = tally::dtype::int64;
  else if (out == "uint64") rt = tally::dtype::uint64;
  else if (!out.empty()) throw nb::type_error((std::string("tally.") + fn + ": unsupported result dtype '" + out + "'").c_str());
  tally::options o = options(accuracy, backend, fn);
  alignas(8) unsigned char buf[8] = {};
  {
    nb::gil_scoped_release unlocked;  // the reduction may run for a while; other threads go on
    tally::reduce(op, rx, ry, buf, rt, o);
  }
  return py_value(rt, buf);
}

// (value, index) of the min or max: the value as a Python float or int, index -1 when none.
nb::tuple extreme(bool mx, bool skip_nan, const host_array& x, const std::string& backend) {
  const char* fn = mx ? (skip_nan ? "nanmax" : "max") : (skip_nan ? "nanmin" : "min");
  tally::array_ref rx = ref(x, fn);
  tally::options o = options("exact", backend, fn);
  alignas(8) unsigned char buf[8] = {};
  std::int64_t index = -1;
  {
    nb::gil_scoped_release unlocked;
    tally::extreme(mx ? tally::extreme_op::max : tally::extreme_op::min,
                   skip_nan ? tally::nan_policy::omit : tally::nan_policy::propagate, rx, buf, &index, o);
  }
  return nb::make_tuple(py_value(rx.type, buf), index);
}

// mean / norm2: one float32 or float64 result on the CPU backend, as a Python float.
template <class F> double float_result(F&& f, const host_array& x, const std::string& out, const char* fn) {
  tally::array_ref rx = ref(x, fn);
  tally::dtype rt = out == "float32" ? tally::dtype::float32 : tally::dtype::float64;
  alignas(8) unsigned char buf[8] = {};
  {
    nb::gil_scoped_release unlocked;
    f(rx, buf, rt, tally::options{tally::backend::cpu});
  }
  return rt == tally::dtype::float32 ? static_cast<double>(*reinterpret_cast<float*>(buf)) : *reinterpret_cast<double*>(buf);
}

}  // namespace

NB_MODULE(_tally, m) {
  m.doc() = "tally's compiled layer; use the functions of the tally package";
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const tally::error& e) {
      switch (e.code()) {
        case tally::errc::overflow: PyErr_SetString(PyExc_OverflowError, e.what()); break;
        case tally::errc::cuda_error:
        case tally::errc::no_gpu: PyErr_SetString(PyExc_RuntimeError, e.what()); break;
        default: PyErr_SetString(PyExc_ValueError, e.what()); break;
      }
    }
  });
  m.def("sum", [](const host_array& x, const std::string& out, const std::string& accuracy,
                  const std::string& backend) { return reduce(tally::reduce_op::sum, x, nullptr, out, accuracy, backend); },
        nb::arg("x"), nb::arg("out_dtype") = "", nb::arg("accuracy") = "exact", nb::arg("backend") = "auto");
  m.def("dot", [](const host_array& x, const host_array& y, const std::string& out, const std::string& accuracy,
                  const std::string& backend) { return reduce(tally::reduce_op::dot, x, &y, out, accuracy, backend); },
        nb::arg("x"), nb::arg("y"), nb::arg("out_dtype") = "", nb::arg("accuracy") = "exact", nb::arg("backend") = "auto");
  m.def("add", [](const host_array& x, const host_array& y, host_out out, const std::string& backend) {
          tally::options o = options("exact", backend, "add");
          tally::array_ref rx = ref(x, "add"), ry = ref(y, "add");
          tally::mutable_array_ref ro{out.data(), static_cast<std::int64_t>(out.size()), dtype_of(out.dtype(), "add"), tally::memory::host};
          nb::gil_scoped_release unlocked;
          tally::add(rx, ry, ro, o);
        },
        nb::arg("x"), nb::arg("y"), nb::arg("out"), nb::arg("backend") = "auto");
  m.def("mean", [](const host_array& x, const std::string& out) { return float_result(tally::mean, x, out, "mean"); },
        nb::arg("x"), nb::arg("out_dtype") = "float64");
  m.def("norm2", [](const host_array& x, const std::string& out) { return float_result(tally::norm2, x, out, "norm"); },
        nb::arg("x"), nb::arg("out_dtype") = "float64");
  m.def("extreme", &extreme, nb::arg("is_max"), nb::arg("skip_nan"), nb::arg("x"), nb::arg("backend") = "auto");
  m.def("cuda_available", &tally::cuda_available);
}
