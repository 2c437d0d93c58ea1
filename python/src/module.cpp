// tally._tally: the compiled layer of the Python module. Thin: it maps DLPack arrays (NumPy,
// CuPy, PyTorch, anything nanobind's device-agnostic ndarray accepts, and objects that only
// have __cuda_array_interface__) onto tally::array_ref, a stream handle onto options.stream,
// and tally::error onto Python exceptions. python/tally/__init__.py holds the documented API;
// python/tally/_arrays.py prepares the arrays (flattening, stream choice, DLPack export).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>
#include <string>
#include <vector>

#include "tally/core.hpp"
#include "tally/ops/elementwise_small.hpp"  // ops::ew::round_half (the scalar a of axpy/scale)
#include "tally/shapes.hpp"

namespace nb = nanobind;

namespace {

// Any device, any dtype, any strides: checked below, so the messages are tally's own.
using in_array = nb::ndarray<nb::ro>;
using out_array = nb::ndarray<>;

// DLPack device types (dlpack.h): kDLCPU, kDLCUDA, kDLCUDAHost (pinned), kDLCUDAManaged.
constexpr int kCPU = 1, kCUDA = 2, kCUDAHost = 3, kCUDAManaged = 13;

std::string prefix(const char* fn) { return std::string("tally.") + fn + ": "; }

// A DLPack element type by name, for messages: complex64, float8_e4m3fn, float32x4 (4 lanes).
std::string dlpack_name(const nb::dlpack::dtype& t) {
  static const char* const kinds[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool",
                                      "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
                                      "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
                                      "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "bcomplex"};
  constexpr std::size_t named = sizeof kinds / sizeof kinds[0];
  std::string s;
  if (t.code >= named) s = "code" + std::to_string(t.code) + "_" + std::to_string(t.bits);  // (a newer DLPack code)
  else if (t.code <= 6 || t.code == named - 1) s = kinds[t.code] + std::to_string(t.bits);
  else s = kinds[t.code];  // (the float8/6/4 names say their size)
  if (t.lanes != 1) s += "x" + std::to_string(t.lanes);
  return s;
}

tally::dtype dtype_of(const nb::dlpack::dtype& t, const char* fn, const char* name) {
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
  throw nb::type_error((prefix(fn) + name + " has unsupported dtype " + dlpack_name(t) +
                        " (float16, bfloat16, float32, float64, int8-int64, uint8-uint64 and bool are supported)").c_str());
}

// Where a DLPack array lives, as tally's memory kind; TypeError for devices tally cannot read.
tally::memory memory_of(int device_type, const char* fn, const char* name) {
  switch (device_type) {
    case kCPU:
    case kCUDAHost: return tally::memory::host;
    case kCUDA: return tally::memory::device;
    case kCUDAManaged: return tally::memory::unknown;  // the runtime says: readable by both sides
    default:
      throw nb::type_error((prefix(fn) + name + " is on DLPack device type " + std::to_string(device_type) +
                            "; tally reads CPU and CUDA memory only").c_str());
  }
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

// The C++ layer reads contiguous 1-D data: any shape is accepted if it is dense in C order
// (the Python layer flattens, copying in the array's own library when it has to).
template <class A> std::int64_t dense_size(const A& a, const char* fn, const char* name) {
  std::int64_t expect = 1, n = 1;
  for (std::size_t i = 0; i < a.ndim(); ++i) n *= static_cast<std::int64_t>(a.shape(i));
  if (n > 1)
    for (std::size_t i = a.ndim(); i-- > 0;) {
      if (a.shape(i) != 1 && a.stride(i) != expect)
        throw nb::value_error((prefix(fn) + name + " is not C-contiguous (the C++ layer has no strides yet)").c_str());
      expect *= static_cast<std::int64_t>(a.shape(i));
    }
  return n;
}

tally::array_ref ref(const in_array& a, const char* fn, const char* name) {
  std::int64_t n = dense_size(a, fn, name);
  return {a.data(), n, dtype_of(a.dtype(), fn, name), memory_of(a.device_type(), fn, name)};
}

tally::options options(const std::string& accuracy, const std::string& backend, std::uintptr_t stream,
                       const char* fn) {
  tally::options o;
  if (accuracy == "exact") o.accuracy = tally::accuracy::exact;
  else if (accuracy == "fast") o.accuracy = tally::accuracy::fast;
  else throw nb::value_error((prefix(fn) + "accuracy must be 'exact' or 'fast', not '" + accuracy + "'").c_str());
  if (backend == "auto") o.backend = tally::backend::automatic;
  else if (backend == "cpu") o.backend = tally::backend::cpu;
  else if (backend == "cuda") o.backend = tally::backend::cuda;
  else throw nb::value_error((prefix(fn) + "backend must be 'auto', 'cpu' or 'cuda', not '" + backend + "'").c_str());
  // A CUDA stream handle as an integer (cupy's Stream.ptr, torch's Stream.cuda_stream): 0 is
  // the legacy default stream, 2 cudaStreamPerThread.
  o.stream = reinterpret_cast<tally::stream_t>(stream);
  return o;
}

nb::object reduce(tally::reduce_op op, const in_array& x, const in_array* y, const std::string& out,
                  const std::string& accuracy, const std::string& backend, std::uintptr_t stream) {
  const char* fn = op == tally::reduce_op::sum ? "sum" : "dot";
  tally::array_ref rx = ref(x, fn, "x"), ry = y ? ref(*y, fn, "y") : tally::array_ref{};
  tally::dtype rt = tally::result_dtype(op, rx.type);
  if (out == "float32") rt = tally::dtype::float32;
  else if (out == "float64") rt = tally::dtype::float64;
  else if (out == "int64") rt = tally::dtype::int64;
  else if (out == "uint64") rt = tally::dtype::uint64;
  else if (!out.empty()) throw nb::type_error((prefix(fn) + "unsupported result dtype '" + out + "'").c_str());
  tally::options o = options(accuracy, backend, stream, fn);
  alignas(8) unsigned char buf[8] = {};
  {
    nb::gil_scoped_release unlocked;  // the reduction may run for a while; other threads go on
    tally::reduce(op, rx, ry, buf, rt, o);
  }
  return py_value(rt, buf);
}

// The scalar a of axpy/scale in x's element type: float16 / bfloat16 rounded once from the
// Python float (to nearest even, as NumPy converts it), other floats converted, integers from
// a_int (uint64: a_int carries its 64 bits). bool and unknown types are refused by the C++ layer.
struct scalar_arg {
  alignas(8) unsigned char buf[8] = {};
  scalar_arg(tally::dtype t, double a_float, std::int64_t a_int) {
    if (tally::dtype_size(t) == 0) return;
    tally::visit(t, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T v;
      if constexpr (std::is_same_v<T, tally::float16> || std::is_same_v<T, tally::bfloat16>)
        v = tally::ops::ew::round_half<T>(a_float);
      else if constexpr (std::is_floating_point_v<T>) v = static_cast<T>(a_float);
      else v = static_cast<T>(a_int);
      std::memcpy(buf, &v, sizeof v);
    });
  }
  const void* ptr() const { return buf; }
};

const char* extreme_name(bool mx, bool skip_nan) {
  return mx ? (skip_nan ? "nanmax" : "max") : (skip_nan ? "nanmin" : "min");
}

// (value, index) of the min or max of a contiguous (array_ref) or strided (strided_ref) view:
// the value as a Python float or int, index -1 when none.
template <class Ref>
nb::tuple extreme_of(bool mx, bool skip_nan, const Ref& rx, const std::string& backend, std::uintptr_t stream) {
  const char* fn = extreme_name(mx, skip_nan);
  tally::options o = options("exact", backend, stream, fn);
  alignas(8) unsigned char buf[8] = {};
  std::int64_t index = -1;
  {
    nb::gil_scoped_release unlocked;
    tally::extreme(mx ? tally::extreme_op::max : tally::extreme_op::min,
                   skip_nan ? tally::nan_policy::omit : tally::nan_policy::propagate, rx, buf, &index, o);
  }
  return nb::make_tuple(py_value(rx.type, buf), index);
}

nb::tuple extreme(bool mx, bool skip_nan, const in_array& x, const std::string& backend, std::uintptr_t stream) {
  return extreme_of(mx, skip_nan, ref(x, extreme_name(mx, skip_nan), "x"), backend, stream);
}

// (min, min index, max, max index) of a contiguous view (tally::minmax: one read on the CPU).
nb::tuple minmax(bool skip_nan, const in_array& x, const std::string& backend, std::uintptr_t stream) {
  const char* fn = skip_nan ? "nanminmax" : "minmax";
  tally::array_ref rx = ref(x, fn, "x");
  tally::options o = options("exact", backend, stream, fn);
  alignas(8) unsigned char lo[8] = {}, hi[8] = {};
  std::int64_t lo_index = -1, hi_index = -1;
  {
    nb::gil_scoped_release unlocked;
    tally::minmax(skip_nan ? tally::nan_policy::omit : tally::nan_policy::propagate, rx, lo, &lo_index, hi, &hi_index, o);
  }
  return nb::make_tuple(py_value(rx.type, lo), lo_index, py_value(rx.type, hi), hi_index);
}

// out = x + y. Floating data in device memory: enqueued on `stream` (tally::add_async) and
// not waited for, like the array library's own `+`. Integers (whose overflow is reported) and
// host data: blocking.
void add(const in_array& x, const in_array& y, const out_array& out, const std::string& backend, std::uintptr_t stream) {
  tally::options o = options("exact", backend, stream, "add");
  tally::array_ref rx = ref(x, "add", "x"), ry = ref(y, "add", "y");
  in_array out_ro(out);
  tally::array_ref ro_ = ref(out_ro, "add", "out");
  tally::mutable_array_ref ro{out.data(), ro_.size, ro_.type, ro_.where};
  bool floating = rx.type == tally::dtype::float32 || rx.type == tally::dtype::float64;
  nb::gil_scoped_release unlocked;
  if (floating && ro.where == tally::memory::device && o.backend != tally::backend::cpu)
    tally::add_async(rx, ry, ro, nullptr, o);
  else
    tally::add(rx, ry, ro, o);
}

// mean / norm2: one float32 or float64 result, as a Python float.
template <class F>
double float_result(F&& f, const in_array& x, const std::string& out, const std::string& backend,
                    std::uintptr_t stream, const char* fn) {
  tally::array_ref rx = ref(x, fn, "x");
  tally::dtype rt = out == "float32" ? tally::dtype::float32 : tally::dtype::float64;
  tally::options o = options("exact", backend, stream, fn);
  alignas(8) unsigned char buf[8] = {};
  {
    nb::gil_scoped_release unlocked;
    f(rx, buf, rt, o);
  }
  return rt == tally::dtype::float32 ? static_cast<double>(*reinterpret_cast<float*>(buf)) : *reinterpret_cast<double*>(buf);
}

// An ndarray over an object that only has __cuda_array_interface__ (version 2 or 3): device
// memory, zero copy, keeping `obj` alive. Byte strides become element strides; the `stream`
// entry is the Python layer's business.
nb::object from_cuda_array_interface(nb::handle obj) {
  nb::dict cai = nb::borrow<nb::dict>(obj.attr("__cuda_array_interface__"));
  const char* fn = "cuda_array_interface";
  if (cai.contains("mask") && !cai["mask"].is_none())
    throw nb::value_error("tally: masked __cuda_array_interface__ arrays are not supported");
  std::string typestr = nb::cast<std::string>(cai["typestr"]);
  if (typestr.size() < 3 || (typestr[0] != '<' && typestr[0] != '|'))
    throw nb::type_error(("tally: __cuda_array_interface__ typestr '" + typestr +
                          "' is not little-endian or native; unsupported dtype").c_str());
  nb::dlpack::dtype dt;
  int bytes = std::stoi(typestr.substr(2));
  dt.bits = static_cast<std::uint8_t>(8 * bytes);
  dt.lanes = 1;
  using code = nb::dlpack::dtype_code;
  switch (typestr[1]) {
    case 'f': dt.code = static_cast<std::uint8_t>(code::Float); break;
    case 'i': dt.code = static_cast<std::uint8_t>(code::Int); break;
    case 'u': dt.code = static_cast<std::uint8_t>(code::UInt); break;
    case 'b': dt.code = static_cast<std::uint8_t>(code::Bool); break;
    case 'c': dt.code = static_cast<std::uint8_t>(code::Complex); break;
    default:
      throw nb::type_error(("tally: __cuda_array_interface__ typestr '" + typestr + "': unsupported dtype").c_str());
  }
  nb::tuple data = nb::borrow<nb::tuple>(cai["data"]);
  auto ptr = nb::cast<std::uintptr_t>(data[0]);
  bool readonly = nb::cast<bool>(data[1]);
  nb::tuple shape_t = nb::borrow<nb::tuple>(cai["shape"]);
  std::vector<std::size_t> shape;
  for (nb::handle s : shape_t) shape.push_back(nb::cast<std::size_t>(s));
  std::vector<std::int64_t> strides;
  bool has_strides = cai.contains("strides") && !cai["strides"].is_none();
  if (has_strides)
    for (nb::handle s : nb::borrow<nb::tuple>(cai["strides"])) {
      auto b = nb::cast<std::int64_t>(s);
      if (b % bytes != 0)
        throw nb::value_error(("tally." + std::string(fn) + ": stride of " + std::to_string(b) +
                               " bytes is not a multiple of the element size").c_str());
      strides.push_back(b / bytes);
    }
  const std::int64_t* sp = has_strides ? strides.data() : nullptr;
  if (readonly)
    return nb::cast(nb::ndarray<nb::ro>(reinterpret_cast<const void*>(ptr), shape.size(), shape.data(), obj, sp, dt, kCUDA, 0));
  return nb::cast(nb::ndarray<>(reinterpret_cast<void*>(ptr), shape.size(), shape.data(), obj, sp, dt, kCUDA, 0));
}

// x (a NumPy array of uint16, any shape and strides) as an ndarray of element type bfloat16:
// the same memory, shape and strides, zero copy, keeping x alive. The Python layer passes
// NumPy arrays of ml_dtypes.bfloat16 so (NumPy's buffer protocol and DLPack export have no
// bfloat16). writable: an array tally writes (add's out, axpy's y, scale's x, axis results).
template <class Out, class In> nb::object as_bfloat16(const In& a, nb::handle owner) {
  nb::dlpack::dtype dt;
  dt.code = static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bfloat);
  dt.bits = 16;
  dt.lanes = 1;
  std::vector<std::size_t> shape(a.ndim());
  std::vector<std::int64_t> strides(a.ndim());
  for (std::size_t i = 0; i < a.ndim(); ++i) shape[i] = a.shape(i), strides[i] = a.stride(i);
  return nb::cast(Out(a.data(), a.ndim(), shape.data(), owner, strides.data(), dt, kCPU, 0));
}

// (array_api: an nb_ndarray object, which can be passed to _tally more than once, unlike a
// DLPack capsule; convert = false: a converted copy would not be the caller's memory)
nb::object bfloat16_view(nb::handle x, bool writable) {
  using bits = nb::ndarray<std::uint16_t, nb::device::cpu>;
  using bits_ro = nb::ndarray<nb::ro, std::uint16_t, nb::device::cpu>;
  if (writable) return as_bfloat16<nb::ndarray<nb::array_api>>(nb::cast<bits>(x, false), x);
  return as_bfloat16<nb::ndarray<nb::ro, nb::array_api>>(nb::cast<bits_ro>(x, false), x);
}

// ---- strided 1-D views and axis reductions (tally/shapes.hpp) ---------------------------------
// Any strides (nanobind gives them in elements, any sign); the C++ shape layer validates
// the rest (element type, extents, address range, the cuda backend's refusals).

tally::strided_ref strided_of(const in_array& a, const char* fn) {
  if (a.ndim() != 1) throw nb::value_error((prefix(fn) + "a strided view must be 1-D").c_str());
  return {a.data(), static_cast<std::int64_t>(a.shape(0)), a.shape(0) > 1 ? a.stride(0) : 1,
          dtype_of(a.dtype(), fn, "x"), memory_of(a.device_type(), fn, "x")};
}

tally::matrix_ref matrix_of(const in_array& a, const char* fn) {
  if (a.ndim() != 2) throw nb::value_error((prefix(fn) + "axis reductions take 2-D arrays here").c_str());
  return {a.data(), static_cast<std::int64_t>(a.shape(0)), static_cast<std::int64_t>(a.shape(1)), a.stride(0),
          a.stride(1), dtype_of(a.dtype(), fn, "x"), memory_of(a.device_type(), fn, "x")};
}

// A result array made by the Python layer (C-contiguous, one element per output).
tally::mutable_array_ref out_of(const out_array& o, const char* fn, const char* name) {
  in_array ro(o);
  tally::array_ref r = ref(ro, fn, name);
  return {o.data(), r.size, r.type, r.where};
}

tally::dtype sum_type(tally::dtype in, const std::string& out, const char* fn) {
  if (out.empty()) return tally::result_dtype(tally::reduce_op::sum, in);
  if (out == "float32") return tally::dtype::float32;
  if (out == "float64") return tally::dtype::float64;
  if (out == "int64") return tally::dtype::int64;
  throw nb::type_error((prefix(fn) + "unsupported result dtype '" + out + "'").c_str());
}

nb::object sum_strided(const in_array& x, const std::string& out, const std::string& accuracy,
                       const std::string& backend, std::uintptr_t stream) {
  tally::strided_ref rx = strided_of(x, "sum");
  tally::dtype rt = sum_type(rx.type, out, "sum");
  tally::options o = options(accuracy, backend, stream, "sum");
  alignas(8) unsigned char buf[8] = {};
  {
    nb::gil_scoped_release unlocked;
    tally::reduce(tally::reduce_op::sum, rx, buf, rt, o);
  }
  return py_value(rt, buf);
}

nb::object mean_strided(const in_array& x, const std::string& out, const std::string& backend, std::uintptr_t stream) {
  tally::strided_ref rx = strided_of(x, "mean");
  tally::dtype rt = out == "float32" ? tally::dtype::float32 : tally::dtype::float64;
  tally::options o = options("exact", backend, stream, "mean");
  alignas(8) unsigned char buf[8] = {};
  {
    nb::gil_scoped_release unlocked;
    tally::mean(rx, buf, rt, o);
  }
  return py_value(rt, buf);
}

nb::tuple extreme_strided(bool mx, bool skip_nan, const in_array& x, const std::string& backend, std::uintptr_t stream) {
  return extreme_of(mx, skip_nan, strided_of(x, extreme_name(mx, skip_nan)), backend, stream);
}

// Along `axis` (0 or 1) of a 2-D x into out (the Python layer allocates it: float32/float64 or
// int64, one element per output). Blocking (the C++ layer synchronises the stream).
void sum_axis(const in_array& x, int axis, const out_array& out, const std::string& accuracy,
              const std::string& backend, std::uintptr_t stream) {
  tally::matrix_ref rx = matrix_of(x, "sum");
  tally::mutable_array_ref ro = out_of(out, "sum", "out");
  tally::options o = options(accuracy, backend, stream, "sum");
  nb::gil_scoped_release unlocked;
  tally::reduce_axis(tally::reduce_op::sum, rx, axis, ro, o);
}

void mean_axis(const in_array& x, int axis, const out_array& out, const std::string& backend, std::uintptr_t stream) {
  tally::matrix_ref rx = matrix_of(x, "mean");
  tally::mutable_array_ref ro = out_of(out, "mean", "out");
  tally::options o = options("exact", backend, stream, "mean");
  nb::gil_scoped_release unlocked;
  tally::mean_axis(rx, axis, ro, o);
}

// values (x's type) and/or indices (int64); None leaves that one out.
void extreme_axis(bool mx, bool skip_nan, const in_array& x, int axis, const std::optional<out_array>& values,
                  const std::optional<out_array>& indices, const std::string& backend, std::uintptr_t stream) {
  const char* fn = extreme_name(mx, skip_nan);
  tally::matrix_ref rx = matrix_of(x, fn);
  tally::mutable_array_ref rv{}, ri{};
  if (values) rv = out_of(*values, fn, "values");
  if (indices) ri = out_of(*indices, fn, "indices");
  tally::options o = options("exact", backend, stream, fn);
  nb::gil_scoped_release unlocked;
  tally::extreme_axis(mx ? tally::extreme_op::max : tally::extreme_op::min,
                      skip_nan ? tally::nan_policy::omit : tally::nan_policy::propagate, rx, axis, rv, ri, o);
}


// ---- N-D axis reductions (python/tally/_axis.py) ----------------------------------------------
// The Python layer views an N-D reduction as matrices (kept extent x reduced extent) or as
// contiguous 1-D slices at element offsets from x's data (x: any ndim and strides; the offsets
// come from x's own shape and strides, so every element read is one of x's). The loops run
// here, without the GIL, so many matrices or slices cost no Python calls.
using offsets_in = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

const void* element_at(const in_array& x, std::int64_t offset, tally::dtype t) {
  return static_cast<const char*>(x.data()) + offset * static_cast<std::int64_t>(tally::dtype_size(t));
}

// Every element at + i s1 + j s2 (i < n1, j < n2) must be within the element offsets x's own
// elements span (its shape and strides): the Python layer computes the offsets from them, and
// a direct call of this private layer with others is refused here, not read out of bounds.
void within_x(const char* fn, const in_array& x, std::int64_t at, std::int64_t n1, std::int64_t s1, std::int64_t n2,
              std::int64_t s2) {
  if (n1 < 0 || n2 < 0) throw nb::value_error((prefix(fn) + "negative extent " + std::to_string(n1 < 0 ? n1 : n2)).c_str());
  if (n1 == 0 || n2 == 0) return;
  __int128 lo = 0, hi = 0;
  for (std::size_t d = 0; d < x.ndim(); ++d) {
    if (x.shape(d) == 0) lo = 1, hi = 0;  // (no element: nothing may be read)
    else (x.stride(d) < 0 ? lo : hi) += static_cast<__int128>(x.shape(d) - 1) * x.stride(d);
  }
  __int128 a = at, b = at;
  const __int128 e1 = static_cast<__int128>(n1 - 1) * s1, e2 = static_cast<__int128>(n2 - 1) * s2;
  (e1 < 0 ? a : b) += e1;
  (e2 < 0 ? a : b) += e2;
  if (a < lo || b > hi)
    throw nb::value_error((prefix(fn) + "the elements at offset " + std::to_string(at) +
                           " reach outside x (an offset, extent or stride that is not x's own)").c_str());
}

// One output block of out: elements [first, first + count).
tally::mutable_array_ref block_of(const tally::mutable_array_ref& out, std::int64_t first, std::int64_t count) {
  if (out.data == nullptr) return {};
  return {static_cast<char*>(out.data) + first * static_cast<std::int64_t>(tally::dtype_size(out.type)), count,
          out.type, out.where};
}

// Along axis 1 of offsets.shape(0) matrices (rows, cols) with strides (row_stride, col_stride)
// at element offsets offsets[b] from x's data; matrix b's rows outputs go to
// out[b * rows, (b + 1) * rows) (out / values / indices: C-contiguous, one element per output,
// made by the Python layer; None leaves one out). kind: sum, mean, min, max, nanmin, nanmax.
// Blocking; on the CUDA backend each matrix is one call (one stream synchronisation).
void axis_batches(const std::string& kind, const in_array& x, std::int64_t rows, std::int64_t cols,
                  std::int64_t row_stride, std::int64_t col_stride, const offsets_in& offsets,
                  const std::optional<out_array>& out, const std::optional<out_array>& indices,
                  const std::string& accuracy, const std::string& backend, std::uintptr_t stream) {
  bool is_sum = kind == "sum", is_mean = kind == "mean";
  bool mx = kind == "max" || kind == "nanmax", skip_nan = kind == "nanmin" || kind == "nanmax";
  if (!is_sum && !is_mean && !mx && kind != "min" && kind != "nanmin")
    throw nb::value_error(("tally: unknown axis reduction '" + kind + "'").c_str());
  const char* fn = is_sum ? "sum" : is_mean ? "mean" : extreme_name(mx, skip_nan);
  tally::dtype t = dtype_of(x.dtype(), fn, "x");
  tally::memory m = memory_of(x.device_type(), fn, "x");
  tally::mutable_array_ref ro{}, ri{};
  if (out) ro = out_of(*out, fn, "out");
  if (indices) ri = out_of(*indices, fn, "indices");
  if ((is_sum || is_mean) && !out) throw nb::value_error((prefix(fn) + "out is required").c_str());
  auto batches = static_cast<std::int64_t>(offsets.shape(0));
  for (const tally::mutable_array_ref* r : {&ro, &ri})
    if (r->data != nullptr && r->size != batches * rows)
      throw nb::value_error((prefix(fn) + "a result array has " + std::to_string(r->size) + " elements, not " +
                             std::to_string(batches * rows)).c_str());
  tally::options o = options(is_sum ? accuracy : "exact", backend, stream, fn);
  const std::int64_t* off = offsets.data();
  for (std::int64_t b = 0; b < batches; ++b) within_x(fn, x, off[b], rows, row_stride, cols, col_stride);
  nb::gil_scoped_release unlocked;
  if (rows == 0) return;
  for (std::int64_t b = 0; b < batches; ++b) {
    tally::matrix_ref mb{element_at(x, off[b], t), rows, cols, row_stride, col_stride, t, m};
    tally::mutable_array_ref vb = block_of(ro, b * rows, rows), ib = block_of(ri, b * rows, rows);
    if (is_sum) tally::reduce_axis(tally::reduce_op::sum, mb, 1, vb, o);
    else if (is_mean) tally::mean_axis(mb, 1, vb, o);
    else
      tally::extreme_axis(mx ? tally::extreme_op::max : tally::extreme_op::min,
                          skip_nan ? tally::nan_policy::omit : tally::nan_policy::propagate, mb, 1, vb, ib, o);
  }
}

// One 1-D call per output: out[i] = f(the n contiguous elements at element offset offsets[i]
// from x's data), f = norm1, norm2, norm_inf, var or std (ddof) as out's type (float32 or
// float64; out is host memory, C-contiguous, offsets.shape(0) elements). Each output is
// exactly the whole-array function of its slice. Blocking; on the CUDA backend one stream
// synchronisation per output.
void slices(const std::string& kind, const in_array& x, std::int64_t n, const offsets_in& offsets, std::int64_t ddof,
            const out_array& out, const std::string& accuracy, const std::string& backend, std::uintptr_t stream) {
  bool is_var = kind == "var" || kind == "std";
  if (!is_var && kind != "norm1" && kind != "norm2" && kind != "norminf")
    throw nb::value_error(("tally: unknown per-slice reduction '" + kind + "'").c_str());
  const char* fn = is_var ? kind.c_str() : "norm";
  tally::dtype t = dtype_of(x.dtype(), fn, "x");
  tally::memory m = memory_of(x.device_type(), fn, "x");
  tally::mutable_array_ref ro = out_of(out, fn, "out");
  if (ro.where == tally::memory::device || (ro.type != tally::dtype::float32 && ro.type != tally::dtype::float64))
    throw nb::value_error((prefix(fn) + "out must be a host float32 or float64 array").c_str());
  auto outputs = static_cast<std::int64_t>(offsets.shape(0));
  if (ro.size != outputs)
    throw nb::value_error((prefix(fn) + "out has " + std::to_string(ro.size) + " elements, not " +
                           std::to_string(outputs)).c_str());
  tally::options o = options(accuracy, backend, stream, fn);
  const std::int64_t* off = offsets.data();
  for (std::int64_t i = 0; i < outputs; ++i) within_x(fn, x, off[i], n, 1, 1, 0);
  auto esz = static_cast<std::int64_t>(tally::dtype_size(ro.type));
  nb::gil_scoped_release unlocked;
  for (std::int64_t i = 0; i < outputs; ++i) {
    tally::array_ref xi{element_at(x, off[i], t), n, t, m};
    void* r = static_cast<char*>(ro.data) + i * esz;
    if (is_var) tally::var(xi, ddof, kind == "std", r, ro.type, o);
    else if (kind == "norm1") tally::norm1(xi, r, ro.type, o);
    else if (kind == "norm2") tally::norm2(xi, r, ro.type, o);
    else tally::norm_inf(xi, r, ro.type, o);
  }
}

}  // namespace

NB_MODULE(_tally, m) {
  m.doc() = "tally's compiled layer; use the functions of the tally package";
  // tally::errc -> Python exception (documented in python/tally/__init__.py).
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const tally::error& e) {
      switch (e.code()) {
        case tally::errc::overflow: PyErr_SetString(PyExc_OverflowError, e.what()); break;
        case tally::errc::wrong_memory: PyErr_SetString(PyExc_TypeError, e.what()); break;
        case tally::errc::cuda_error:
        case tally::errc::no_gpu: PyErr_SetString(PyExc_RuntimeError, e.what()); break;
        default: PyErr_SetString(PyExc_ValueError, e.what()); break;  // invalid_argument, length_mismatch,
                                                                       // null_pointer, empty_input
      }
    }
  });
  m.def("sum", [](const in_array& x, const std::string& out, const std::string& accuracy, const std::string& backend,
                  std::uintptr_t stream) { return reduce(tally::reduce_op::sum, x, nullptr, out, accuracy, backend, stream); },
        nb::arg("x"), nb::arg("out_dtype") = "", nb::arg("accuracy") = "exact", nb::arg("backend") = "auto",
        nb::arg("stream") = 0);
  m.def("dot", [](const in_array& x, const in_array& y, const std::string& out, const std::string& accuracy,
                  const std::string& backend, std::uintptr_t stream) {
          return reduce(tally::reduce_op::dot, x, &y, out, accuracy, backend, stream);
        },
        nb::arg("x"), nb::arg("y"), nb::arg("out_dtype") = "", nb::arg("accuracy") = "exact", nb::arg("backend") = "auto",
        nb::arg("stream") = 0);
  m.def("add", &add, nb::arg("x"), nb::arg("y"), nb::arg("out"), nb::arg("backend") = "auto", nb::arg("stream") = 0);
  m.def("mean", [](const in_array& x, const std::string& out, const std::string& backend, std::uintptr_t stream) {
          auto mean = [](tally::array_ref a, void* r, tally::dtype t, const tally::options& o) { tally::mean(a, r, t, o); };
          return float_result(mean, x, out, backend, stream, "mean");
        },
        nb::arg("x"), nb::arg("out_dtype") = "float64", nb::arg("backend") = "auto", nb::arg("stream") = 0);
  m.def("norm2", [](const in_array& x, const std::string& out, const std::string& backend, std::uintptr_t stream) {
          return float_result(tally::norm2, x, out, backend, stream, "norm");
        },
        nb::arg("x"), nb::arg("out_dtype") = "float64", nb::arg("backend") = "auto", nb::arg("stream") = 0);
  m.def("extreme", &extreme, nb::arg("is_max"), nb::arg("skip_nan"), nb::arg("x"), nb::arg("backend") = "auto",
        nb::arg("stream") = 0);
  m.def("minmax", &minmax, nb::arg("skip_nan"), nb::arg("x"), nb::arg("backend") = "auto", nb::arg("stream") = 0);
  m.def("from_cuda_array_interface", &from_cuda_array_interface, nb::arg("obj"));
  m.def("bfloat16_view", &bfloat16_view, nb::arg("x"), nb::arg("writable"));
  // norm1, norm_inf, var/std, count_nonzero, axpy, scale (issue 5): both backends.
  m.def("norm_ord", [](const in_array& x, const std::string& ord, const std::string& out, const std::string& accuracy,
                       const std::string& backend, std::uintptr_t stream) {
          tally::options o = options(accuracy, backend, stream, "norm");
          tally::array_ref rx = ref(x, "norm", "x");
          tally::dtype rt = out == "float32" ? tally::dtype::float32 : tally::dtype::float64;
          alignas(8) unsigned char buf[8] = {};
          {
            nb::gil_scoped_release unlocked;
            if (ord == "1") tally::norm1(rx, buf, rt, o);
            else if (ord == "inf") tally::norm_inf(rx, buf, rt, o);
            else tally::norm2(rx, buf, rt, o);
          }
          return py_value(rt, buf);
        },
        nb::arg("x"), nb::arg("ord"), nb::arg("out_dtype") = "float64", nb::arg("accuracy") = "exact",
        nb::arg("backend") = "auto", nb::arg("stream") = 0);
  m.def("var", [](const in_array& x, std::int64_t ddof, bool take_sqrt, const std::string& out, const std::string& accuracy,
                  const std::string& backend, std::uintptr_t stream) {
          const char* fn = take_sqrt ? "std" : "var";
          tally::options o = options(accuracy, backend, stream, fn);
          tally::array_ref rx = ref(x, fn, "x");
          tally::dtype rt = out == "float32" ? tally::dtype::float32 : tally::dtype::float64;
          alignas(8) unsigned char buf[8] = {};
          {
            nb::gil_scoped_release unlocked;
            tally::var(rx, ddof, take_sqrt, buf, rt, o);
          }
          return py_value(rt, buf);
        },
        nb::arg("x"), nb::arg("ddof"), nb::arg("take_sqrt"), nb::arg("out_dtype") = "float64", nb::arg("accuracy") = "exact",
        nb::arg("backend") = "auto", nb::arg("stream") = 0);
  m.def("count_nonzero", [](const in_array& x, const std::string& backend, std::uintptr_t stream) {
          tally::array_ref rx = ref(x, "count_nonzero", "x");
          tally::options o = options("exact", backend, stream, "count_nonzero");
          nb::gil_scoped_release unlocked;
          return tally::count_nonzero(rx, o);
        },
        nb::arg("x"), nb::arg("backend") = "auto", nb::arg("stream") = 0);
  // a_float is used for floating x, a_int for integer x (the Python layer checks a).
  m.def("axpy", [](double a_float, std::int64_t a_int, const in_array& x, const out_array& y, const std::string& backend,
                   std::uintptr_t stream) {
          tally::array_ref rx = ref(x, "axpy", "x");
          in_array y_ro(y);
          tally::array_ref ry_ = ref(y_ro, "axpy", "y");
          tally::mutable_array_ref ry{y.data(), ry_.size, ry_.type, ry_.where};
          scalar_arg a(ry.type, a_float, a_int);
          tally::options o = options("exact", backend, stream, "axpy");
          nb::gil_scoped_release unlocked;
          tally::axpy(a.ptr(), rx, ry, o);
        },
        nb::arg("a_float"), nb::arg("a_int"), nb::arg("x"), nb::arg("y"), nb::arg("backend") = "auto", nb::arg("stream") = 0);
  m.def("scale", [](double a_float, std::int64_t a_int, const out_array& x, const std::string& backend, std::uintptr_t stream) {
          in_array x_ro(x);
          tally::array_ref rx_ = ref(x_ro, "scale", "x");
          tally::mutable_array_ref rx{x.data(), rx_.size, rx_.type, rx_.where};
          scalar_arg a(rx.type, a_float, a_int);
          tally::options o = options("exact", backend, stream, "scale");
          nb::gil_scoped_release unlocked;
          tally::scale(a.ptr(), rx, o);
        },
        nb::arg("a_float"), nb::arg("a_int"), nb::arg("x"), nb::arg("backend") = "auto", nb::arg("stream") = 0);
  m.def("cuda_available", &tally::cuda_available);
  // strided 1-D views and axis reductions (tally/shapes.hpp)
  m.def("sum_strided", &sum_strided, nb::arg("x"), nb::arg("out_dtype") = "", nb::arg("accuracy") = "exact",
        nb::arg("backend") = "auto", nb::arg("stream") = 0);
  m.def("mean_strided", &mean_strided, nb::arg("x"), nb::arg("out_dtype") = "float64", nb::arg("backend") = "auto",
        nb::arg("stream") = 0);
  m.def("extreme_strided", &extreme_strided, nb::arg("is_max"), nb::arg("skip_nan"), nb::arg("x"),
        nb::arg("backend") = "auto", nb::arg("stream") = 0);
  m.def("sum_axis", &sum_axis, nb::arg("x"), nb::arg("axis"), nb::arg("out"), nb::arg("accuracy") = "exact",
        nb::arg("backend") = "auto", nb::arg("stream") = 0);
  m.def("mean_axis", &mean_axis, nb::arg("x"), nb::arg("axis"), nb::arg("out"), nb::arg("backend") = "auto",
        nb::arg("stream") = 0);
  m.def("extreme_axis", &extreme_axis, nb::arg("is_max"), nb::arg("skip_nan"), nb::arg("x"), nb::arg("axis"),
        nb::arg("values").none(), nb::arg("indices").none(), nb::arg("backend") = "auto", nb::arg("stream") = 0);
  // N-D axis reductions (python/tally/_axis.py)
  m.def("axis_batches", &axis_batches, nb::arg("kind"), nb::arg("x"), nb::arg("rows"), nb::arg("cols"),
        nb::arg("row_stride"), nb::arg("col_stride"), nb::arg("offsets"), nb::arg("out").none(), nb::arg("indices").none(),
        nb::arg("accuracy") = "exact", nb::arg("backend") = "auto", nb::arg("stream") = 0);
  m.def("slices", &slices, nb::arg("kind"), nb::arg("x"), nb::arg("n"), nb::arg("offsets"), nb::arg("ddof"), nb::arg("out"),
        nb::arg("accuracy") = "exact", nb::arg("backend") = "auto", nb::arg("stream") = 0);
}
