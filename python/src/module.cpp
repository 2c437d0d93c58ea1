// tally._tally: the compiled layer of the Python module. Thin: it maps NumPy (DLPack) arrays
// onto tally::array_ref and tally::error onto Python exceptions; python/tally/__init__.py
// holds the documented API.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>

#include "tally/core.hpp"

namespace nb = nanobind;

namespace {

using host_array = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
using host_out = nb::ndarray<nb::c_contig, nb::device::cpu>;

tally::dtype dtype_of(const nb::dlpack::dtype& t, const char* fn) {
  using code = nb::dlpack::dtype_code;
  if (t.lanes == 1) {
    if (t.code == static_cast<std::uint8_t>(code::Float) && t.bits == 32) return tally::dtype::float32;
    if (t.code == static_cast<std::uint8_t>(code::Float) && t.bits == 64) return tally::dtype::float64;
    if (t.code == static_cast<std::uint8_t>(code::Int) && t.bits == 32) return tally::dtype::int32;
    if (t.code == static_cast<std::uint8_t>(code::Int) && t.bits == 64) return tally::dtype::int64;
  }
  throw nb::type_error((std::string("tally.") + fn +
                        ": unsupported dtype (float32, float64, int32 and int64 are supported)")
                           .c_str());
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
  else if (!out.empty()) throw nb::type_error((std::string("tally.") + fn + ": unsupported result dtype '" + out + "'").c_str());
  tally::options o = options(accuracy, backend, fn);
  alignas(8) unsigned char buf[8] = {};
  {
    nb::gil_scoped_release unlocked;  // the reduction may run for a while; other threads go on
    tally::reduce(op, rx, ry, buf, rt, o);
  }
  switch (rt) {
    case tally::dtype::float32: return nb::float_(static_cast<double>(*reinterpret_cast<float*>(buf)));
    case tally::dtype::float64: return nb::float_(*reinterpret_cast<double*>(buf));
    default: return nb::int_(*reinterpret_cast<std::int64_t*>(buf));
  }
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
  nb::object v;
  switch (rx.type) {
    case tally::dtype::float32: v = nb::float_(static_cast<double>(*reinterpret_cast<float*>(buf))); break;
    case tally::dtype::float64: v = nb::float_(*reinterpret_cast<double*>(buf)); break;
    case tally::dtype::int32: v = nb::int_(*reinterpret_cast<std::int32_t*>(buf)); break;
    case tally::dtype::int64: v = nb::int_(*reinterpret_cast<std::int64_t*>(buf)); break;
  }
  return nb::make_tuple(v, index);
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
  // Issue 5 operations (norm1, norm_inf, var/std, count_nonzero, axpy, scale): CPU backend.
  m.def("norm_ord", [](const host_array& x, const std::string& ord, const std::string& out, const std::string& accuracy) {
          tally::options o = options(accuracy, "cpu", "norm");
          tally::array_ref rx = ref(x, "norm");
          tally::dtype rt = out == "float32" ? tally::dtype::float32 : tally::dtype::float64;
          alignas(8) unsigned char buf[8] = {};
          {
            nb::gil_scoped_release unlocked;
            if (ord == "1") tally::norm1(rx, buf, rt, o);
            else if (ord == "inf") tally::norm_inf(rx, buf, rt, o);
            else tally::norm2(rx, buf, rt, o);
          }
          return rt == tally::dtype::float32 ? static_cast<double>(*reinterpret_cast<float*>(buf)) : *reinterpret_cast<double*>(buf);
        },
        nb::arg("x"), nb::arg("ord"), nb::arg("out_dtype") = "float64", nb::arg("accuracy") = "exact");
  m.def("var", [](const host_array& x, std::int64_t ddof, bool take_sqrt, const std::string& out, const std::string& accuracy) {
          tally::options o = options(accuracy, "cpu", take_sqrt ? "std" : "var");
          tally::array_ref rx = ref(x, take_sqrt ? "std" : "var");
          tally::dtype rt = out == "float32" ? tally::dtype::float32 : tally::dtype::float64;
          alignas(8) unsigned char buf[8] = {};
          {
            nb::gil_scoped_release unlocked;
            tally::var(rx, ddof, take_sqrt, buf, rt, o);
          }
          return rt == tally::dtype::float32 ? static_cast<double>(*reinterpret_cast<float*>(buf)) : *reinterpret_cast<double*>(buf);
        },
        nb::arg("x"), nb::arg("ddof"), nb::arg("take_sqrt"), nb::arg("out_dtype") = "float64", nb::arg("accuracy") = "exact");
  m.def("count_nonzero", [](const host_array& x) {
          tally::array_ref rx = ref(x, "count_nonzero");
          nb::gil_scoped_release unlocked;
          return tally::count_nonzero(rx, tally::options{tally::backend::cpu});
        },
        nb::arg("x"));
  // a_float is used for floating x, a_int for integer x (the Python layer converts a).
  m.def("axpy", [](double a_float, std::int64_t a_int, const host_array& x, host_out y) {
          tally::array_ref rx = ref(x, "axpy");
          tally::mutable_array_ref ry{y.data(), static_cast<std::int64_t>(y.size()), dtype_of(y.dtype(), "axpy"), tally::memory::host};
          float f = static_cast<float>(a_float);
          auto i = static_cast<std::int32_t>(a_int);
          const void* a = rx.type == tally::dtype::float32 ? static_cast<const void*>(&f)
                          : rx.type == tally::dtype::float64 ? static_cast<const void*>(&a_float)
                          : rx.type == tally::dtype::int32 ? static_cast<const void*>(&i) : static_cast<const void*>(&a_int);
          nb::gil_scoped_release unlocked;
          tally::axpy(a, rx, ry, tally::options{tally::backend::cpu});
        },
        nb::arg("a_float"), nb::arg("a_int"), nb::arg("x"), nb::arg("y"));
  m.def("scale", [](double a_float, std::int64_t a_int, host_out x) {
          tally::mutable_array_ref rx{x.data(), static_cast<std::int64_t>(x.size()), dtype_of(x.dtype(), "scale"), tally::memory::host};
          float f = static_cast<float>(a_float);
          auto i = static_cast<std::int32_t>(a_int);
          const void* a = rx.type == tally::dtype::float32 ? static_cast<const void*>(&f)
                          : rx.type == tally::dtype::float64 ? static_cast<const void*>(&a_float)
                          : rx.type == tally::dtype::int32 ? static_cast<const void*>(&i) : static_cast<const void*>(&a_int);
          nb::gil_scoped_release unlocked;
          tally::scale(a, rx, tally::options{tally::backend::cpu});
        },
        nb::arg("a_float"), nb::arg("a_int"), nb::arg("x"));
  m.def("extreme", &extreme, nb::arg("is_max"), nb::arg("skip_nan"), nb::arg("x"), nb::arg("backend") = "auto");
  m.def("cuda_available", &tally::cuda_available);
}
