// Validation and backend choice for the shape layer (tally/shapes.hpp): matrices and axes,
// CSR offsets, output lengths and types; then one call into a backend.
#include <cstdint>
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "backends.hpp"
#include "shapes_backend.hpp"
#include "tally/shapes.hpp"
#include "validate.hpp"

namespace tally {
namespace {

using shapes::geometry;
using shapes::kind;
using shapes::outcome;
using shapes::request;

[[noreturn]] void fail(errc c, const char* fn, const std::string& what) { throw error(c, validate::prefix(fn) + what); }

bool floating(dtype t) { return validate::float32_or_64(t); }
bool floating_input(dtype t) { return floating(t) || t == dtype::float16 || t == dtype::bfloat16; }
bool unsigned_input(dtype t) {
  return t == dtype::uint8 || t == dtype::uint16 || t == dtype::uint32 || t == dtype::uint64;
}

// The shape layer reads all thirteen element types (the nine narrow ones widened exactly by
// the backends: src/shapes_widen.hpp); a value outside the enumeration is refused by name.
void check_type(const char* fn, dtype t) {
  if (dtype_size(t) == 0)
    fail(errc::invalid_argument, fn, "x has an element type outside tally::dtype (value " +
                                         std::to_string(static_cast<int>(t)) + ")");
}

// Resolves where `p` lives (declared `where` checked against the CUDA runtime, as dispatch.cpp does;
// device memory not aligned to `align`, the element size, refused: validate::locate_declared).
memory resolve(const char* fn, const char* name, const void* p, bool has_elements, memory where, int& device,
               std::size_t align) {
  device = -1;
  validate::check_memory(fn, name, where);
  if (!has_elements) return memory::unknown;
  if (p == nullptr) fail(errc::null_pointer, fn, std::string(name) + " is a null pointer with elements to read or write");
  return validate::locate_declared(fn, name, p, where, device, align);
}

using placed = validate::side;

// Picks the backend for arguments on known sides (unknown: no elements, no constraint). A
// stream-ordered request runs on the cuda backend only: the cpu backend asked for by name is
// errc::invalid_argument whatever the arrays' memory (checked first), a host array is
// errc::wrong_memory, and a call without arrays on a known side (nothing to read or write)
// goes to the cuda backend too (errc::no_gpu without a GPU), where it still writes its status.
backend choose(const char* fn, const request& r, backend requested, std::initializer_list<placed> args) {
  if (r.stream_ordered && requested == backend::cpu)
    fail(errc::invalid_argument, fn, "the stream-ordered (_async) forms run on the cuda backend only (the cpu backend"
                                     " was requested; use the blocking form)");
  const backend b = validate::choose(fn, requested, args, validate::wording::read_write);
  if (!r.stream_ordered || b == backend::cuda) return b;
  for (const placed& a : args)
    if (a.where == memory::host)
      fail(errc::wrong_memory, fn, std::string(a.name) + " is host memory; the stream-ordered (_async) forms read and"
                                       " write device memory on the cuda backend (use the blocking form)");
  return validate::choose(fn, backend::cuda, args, validate::wording::read_write);
}

// The result types each operation may produce for input type t (docs/types.md): min/max
// the input's type; means float32 or float64; sums float32 or float64 for floating input,
// uint64 for unsigned integers, int64 for signed integers and bool.
void check_out_type(const char* fn, kind k, dtype in, dtype out) {
  const dtype int_sum = unsigned_input(in) ? dtype::uint64 : dtype::int64;
  bool ok = k == kind::extreme     ? out == in
            : k == kind::mean      ? floating(out)
            : floating_input(in)   ? floating(out)
                                   : out == int_sum;
  if (!ok)
    fail(errc::invalid_argument, fn, validate::a_dtype(in) + " input cannot produce " + validate::a_dtype(out) +
                                         " result (" +
                                         (k == kind::extreme ? std::string(dtype_name(in))
                                          : k == kind::mean || floating_input(in) ? std::string("float32 or float64")
                                                                                  : std::string(dtype_name(int_sum))) +
                                         " only)");
}

const char* sum_name(reduce_op op, const char* fn) {
  if (op != reduce_op::sum)
    throw error(errc::invalid_argument, std::string("tally::") + fn + ": only reduce_op::sum is defined per row, column or segment");
  return fn;
}

// The request's output arrays: checked against `outputs`; returns their memory sides.
// out_dev: the CUDA device of the first output on one (-1: none, host or managed memory).
void check_outputs(const char* fn, kind k, dtype in, std::int64_t outputs, const mutable_array_ref& out,
                   const mutable_array_ref* index, request& r, memory& wo, memory& wi, int& out_dev) {
  wo = wi = memory::unknown;
  out_dev = -1;
  int dev = -1;
  bool want_values = !(k == kind::extreme && out.data == nullptr && out.size == 0);
  // (With no outputs, two empty arrays are both given: nothing is written.)
  if (outputs > 0 && k == kind::extreme && !want_values && index && index->data == nullptr && index->size == 0)
    fail(errc::null_pointer, fn, "neither values nor indices are given (pass at least one)");
  if (want_values) {
    if (out.size != outputs)
      fail(errc::length_mismatch, fn, std::string(k == kind::extreme ? "values" : "out") + " has " +
                                          std::to_string(out.size) + " elements, but there are " +
                                          std::to_string(outputs) + " results");
    check_out_type(fn, k, in, out.type);
    validate::extent(fn, k == kind::extreme ? "values" : "out", out.data, outputs, out.type);
    wo = resolve(fn, k == kind::extreme ? "values" : "out", out.data, outputs > 0, out.where, dev, dtype_size(out.type));
    out_dev = dev;
    r.out = outputs > 0 ? out.data : nullptr;
    r.out_type = out.type;
  }
  if (index && !(index->data == nullptr && index->size == 0)) {
    if (index->size != outputs)
      fail(errc::length_mismatch, fn, "indices has " + std::to_string(index->size) + " elements, but there are " +
                                          std::to_string(outputs) + " results");
    if (index->type != dtype::int64) fail(errc::invalid_argument, fn, std::string("indices must be int64, not ") + dtype_name(index->type));
    validate::extent(fn, "indices", index->data, outputs, dtype::int64);
    wi = resolve(fn, "indices", index->data, outputs > 0, index->where, dev, sizeof(std::int64_t));
    if (out_dev < 0) out_dev = dev;
    r.index = outputs > 0 ? static_cast<std::int64_t*>(index->data) : nullptr;
  }
}

// The outputs are written while the inputs are still being read (by other threads, or by
// later outputs), so they may share no byte with x, the offsets, or each other; in place is
// not supported either (an output's position is not its row's, column's or segment's).
// x_lo, x_bytes: the bytes x's elements span (for a strided matrix, from its lowest to its
// highest element: memory in between, padding included, counts as x's).
void check_disjoint(const char* fn, kind k, const request& r, std::int64_t outputs, const void* x_lo,
                    std::size_t x_bytes, const std::int64_t* offsets, std::int64_t segments) {
  if (outputs <= 0) return;
  const char* vname = k == kind::extreme ? "values" : "out";
  const std::size_t vbytes = r.out ? static_cast<std::size_t>(outputs) * dtype_size(r.out_type) : 0;
  const std::size_t ibytes = r.index ? static_cast<std::size_t>(outputs) * sizeof(std::int64_t) : 0;
  const std::size_t obytes = offsets ? static_cast<std::size_t>(segments + 1) * sizeof(std::int64_t) : 0;
  auto refuse = [&](const char* a, const char* b) {
    fail(errc::invalid_argument, fn, std::string(a) + " overlaps " + b +
                                         " (outputs may share no memory with the inputs or with each other; in-place"
                                         " reductions are not supported)");
  };
  if (validate::overlap(r.out, vbytes, x_lo, x_bytes)) refuse(vname, "x");
  if (validate::overlap(r.index, ibytes, x_lo, x_bytes)) refuse("indices", "x");
  if (validate::overlap(r.out, vbytes, r.index, ibytes)) refuse(vname, "indices");
  if (validate::overlap(r.out, vbytes, offsets, obytes)) refuse(vname, "offsets");
  if (validate::overlap(r.index, ibytes, offsets, obytes)) refuse("indices", "offsets");
}

// What the cuda backend does not do is refused whatever the number of outputs (every request
// of this version is supported there, exact floating sums and means included; the check stays
// for the operations later versions add to one backend first).
void refuse_unsupported(const char* fn, backend b, const geometry& g, const request& r) {
  if (b == backend::cuda && !cuda::shapes_supported(r, g.type))
    fail(errc::invalid_argument, fn, std::string("this ") + (r.what == kind::mean ? "mean" : "reduction") + " of " +
                                         dtype_name(g.type) + " data is not available on the cuda backend in this version"
                                         " (use the cpu backend)");
}

// A stream-ordered call's status (if given) is 8-byte aligned device memory sharing no byte
// with the inputs (x's span, the offsets) or the outputs. Call after the backend is chosen
// (choose refuses the cpu backend and host arrays for these).
void check_stream_ordered(const char* fn, const request& r, std::int64_t outputs, int& device, const void* x_lo,
                          std::size_t x_bytes, const std::int64_t* offsets, std::int64_t segments) {
  if (!r.stream_ordered || r.status_device == nullptr) return;
  if (reinterpret_cast<std::uintptr_t>(r.status_device) % alignof(std::int64_t) != 0)
    fail(errc::invalid_argument, fn, "status is not 8-byte aligned (it is two int64)");
  int sdev = -1;
  if (validate::locate_declared(fn, "status", r.status_device, memory::unknown, sdev) == memory::host)
    fail(errc::wrong_memory, fn, "status is host memory; the stream-ordered forms write it on the GPU (pass device memory)");
  if (device < 0) device = sdev;
  const std::size_t sbytes = 2 * sizeof(std::int64_t);
  const std::size_t vbytes = r.out ? static_cast<std::size_t>(outputs) * dtype_size(r.out_type) : 0;
  const std::size_t ibytes = r.index ? static_cast<std::size_t>(outputs) * sizeof(std::int64_t) : 0;
  const std::size_t obytes = offsets ? static_cast<std::size_t>(segments + 1) * sizeof(std::int64_t) : 0;
  if (validate::overlap(r.status_device, sbytes, r.out, vbytes) || validate::overlap(r.status_device, sbytes, r.index, ibytes))
    fail(errc::invalid_argument, fn, "status overlaps an output (it needs 2 int64 of its own)");
  if (validate::overlap(r.status_device, sbytes, x_lo, x_bytes))
    fail(errc::invalid_argument, fn, "status overlaps x (it needs 2 int64 of its own)");
  if (validate::overlap(r.status_device, sbytes, offsets, obytes))
    fail(errc::invalid_argument, fn, "status overlaps offsets (it needs 2 int64 of its own)");
}

void run(const char* fn, backend b, const geometry& g, const request& r, int device, stream_t stream) {
  refuse_unsupported(fn, b, g, r);
  if (g.outputs == 0) {
    if (r.stream_ordered && r.status_device) cuda::shapes_clear_status(r.status_device, stream, device);
    return;
  }
  outcome st;
  try {
    if (b == backend::cuda) {
      cuda::shapes_run(g, r, st, stream, device);
      if (r.stream_ordered) return;  // reported through r.status_device, in stream order
    } else {
      cpu::shapes_run(g, r, st);
    }
  } catch (const std::bad_alloc&) {
    // (the host copies these paths make: the CPU backend widens the narrow types to 8 bytes an
    // element, and a strided view of any length reaches here, even of stride 0; tally throws
    // tally::error only, so a failed allocation is one, naming the size asked for)
    fail(errc::invalid_argument, fn, "cannot allocate host memory for the work on x (" + std::to_string(g.n) + " " +
                                         dtype_name(g.type) + " elements; the CPU backend reads the 8- and 16-bit types, bool, "
                                         "uint32 and uint64 through a copy of up to 8 bytes an element)");
  }
  if (st.bad_offset_at >= 0)
    fail(errc::invalid_argument, fn, "offsets[" + std::to_string(st.bad_offset_at) +
                                         "] breaks the rules (offsets[0] == 0, non-decreasing, offsets[segments] == x.size)");
  if (st.overflow_at >= 0)
    fail(errc::overflow, fn, "the exact " + std::string(dtype_name(g.type)) + " sum" +
                                 (g.outputs > 1 ? " of output " + std::to_string(st.overflow_at) : std::string()) +
                                 " does not fit in " +
                                 (unsigned_input(g.type) ? "uint64" : "int64") + " (integer overflow)");
}

// The elements of a strided view or matrix lie `first` <= 0 to `last` >= 0 elements from
// data (lowest and highest).
struct element_span {
  std::int64_t first, last;
};
element_span matrix_span(const matrix_ref& x) {  // (x.rows, x.cols > 0; strides checked to 2^60)
  auto lo = [](std::int64_t extent, std::int64_t stride) { return (extent - 1) * std::min<std::int64_t>(stride, 0); };
  auto hi = [](std::int64_t extent, std::int64_t stride) { return (extent - 1) * std::max<std::int64_t>(stride, 0); };
  return {lo(x.rows, x.row_stride) + lo(x.cols, x.col_stride), hi(x.rows, x.row_stride) + hi(x.cols, x.col_stride)};
}

// Those elements' bytes must be addresses: a negative stride may not reach below address 0, a
// positive one not past the top of the address space (the 1-D views' check, validate::extent,
// for strided ones). A null data with elements is left to resolve's errc::null_pointer.
void check_addresses(const char* fn, const void* data, element_span e, dtype t) {
  if (data == nullptr) return;
  const __int128 es = static_cast<__int128>(dtype_size(t));
  const __int128 base = static_cast<__int128>(reinterpret_cast<std::uintptr_t>(data));
  if (base + e.first * es < 0)
    fail(errc::invalid_argument, fn, "the strides reach " + std::to_string(-e.first) +
                                         " elements below data, past address 0");
  if (base + (static_cast<__int128>(e.last) + 1) * es > static_cast<__int128>(UINTPTR_MAX) + 1)
    fail(errc::invalid_argument, fn, "the strides reach " + std::to_string(e.last) +
                                         " elements above data, past the end of the address space");
}

// Axis geometry of a validated matrix.
geometry axis_geometry(const char* fn, const matrix_ref& x, int axis) {
  check_type(fn, x.type);
  if (axis != 0 && axis != 1) fail(errc::invalid_argument, fn, "axis must be 0 (per column) or 1 (per row), not " + std::to_string(axis));
  if (x.rows < 0 || x.cols < 0)
    fail(errc::invalid_argument, fn, "negative extent (" + std::to_string(x.rows) + ", " + std::to_string(x.cols) + ")");
  std::int64_t n = 0;
  if (__builtin_mul_overflow(x.rows, x.cols, &n))
    fail(errc::invalid_argument, fn, "rows * cols = " + std::to_string(x.rows) + " * " + std::to_string(x.cols) +
                                         " elements does not fit in int64");
  if (x.rows > 0 && x.cols > 0) {
    __int128 span = static_cast<__int128>(x.rows - 1) * (x.row_stride < 0 ? -static_cast<__int128>(x.row_stride) : x.row_stride) +
                    static_cast<__int128>(x.cols - 1) * (x.col_stride < 0 ? -static_cast<__int128>(x.col_stride) : x.col_stride);
    if (span > (static_cast<__int128>(1) << 60))
      fail(errc::invalid_argument, fn, "the strides reach beyond 2^60 elements from data (addresses would overflow)");
    const element_span e = matrix_span(x);
    check_addresses(fn, x.data, e, x.type);
  }
  geometry g;
  g.x = x.data;
  g.type = x.type;
  g.outputs = axis == 0 ? x.cols : x.rows;
  g.len = axis == 0 ? x.rows : x.cols;
  g.outer = axis == 0 ? x.col_stride : x.row_stride;
  g.inner = axis == 0 ? x.row_stride : x.col_stride;
  g.n = n;
  // The stride of an axis of extent 1 (or 0) is never stepped: 0 keeps any value there (even
  // INT64_MIN) out of the backends' address and stride arithmetic.
  if (g.len <= 1) g.inner = 0;
  if (g.outputs <= 1) g.outer = 0;
  return g;
}

void axis_call(const char* fn, kind k, const matrix_ref& x, int axis, const mutable_array_ref& out,
               const mutable_array_ref* index, request r, const options& opt) {
  geometry g = axis_geometry(fn, x, axis);
  memory wo, wi;
  int out_dev = -1;
  check_outputs(fn, k, x.type, g.outputs, out, index, r, wo, wi, out_dev);
  const void* x_lo = nullptr;
  std::size_t x_bytes = 0;
  if (g.n > 0) {  // the bytes x's elements span, lowest to highest element
    const element_span e = matrix_span(x);
    const std::size_t es = dtype_size(x.type);
    const auto base = reinterpret_cast<std::uintptr_t>(x.data) + static_cast<std::uintptr_t>(e.first) * es;
    x_lo = reinterpret_cast<const void*>(base);
    x_bytes = static_cast<std::size_t>(e.last - e.first + 1) * es;
    check_disjoint(fn, k, r, g.outputs, x_lo, x_bytes, nullptr, 0);
  }
  int dev = -1;
  memory wx = resolve(fn, "x", x.data, g.n > 0, x.where, dev, dtype_size(x.type));
  if (dev < 0) dev = out_dev;
  backend b = choose(fn, r, opt.backend, {{"x", wx}, {k == kind::extreme ? "values" : "out", wo}, {"indices", wi}});
  check_stream_ordered(fn, r, g.outputs, dev, x_lo, x_bytes, nullptr, 0);
  run(fn, b, g, r, dev, opt.stream);
}

void segment_call(const char* fn, kind k, const array_ref& x, const std::int64_t* offsets, std::int64_t segments,
                  const mutable_array_ref& out, const mutable_array_ref* index, request r, const options& opt) {
  check_type(fn, x.type);
  if (segments < 0)
    fail(errc::invalid_argument, fn, "negative number of segments " + std::to_string(segments) +
                                         " (offsets has segments + 1 entries, at least the one entry 0" +
                                         (segments == -1 ? "; an empty offsets view gives -1)" : ")"));
  if (x.size < 0) fail(errc::invalid_argument, fn, "x has negative length " + std::to_string(x.size));
  if (x.size > 0 && x.data == nullptr) fail(errc::null_pointer, fn, "x is a null pointer with elements to read or write");
  validate::extent(fn, "x", x.data, x.size, x.type);
  if (segments == INT64_MAX) fail(errc::invalid_argument, fn, "segments + 1 offsets do not fit in int64");
  if (offsets == nullptr) fail(errc::null_pointer, fn, "offsets is a null pointer (it has segments + 1 entries)");
  geometry g;
  g.x = x.data;
  g.type = x.type;
  g.outputs = segments;
  g.offsets = offsets;
  g.n = x.size;
  memory wo, wi;
  int out_dev = -1;
  check_outputs(fn, k, x.type, segments, out, index, r, wo, wi, out_dev);
  validate::extent(fn, "offsets", offsets, segments + 1, dtype::int64);
  check_disjoint(fn, k, r, segments, x.data, static_cast<std::size_t>(x.size) * dtype_size(x.type), offsets, segments);
  int dev = -1, odev = -1;
  memory wx = resolve(fn, "x", x.data, x.size > 0, x.where, dev, dtype_size(x.type));
  memory wf = resolve(fn, "offsets", offsets, true, memory::unknown, odev, sizeof(std::int64_t));
  if (dev < 0) dev = odev;
  if (dev < 0) dev = out_dev;
  backend b = choose(fn, r, opt.backend, {{"x", wx}, {"offsets", wf}, {k == kind::extreme ? "values" : "out", wo}, {"indices", wi}});
  check_stream_ordered(fn, r, segments, dev, x.data, static_cast<std::size_t>(x.size) * dtype_size(x.type), offsets,
                       segments);
  if (b == backend::cpu) {  // host offsets: checked here; device offsets: on the GPU
    if (offsets[0] != 0) fail(errc::invalid_argument, fn, "offsets[0] is " + std::to_string(offsets[0]) + ", not 0");
    for (std::int64_t s = 0; s < segments; ++s)
      if (offsets[s + 1] < offsets[s])
        fail(errc::invalid_argument, fn, "offsets decrease at " + std::to_string(s + 1) + " (" + std::to_string(offsets[s]) +
                                             " then " + std::to_string(offsets[s + 1]) + ")");
    if (offsets[segments] != x.size)
      fail(errc::invalid_argument, fn, "offsets[" + std::to_string(segments) + "] is " + std::to_string(offsets[segments]) +
                                           ", not x's length " + std::to_string(x.size));
  }
  if (segments == 0) {
    if (x.size != 0 && b == backend::cuda)
      fail(errc::invalid_argument, fn, "no segments, but x has " + std::to_string(x.size) + " elements");
    run(fn, b, g, r, dev, opt.stream);  // (nothing to compute)
    return;
  }
  run(fn, b, g, r, dev, opt.stream);
}

// A strided view as one output of a uniform geometry; results to host memory.
void strided_call(const char* fn, const strided_ref& x, request r, const options& opt) {
  if (x.size < 0) fail(errc::invalid_argument, fn, "x has negative length " + std::to_string(x.size));
  // The stride is stepped size - 1 times (as an axis's, axis_geometry): a view of one element
  // (or none) takes any stride, INT64_MIN included.
  const std::int64_t steps = x.size > 1 ? x.size - 1 : 0;
  if (steps > 0 && (x.stride > (std::int64_t(1) << 60) / steps || x.stride < -(std::int64_t(1) << 60) / steps))
    fail(errc::invalid_argument, fn, "the stride reaches beyond 2^60 elements from data (addresses would overflow)");
  const std::int64_t stride = steps > 0 ? x.stride : 0;  // (never stepped: 0 keeps it out of the backends' arithmetic)
  if (x.size > 0) {
    const std::int64_t reach = steps * stride;  // (|reach| <= 2^60: checked above)
    check_addresses(fn, x.data, {std::min<std::int64_t>(reach, 0), std::max<std::int64_t>(reach, 0)}, x.type);
  }
  geometry g;
  g.x = x.data;
  g.type = x.type;
  g.outputs = 1;
  g.len = x.size;
  g.inner = stride;
  g.n = x.size;
  int dev = -1;
  memory wx = resolve(fn, "x", x.data, x.size > 0, x.where, dev, dtype_size(x.type));
  backend b = choose(fn, r, opt.backend, {{"x", wx}});
  r.out_on_host = true;
  run(fn, b, g, r, dev, opt.stream);
}

request make(kind k, const options& opt) {
  request r;
  r.what = k;
  r.acc = opt.accuracy;
  return r;
}

}  // namespace

void reduce_axis(reduce_op op, matrix_ref x, int axis, mutable_array_ref out, const options& opt) {
  validate::check_accuracy("sum (axis)", opt.accuracy);
  axis_call(sum_name(op, "sum (axis)"), kind::sum, x, axis, out, nullptr, make(kind::sum, opt), opt);
}

void mean_axis(matrix_ref x, int axis, mutable_array_ref out, const options& opt) {
  axis_call("mean (axis)", kind::mean, x, axis, out, nullptr, make(kind::mean, opt), opt);
}

void extreme_axis(extreme_op op, nan_policy nans, matrix_ref x, int axis, mutable_array_ref values,
                  mutable_array_ref indices, const options& opt) {
  validate::check_extreme("extreme (axis)", op, nans);
  request r = make(kind::extreme, opt);
  r.eop = op;
  r.nans = nans;
  axis_call(op == extreme_op::min ? "min (axis)" : "max (axis)", kind::extreme, x, axis, values, &indices, r, opt);
}

void reduce_segments(reduce_op op, array_ref x, const std::int64_t* offsets, std::int64_t segments,
                     mutable_array_ref out, const options& opt) {
  validate::check_accuracy("sum (segments)", opt.accuracy);
  segment_call(sum_name(op, "sum (segments)"), kind::sum, x, offsets, segments, out, nullptr, make(kind::sum, opt), opt);
}

void mean_segments(array_ref x, const std::int64_t* offsets, std::int64_t segments, mutable_array_ref out,
                   const options& opt) {
  segment_call("mean (segments)", kind::mean, x, offsets, segments, out, nullptr, make(kind::mean, opt), opt);
}

void extreme_segments(extreme_op op, nan_policy nans, array_ref x, const std::int64_t* offsets,
                      std::int64_t segments, mutable_array_ref values, mutable_array_ref indices,
                      const options& opt) {
  validate::check_extreme("extreme (segments)", op, nans);
  request r = make(kind::extreme, opt);
  r.eop = op;
  r.nans = nans;
  segment_call(op == extreme_op::min ? "min (segments)" : "max (segments)", kind::extreme, x, offsets, segments, values,
               &indices, r, opt);
}

// ---- stream-ordered forms ----

namespace {
request make_async(kind k, const options& opt, std::int64_t* status_device) {
  request r = make(k, opt);
  r.stream_ordered = true;
  r.status_device = status_device;
  return r;
}
}  // namespace

void reduce_axis_async(reduce_op op, matrix_ref x, int axis, mutable_array_ref out, std::int64_t* status_device,
                       const options& opt) {
  validate::check_accuracy("sum_async (axis)", opt.accuracy);
  axis_call(sum_name(op, "sum_async (axis)"), kind::sum, x, axis, out, nullptr, make_async(kind::sum, opt, status_device), opt);
}

void mean_axis_async(matrix_ref x, int axis, mutable_array_ref out, std::int64_t* status_device, const options& opt) {
  axis_call("mean_async (axis)", kind::mean, x, axis, out, nullptr, make_async(kind::mean, opt, status_device), opt);
}

void extreme_axis_async(extreme_op op, nan_policy nans, matrix_ref x, int axis, mutable_array_ref values,
                        mutable_array_ref indices, std::int64_t* status_device, const options& opt) {
  validate::check_extreme("extreme_async (axis)", op, nans);
  request r = make_async(kind::extreme, opt, status_device);
  r.eop = op;
  r.nans = nans;
  axis_call(op == extreme_op::min ? "min_async (axis)" : "max_async (axis)", kind::extreme, x, axis, values, &indices, r, opt);
}

void reduce_segments_async(reduce_op op, array_ref x, const std::int64_t* offsets, std::int64_t segments,
                           mutable_array_ref out, std::int64_t* status_device, const options& opt) {
  validate::check_accuracy("sum_async (segments)", opt.accuracy);
  segment_call(sum_name(op, "sum_async (segments)"), kind::sum, x, offsets, segments, out, nullptr,
               make_async(kind::sum, opt, status_device), opt);
}

void mean_segments_async(array_ref x, const std::int64_t* offsets, std::int64_t segments, mutable_array_ref out,
                         std::int64_t* status_device, const options& opt) {
  segment_call("mean_async (segments)", kind::mean, x, offsets, segments, out, nullptr,
               make_async(kind::mean, opt, status_device), opt);
}

void extreme_segments_async(extreme_op op, nan_policy nans, array_ref x, const std::int64_t* offsets,
                            std::int64_t segments, mutable_array_ref values, mutable_array_ref indices,
                            std::int64_t* status_device, const options& opt) {
  validate::check_extreme("extreme_async (segments)", op, nans);
  request r = make_async(kind::extreme, opt, status_device);
  r.eop = op;
  r.nans = nans;
  segment_call(op == extreme_op::min ? "min_async (segments)" : "max_async (segments)", kind::extreme, x, offsets,
               segments, values, &indices, r, opt);
}

void reduce(reduce_op op, strided_ref x, void* result, dtype result_type, const options& opt) {
  const char* fn = sum_name(op, "sum (strided)");
  validate::check_accuracy(fn, opt.accuracy);
  if (result == nullptr) fail(errc::null_pointer, fn, "result is a null pointer");
  check_type(fn, x.type);
  check_out_type(fn, kind::sum, x.type, result_type);
  request r = make(kind::sum, opt);
  r.out = result;
  r.out_type = result_type;
  if (x.size == 0) {  // the sum of nothing is +0
    std::memset(result, 0, dtype_size(result_type));
    strided_call(fn, x, r, opt);  // (still validates)
    return;
  }
  strided_call(fn, x, r, opt);
}

void mean(strided_ref x, void* result, dtype result_type, const options& opt) {
  const char* fn = "mean (strided)";
  if (result == nullptr) fail(errc::null_pointer, fn, "result is a null pointer");
  check_type(fn, x.type);
  check_out_type(fn, kind::mean, x.type, result_type);
  request r = make(kind::mean, opt);
  r.out = result;
  r.out_type = result_type;
  strided_call(fn, x, r, opt);
}

void extreme(extreme_op op, nan_policy nans, strided_ref x, void* value, std::int64_t* index, const options& opt) {
  validate::check_extreme("extreme (strided)", op, nans);
  const char* fn = op == extreme_op::min ? "min (strided)" : "max (strided)";
  if (value == nullptr || index == nullptr) fail(errc::null_pointer, fn, "value or index is a null pointer");
  check_type(fn, x.type);
  request r = make(kind::extreme, opt);
  r.eop = op;
  r.nans = nans;
  r.out = value;
  r.out_type = x.type;
  r.index = index;
  strided_call(fn, x, r, opt);
}

}  // namespace tally
