// tally: command-line sums, dot products and element-wise sums of .npy and CSV files.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <stdexcept>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "array.hpp"
#include "axis.hpp"
#include "csv.hpp"
#include "cuda_staging.hpp"
#include "distributed.hpp"
#include "format.hpp"
#include "npy.hpp"
#include "tally/state.hpp"

namespace tally_cli {
namespace {

constexpr const char* kFooter = R"(Synopsis:
  tally sum FILE [options]           sum of all elements
  tally dot A B [options]            sum of A[i]*B[i] over the flattened arrays
  tally add A B -o OUT.npy [options] element-wise A + B, written as .npy
  tally mean FILE [options]          mean: the exact sum / n, correctly rounded
  tally norm FILE [--ord 1|2|inf]    L1 / L2 / max norm, correctly rounded
  tally var|std FILE [--ddof N]      variance / standard deviation with NumPy's ddof,
                                     correctly rounded (auto: the CPU; --backend cuda: the
                                     GPU, but not exact var/std of int64 or uint64 data);
                                     ddof >= n (empty input included) gives nan, where
                                     NumPy warns and gives inf (nan for empty or constant
                                     data)
  tally min|max FILE [--skip-nan]    smallest / largest element (NaN if there is one,
                                     unless --skip-nan); empty input: inf / -inf for
                                     floats, the type's highest / lowest value for integers
                                     (int8: 127 / -128; bool: 1 / 0)
  tally argmin|argmax FILE [--skip-nan]
                                     index (0-based, flattened) of its first occurrence
  --axis 0|1 (sum, mean, min, max, argmin, argmax of a 2-D array): one result per column
                                     (0) or row (1), one per line; argmin/argmax give the
                                     index within the column or row. --backend cuda copies
                                     the matrix to the GPU once and reduces it there

Input files:
  .npy (dtypes f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, either byte order, C or Fortran
  order, any shape; read flattened in C order), or CSV, plain or gzip-compressed, whose
  column is read as float64.
  A file is read as .npy when its name ends in .npy or it starts with the .npy magic,
  otherwise as CSV. The first CSV row (after --skip-rows and blank lines) is a header
  when the column is chosen by NAME or its cell there is not a number; in the second case,
  if that cell is empty or starts like a number (a digit, sign or point, as in 0x10), a
  note on stderr says that the line was taken as a header (name the column to confirm it).
  --column picks the column of every CSV input: digits are a 0-based INDEX, always; other
  text a header NAME; name:NAME always a name (for headers made of digits: --column
  name:2019). A NAME that two columns share is refused as ambiguous. --column-b picks B's
  column when it differs, e.g.  tally dot iris.csv iris.csv --skip-rows 1 --column 0
  --column-b 2  (scikit-learn's iris.csv, wine_data.csv, breast_cancer.csv need
  --skip-rows 1: their first line holds counts and class names, not data or column names).
  Lines end in LF, CR LF or CR. A quoted cell must close on its line: a missing closing
  quote, or a line break inside quotes, is an error naming the row. Error messages
  number CSV rows by file line and columns from 1. The CSV options (--column, --column-b,
  --delimiter, --skip-rows) given where no CSV input would use them (.npy input only, or
  --distributed) are refused as a usage error (exit 2), not ignored.

Types: A and B are promoted to a common type (equal types stay; i4+f4 -> f8, u1+u2 -> u8,
i1+u1 -> i8, ...); sum and dot of float32/float64 give float32/float64, of float16 float32
(never accumulated in 16 bits), of signed integers and bool exactly int64, of unsigned
integers exactly uint64 (overflow is an error). mean: float32 for f2/f4, float64 otherwise.
min and max give a value of the input's type; ties go to the first index. Accumulators and
result types: docs/types.md.

Distributed: mpirun -np 4 tally sum big.npy --distributed  (each rank reads its slice of
the .npy file(s) and reduces it; rank 0 prints the combined result, in exact mode bitwise
the same as one process; sum dot mean norm min max argmin argmax). Ranks run on the CPU
(--backend auto or cpu: auto keeps the CPU under --distributed); --backend cuda puts each
rank on a GPU (its node-local rank modulo the node's GPU count), copying its slice there.
Every .npy type, uint64 above 2^63 - 1 included; an integer sum or dot product need only fit
as a whole (int64, or uint64 for unsigned data), as in one process.
Errors are printed once, by rank 0, as one process prints them (no rank prefix).

Exit status: 0 ok; 1 library error (integer overflow, naming the operation and file(s); CUDA
failure; no GPU for --backend cuda); 2 usage or input error (an unknown command included).)";

/// A bad input the tool itself detects (such as mismatched shapes); what() is "FILE: problem".
class input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The parsed command line.
struct settings {
  std::string a, b, out;
  std::string column, column_b, delimiter = ",";
  std::int64_t skip_rows = 0;
  std::string backend = "auto";
  std::string accuracy = "exact";
  bool json = false;
  bool skip_nan = false;  // min/max/argmin/argmax: the nan forms
  int axis = -1;          // --axis 0|1 (2-D input): one result per column / row
  std::string ord = "2";  // norm: 1, 2 or inf
  bool distributed = false;  // run under mpirun, each rank reading its slice (distributed.cpp)
  std::int64_t ddof = 0;     // var, std: NumPy's delta degrees of freedom
};

/// What a command prints.
struct report {
  std::string value_text, value_json;
  tally::dtype type;
  std::int64_t n;
  tally::backend used;
  double seconds;
};

/// Whether v is a whole number 0 .. 2^63 - 1 in decimal digits (CLI11 would clamp a larger one
/// to the int64 maximum silently).
bool whole_number(const std::string& v) {
  std::int64_t x = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos && ec == std::errc() &&
         end == v.data() + v.size();
}

char delimiter_char(const std::string& d) {
  if (d == "tab" || d == "\\t") return '\t';
  if (d == "space") return ' ';
  return d.size() == 1 ? d[0] : '\0';
}

csv::options csv_options(const settings& s, bool second) {
  csv::options o;
  o.column = second && !s.column_b.empty() ? s.column_b : s.column;
  o.delimiter = delimiter_char(s.delimiter);
  o.skip_rows = s.skip_rows;
  return o;
}

/// Whether `path` is read as .npy (its name ends in .npy or it starts with the .npy magic);
/// otherwise it is read as CSV. Only a regular file is opened to look (a FIFO would block).
bool is_npy(const std::string& path) {
  bool npy_name = path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
  std::error_code ec;
  return npy_name || (std::filesystem::is_regular_file(path, ec) && npy::has_magic(path));
}

/// Refuses a CSV-only option (--column, --column-b, --delimiter, --skip-rows: `given`, those
/// the command line set) that no input of the command would use, instead of ignoring it:
/// one of .npy input alone, or any of them under --distributed (which reads .npy only).
/// --column serves A, and B unless --column-b is given; --column-b serves B.
void check_csv_options(const settings& s, const std::vector<std::string>& given, bool two) {
  if (given.empty()) return;
  const bool a_csv = !s.distributed && !is_npy(s.a);
  const bool b_csv = two && !s.distributed && !is_npy(s.b);
  const bool b_given = std::find(given.begin(), given.end(), "--column-b") != given.end();
  for (const std::string& opt : given) {
    bool used = opt == "--column"     ? a_csv || (b_csv && !b_given)
                : opt == "--column-b" ? b_csv
                                      : a_csv || b_csv;
    if (used) continue;
    if (s.distributed)
      throw input_error(fmt::format("{} applies only to CSV/text input, and --distributed reads .npy files only", opt));
    // the .npy file(s) the option would have applied to
    const bool both = two && opt != "--column-b" && (opt != "--column" || !b_given) && s.b != s.a;
    const std::string files = opt == "--column-b" ? s.b : both ? s.a + " and " + s.b : s.a;
    throw input_error(fmt::format("{}: {} applies only to CSV/text input, not .npy files (leave it out)", files, opt));
  }
}

/// Reads a .npy or CSV file (see the footer for which).
host_array load(const std::string& path, const csv::options& o) {
  // Inputs are read twice (format sniffing, then parsing), so only regular files will do:
  // a pipe would lose its data to the sniff, a FIFO would block, /dev/zero never ends.
  std::error_code ec;
  auto st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    throw input_error(fmt::format("{}: not a regular file (directories, pipes and devices are not read;"
                                  " save the data to a file first)", path));
  return is_npy(path) ? npy::read(path) : csv::read(path, o);
}

/// Loads A and B and promotes both to their common type.
std::pair<host_array, host_array> load_pair(const settings& s) {
  host_array a = load(s.a, csv_options(s, false));
  host_array b = load(s.b, csv_options(s, true));
  tally::dtype t = promote(a.type(), b.type());
  return {convert(std::move(a), t), convert(std::move(b), t)};
}

tally::backend pick_backend(const std::string& name) {
  if (name == "cpu") return tally::backend::cpu;
  if (name == "cuda") return tally::backend::cuda;
  return tally::cuda_available() ? tally::backend::cuda : tally::backend::cpu;
}

/// GPU staging is needed when the CUDA backend runs and a GPU exists; without one the
/// library itself reports errc::no_gpu for host data on backend cuda.
bool staged(tally::backend b) { return b == tally::backend::cuda && tally::cuda_available(); }

template <class F> double timed(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

scalar read_scalar(tally::dtype t, const unsigned char* p) {
  auto get = [p](auto v) { std::memcpy(&v, p, sizeof v); return v; };
  if (t == tally::dtype::float32) return get(float{});
  if (t == tally::dtype::float64) return get(double{});
  if (t == tally::dtype::uint64) return get(std::uint64_t{});
  return get(std::int64_t{});
}

report run_reduce(tally::reduce_op op, const settings& s) {
  std::optional<std::pair<host_array, host_array>> ab;
  if (op == tally::reduce_op::dot) {
    ab = load_pair(s);
    if (ab->first.size() != ab->second.size())
      throw input_error(fmt::format("{}: length mismatch: {} has {} elements, {} has {}", s.b, s.b,
                                    ab->second.size(), s.a, ab->first.size()));
  } else {
    ab.emplace(load(s.a, csv_options(s, false)), host_array{});
  }
  const host_array& a = ab->first;
  tally::array_ref y = op == tally::reduce_op::dot ? ab->second.ref() : tally::array_ref{};
  tally::backend be = pick_backend(s.backend);
  alignas(8) unsigned char result[8] = {};
  tally::accuracy acc = s.accuracy == "fast" ? tally::accuracy::fast : tally::accuracy::exact;
  double secs = staged(be) ? reduce_on_gpu(op, a.ref(), y, result, acc)
                           : timed([&] { tally::reduce(op, a.ref(), y, result, {be, nullptr, acc}); });
  scalar v = read_scalar(tally::result_dtype(op, a.type()), result);
  return {repr(v), json_number(v), tally::result_dtype(op, a.type()), a.size(), be, secs};
}

report run_add(const settings& s) {
  auto [a, b] = load_pair(s);
  if (a.shape != b.shape)
    throw input_error(fmt::format("{}: shape mismatch: {} has shape {}, {} has shape {}", s.b, s.b,
                                  shape_str(b.shape), s.a, shape_str(a.shape)));
  host_array out = make_array(a.type(), a.shape);
  tally::backend be = pick_backend(s.backend);
  double secs = 0;
  try {
    secs = staged(be) ? add_on_gpu(a.ref(), b.ref(), out.mref())
                      : timed([&] { tally::add(a.ref(), b.ref(), out.mref(), {be}); });
  } catch (const tally::error& e) {
    if (e.code() != tally::errc::overflow) throw;
    // the library's message speaks of its out array; the tool writes nothing in that case
    std::string m = e.what();
    const std::string tail = "; out holds wrapped values)";
    if (m.size() > tail.size() && m.compare(m.size() - tail.size(), tail.size(), tail) == 0)
      m = m.substr(0, m.size() - tail.size()) + ")";
    throw tally::error(tally::errc::overflow, m + "; " + s.out + " was not written");
  }
  npy::write_atomic(s.out, out);
  return {"", json_string(s.out), out.type(), out.size(), be, secs};
}

/// A library error re-thrown with the command the user typed in place of the library's
/// operation name: tally::extreme names "min" / "max" (and the shape layer "min (axis)"),
/// which for argmin and argmax (and --skip-nan: nanargmin, ...) is not what was asked.
/// Other messages pass unchanged.
[[noreturn]] void rethrow_named(const tally::error& e, const std::string& lib_name, const std::string& cli_name) {
  const std::string head = "tally::" + lib_name + ": ";
  std::string_view what = e.what();
  if (lib_name == cli_name || !what.starts_with(head)) throw e;
  throw tally::error(e.code(), "tally::" + cli_name + ": " + std::string(what.substr(head.size())));
}

/// min, max (value) and argmin, argmax (index) of FILE, with NumPy's NaN rule or, with
/// --skip-nan, the nan forms (nanmin, ...).
report run_extreme(const std::string& cmd, const settings& s) {
  host_array a = load(s.a, csv_options(s, false));
  bool mx = cmd == "max" || cmd == "argmax";
  bool want_index = cmd.starts_with("arg");
  tally::extreme_op op = mx ? tally::extreme_op::max : tally::extreme_op::min;
  tally::nan_policy nans = s.skip_nan ? tally::nan_policy::omit : tally::nan_policy::propagate;
  tally::backend be = pick_backend(s.backend);
  alignas(8) unsigned char value[8] = {};
  std::int64_t index = -1;
  std::string name = (s.skip_nan ? "nan" : "") + cmd;
  double secs = 0;
  try {
    secs = staged(be) ? extreme_on_gpu(op, nans, a.ref(), value, &index)
                      : timed([&] { tally::extreme(op, nans, a.ref(), value, &index, {be}); });
  } catch (const tally::error& e) {
    rethrow_named(e, std::string(s.skip_nan ? "nan" : "") + (mx ? "max" : "min"), name);
  }
  if (want_index) {
    if (index < 0)
      throw input_error(fmt::format("{}: {}: {}", s.a, name,
                                    a.size() == 0 ? "the input is empty, so there is no index"
                                                  : "the input holds only NaN, so there is no index"));
    return {std::to_string(index), std::to_string(index), tally::dtype::int64, a.size(), be, secs};
  }
  // The value has the input's type (int32 data gives an int32 value, printed exactly; the
  // 16-bit floats print as their exact float32 value, bool as 0 or 1).
  const scalar v = scalar_of(a.type(), value);
  return {repr(v), json_number(v), a.type(), a.size(), be, secs};
}

/// minmax: the min and max of FILE in one call (tally::minmax: one read on the CPU; with the
/// file staged on the GPU, one read there too), printed as "MIN MAX" (JSON: [MIN, MAX]).
/// Errors name minmax (nanminmax with --skip-nan).
report run_minmax(const settings& s) {
  host_array a = load(s.a, csv_options(s, false));
  tally::nan_policy nans = s.skip_nan ? tally::nan_policy::omit : tally::nan_policy::propagate;
  tally::backend be = pick_backend(s.backend);
  alignas(8) unsigned char lo[8] = {}, hi[8] = {};
  std::int64_t lo_index = -1, hi_index = -1;
  double secs = 0;
  const std::string name = std::string(s.skip_nan ? "nan" : "") + "minmax";
  try {
    if (staged(be)) {
      secs = minmax_on_gpu(nans, a.ref(), lo, &lo_index, hi, &hi_index);
    } else {
      secs = timed([&] { tally::minmax(nans, a.ref(), lo, &lo_index, hi, &hi_index, {be}); });
    }
  } catch (const tally::error& e) {
    try {
      rethrow_named(e, std::string(s.skip_nan ? "nan" : "") + "min", name);
    } catch (const tally::error& e2) {
      rethrow_named(e2, std::string(s.skip_nan ? "nan" : "") + "max", name);
    }
  }
  const scalar l = scalar_of(a.type(), lo), h = scalar_of(a.type(), hi);
  return {repr(l) + " " + repr(h), "[" + json_number(l) + ", " + json_number(h) + "]", a.type(), a.size(), be, secs};
}

/// The variance (std: its square root) of FILE with NumPy's ddof: exact (default), the
/// correctly rounded value of the exact rational; fast: Welford/Chan in float64. Float64
/// (float32 for float32 and 16-bit float data). --backend cuda calls the library on the GPU as
/// the other commands do (the file copied to device memory once; no GPU: the library's
/// errc::no_gpu, exit 1); the exact variance of int64 and uint64 data has no GPU path in the
/// library in this version, which --backend cuda reports (exit 1, as the library's refusal).
/// auto and cpu run on the cpu backend (auto keeps the CPU here, as in earlier versions: the
/// exact results are the same bits on both backends).
report run_var(bool take_sqrt, const settings& s) {
  host_array a = load(s.a, csv_options(s, false));
  bool single = a.type() == tally::dtype::float32 || a.type() == tally::dtype::float16 || a.type() == tally::dtype::bfloat16;
  tally::dtype rt = single ? tally::dtype::float32 : tally::dtype::float64;
  tally::accuracy acc = s.accuracy == "fast" ? tally::accuracy::fast : tally::accuracy::exact;
  const bool wide_int = a.type() == tally::dtype::int64 || a.type() == tally::dtype::uint64;
  const tally::backend be = s.backend == "cuda" ? tally::backend::cuda : tally::backend::cpu;
  const char* fn = take_sqrt ? "std" : "var";
  if (staged(be) && acc == tally::accuracy::exact && wide_int)
    throw tally::error(tally::errc::invalid_argument,
                       fmt::format("tally::{}: {}: the exact {} of {} data is not available on the cuda backend in "
                                   "this version (use --accuracy fast, or --backend cpu or auto)",
                                   fn, s.a, take_sqrt ? "standard deviation" : "variance", tally::dtype_name(a.type())));
  const tally::options o{be, nullptr, acc};
  alignas(8) unsigned char result[8] = {};
  double secs = 0;
  if (staged(be)) {
    device_copy d(a.ref());  // (freed on return)
    secs = timed([&] { tally::var(d.ref(), s.ddof, take_sqrt, result, rt, o); });
  } else {
    // the cpu backend; or cuda without a GPU, where the library reports errc::no_gpu
    secs = timed([&] { tally::var(a.ref(), s.ddof, take_sqrt, result, rt, o); });
  }
  scalar v = rt == tally::dtype::float32 ? scalar(*reinterpret_cast<float*>(result)) : scalar(*reinterpret_cast<double*>(result));
  return {repr(v), json_number(v), rt, a.size(), be, secs};
}

/// The L1 (ord "1") or L2 norm of integer (or bool) data, correctly rounded to float64 from
/// the exact integer value: each |x| is split into two float64 parts, hi = |x| with its low
/// 32 bits cleared and lo = those bits (both exact), so sum |x| = sum hi + sum lo and
/// sum x^2 = hi.hi + lo.lo + hi.(2 lo), exact states of the library (tally/state.hpp) merged
/// and rounded once. (Converting |x| to float64 first would round each element above 2^53
/// and then the total again.) Backend `be`: cpu, or cuda (with a GPU the parts are copied to
/// it and the states computed there; without one the library refuses: errc::no_gpu).
double integer_norm(const host_array& a, bool l1, tally::backend be) {
  const auto n = static_cast<std::size_t>(a.size());
  std::vector<double> hi(n), lo(n), lo2(n);
  std::visit([&](const auto& v) {
    using E = typename std::decay_t<decltype(v)>::value_type;
    if constexpr (std::is_same_v<E, tally_cli::bool8> || std::is_integral_v<E>) {
      for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t m;  // |x|, exactly (2^63 for INT64_MIN)
        if constexpr (std::is_same_v<E, tally_cli::bool8>) m = v[i].v != 0;
        else if constexpr (std::is_signed_v<E>)
          m = v[i] < 0 ? std::uint64_t(0) - static_cast<std::uint64_t>(v[i]) : static_cast<std::uint64_t>(v[i]);
        else m = static_cast<std::uint64_t>(v[i]);
        hi[i] = static_cast<double>(m & ~std::uint64_t(0xffffffffu));
        lo[i] = static_cast<double>(m & 0xffffffffu);
        lo2[i] = 2 * lo[i];
      }
    }
  }, a.data);
  const tally::options o{be};
  auto host = [&](const std::vector<double>& v) {
    return tally::array_ref{v.data(), static_cast<std::int64_t>(n), tally::dtype::float64, tally::memory::host};
  };
  tally::array_ref rhi = host(hi), rlo = host(lo), rlo2 = host(lo2);
  std::optional<device_copy> dhi, dlo, dlo2;  // (cuda with a GPU: the parts on the device, freed on return)
  if (staged(be)) {
    rhi = dhi.emplace(rhi).ref();
    rlo = dlo.emplace(rlo).ref();
    if (!l1) rlo2 = dlo2.emplace(rlo2).ref();
  }
  double r = 0;
  if (l1) {
    tally::exact_state st = tally::merge(tally::partial(tally::reduce_op::sum, rhi, {}, o),
                                         tally::partial(tally::reduce_op::sum, rlo, {}, o));
    tally::round(st, &r, tally::dtype::float64);
  } else {
    tally::exact_state st = tally::merge(tally::partial(tally::reduce_op::dot, rhi, rhi, o),
                                         tally::partial(tally::reduce_op::dot, rlo, rlo, o));
    st = tally::merge(st, tally::partial(tally::reduce_op::dot, rhi, rlo2, o));
    tally::round_sqrt(st, &r, tally::dtype::float64);
  }
  return r;
}

/// norm's library calls name themselves (norm1, norm2, norm_inf; for integer data the exact
/// states' sum and dot); the tool's messages name the command that was typed, `norm`.
[[noreturn]] void rethrow_as_norm(const tally::error& e) {
  for (const char* lib : {"norm1", "norm2", "norm_inf", "sum", "dot"})
    if (std::string_view(e.what()).starts_with(std::string("tally::") + lib + ": ")) rethrow_named(e, lib, "norm");
  throw e;
}

/// The work of run_mean_norm (below), whose errors name the library's functions.
report mean_norm(bool norm, const settings& s) {
  host_array a = load(s.a, csv_options(s, false));
  const tally::backend be = pick_backend(s.backend);
  if (norm && !tally::is_floating(a.type())) {
    if (s.ord != "inf") {
      const std::int64_t n = a.size();
      double r = 0;
      double secs = timed([&] { r = integer_norm(a, s.ord == "1", be); });
      scalar v(r);
      return {repr(v), json_number(v), tally::dtype::float64, n, staged(be) ? tally::backend::cuda : tally::backend::cpu,
              secs};
    }
    a = convert(std::move(a), tally::dtype::float64);
  }
  // 16-bit floats: the L1 and max norms take float32 (exactly the same values)
  if (norm && s.ord != "2" && (a.type() == tally::dtype::float16 || a.type() == tally::dtype::bfloat16))
    a = convert(std::move(a), tally::dtype::float32);
  bool single = a.type() == tally::dtype::float32 || a.type() == tally::dtype::float16 || a.type() == tally::dtype::bfloat16;
  tally::dtype rt = single ? tally::dtype::float32 : tally::dtype::float64;
  alignas(8) unsigned char result[8] = {};
  // cuda with a GPU: the data staged to device memory once (mean and the L2 norm through
  // mean_norm_on_gpu); otherwise the host call on `be` (cpu, or cuda without a GPU, which the
  // library refuses: errc::no_gpu).
  const bool gpu = staged(be);
  const tally::accuracy acc = s.accuracy == "fast" ? tally::accuracy::fast : tally::accuracy::exact;
  auto call = [&](tally::array_ref x, const tally::options& o) {
    if (norm && s.ord == "1") tally::norm1(x, result, rt, o);
    else if (norm && s.ord == "inf") tally::norm_inf(x, result, rt, o);
    else if (norm) tally::norm2(x, result, rt, o);
    else tally::mean(x, result, rt, o);
  };
  double secs = 0;
  if (gpu && (!norm || s.ord == "2")) {
    secs = mean_norm_on_gpu(norm, a.ref(), result, rt);
  } else if (gpu) {
    device_copy d(a.ref());  // (freed on return)
    secs = timed([&] { call(d.ref(), {tally::backend::cuda, nullptr, acc}); });
  } else {
    secs = timed([&] { call(a.ref(), {be, nullptr, acc}); });
  }
  scalar v = rt == tally::dtype::float32 ? scalar(*reinterpret_cast<float*>(result)) : scalar(*reinterpret_cast<double*>(result));
  return {repr(v), json_number(v), rt, a.size(), gpu ? tally::backend::cuda : tally::backend::cpu, secs};
}

/// The correctly rounded mean or L1 / L2 norm (the max norm: exact, then rounded once) of
/// FILE (float64; float32 for float32 and 16-bit float data). Integer data: the L1 and L2
/// norms from the exact integer value (integer_norm), the max norm of the float64 values
/// (rounding is monotonic, so that is the exact maximum rounded once). --backend cuda runs
/// every one of them on the GPU (the data copied there once; no GPU: the library's
/// errc::no_gpu, exit 1, as every command); auto takes the GPU when one is present.
report run_mean_norm(bool norm, const settings& s) {
  try {
    return mean_norm(norm, s);
  } catch (const tally::error& e) {
    if (norm) rethrow_as_norm(e);
    throw;
  }
}

/// --axis: `cmd` along one axis of a 2-D FILE, one result per line (--json: a list under
/// "value"). --backend cuda copies the matrix to the GPU once (axis.cpp, cuda_staging.cpp);
/// auto picks as the 1-D commands do (the GPU when one is present). Every backend gives the
/// same bits for exact and integer sums, means and min/max/argmin/argmax.
/// An axis report: one result per line, or (--json) one object with the list of results.
void print_axis(const axis_report& r, const settings& s, std::int64_t n) {
  if (s.json) {
    std::string list = "[";
    for (std::size_t i = 0; i < r.json.size(); ++i) list += (i ? ", " : "") + r.json[i];
    list += "]";
    fmt::print("{}\n", json_object({{"value", list},
                                    {"dtype", json_string(tally::dtype_name(r.type))},
                                    {"n", std::to_string(n)},
                                    {"axis", std::to_string(s.axis)},
                                    {"backend", json_string(tally::backend_name(r.used))},
                                    {"seconds", repr(r.seconds)}}));
  } else {
    for (const std::string& t : r.text) fmt::print("{}\n", t);
  }
}

void run_axis(const std::string& cmd, const settings& s) {
  host_array a = load(s.a, csv_options(s, false));
  tally::accuracy acc = s.accuracy == "fast" ? tally::accuracy::fast : tally::accuracy::exact;
  tally::backend be = pick_backend(s.backend);
  axis_report r;
  try {
    r = reduce_along(cmd, a, s.axis, s.skip_nan, acc, be);
  } catch (const std::invalid_argument& e) {
    throw input_error(fmt::format("{}: {}", s.a, e.what()));
  } catch (const tally::error& e) {
    // the shape layer names "min (axis)" / "max (axis)" for argmin, argmax and --skip-nan too
    if (cmd.ends_with("min") || cmd.ends_with("max"))
      rethrow_named(e, cmd.substr(cmd.size() - 3) + " (axis)", (s.skip_nan ? "nan" : "") + cmd + " (axis)");
    throw;
  }
  print_axis(r, s, a.size());
}

/// minmax --axis: the min and the max along the axis (reduce_along twice), one "MIN MAX" line
/// per output (JSON: a list of [MIN, MAX] pairs).
void run_axis_minmax(const settings& s) {
  host_array a = load(s.a, csv_options(s, false));
  tally::accuracy acc = tally::accuracy::exact;
  tally::backend be = pick_backend(s.backend);
  const std::string name = std::string(s.skip_nan ? "nan" : "") + "minmax (axis)";
  axis_report lo, hi;
  try {
    lo = reduce_along("min", a, s.axis, s.skip_nan, acc, be);
    hi = reduce_along("max", a, s.axis, s.skip_nan, acc, be);
  } catch (const std::invalid_argument& e) {
    throw input_error(fmt::format("{}: {}", s.a, e.what()));
  } catch (const tally::error& e) {
    // the shape layer names "min (axis)" / "max (axis)"
    try {
      rethrow_named(e, "min (axis)", name);
    } catch (const tally::error& e2) {
      rethrow_named(e2, "max (axis)", name);
    }
  }
  axis_report both{{}, {}, lo.type, lo.seconds + hi.seconds, lo.used};
  for (std::size_t i = 0; i < lo.text.size(); ++i) {
    both.text.push_back(lo.text[i] + " " + hi.text[i]);
    both.json.push_back("[" + lo.json[i] + ", " + hi.json[i] + "]");
  }
  print_axis(both, s, a.size());
}

void print(const report& r, bool json) {
  if (json) {
    fmt::print("{}\n", json_object({{"value", r.value_json},
                                    {"dtype", json_string(tally::dtype_name(r.type))},
                                    {"n", std::to_string(r.n)},
                                    {"backend", json_string(tally::backend_name(r.used))},
                                    {"seconds", repr(r.seconds)}}));
  } else if (!r.value_text.empty()) {
    fmt::print("{}\n", r.value_text);
  }
}

/// The options every command takes; `two` adds B and --column-b.
void add_options(CLI::App* cmd, settings& s, bool two) {
  cmd->add_option(two ? "A" : "FILE", s.a, "input file (.npy or CSV)")->required();
  if (two) cmd->add_option("B", s.b, "second input file (.npy or CSV)")->required();
  cmd->add_option("-c,--column", s.column, "CSV column: header NAME, 0-based INDEX (digits are always an index), or name:NAME (always a name, "
                                  "e.g. name:2019); default: the only column");
  if (two) cmd->add_option("--column-b", s.column_b, "CSV column of B when it differs from --column");
  cmd->add_option("-d,--delimiter", s.delimiter, "CSV delimiter: one character, 'tab', or 'space' (runs of blanks)")
      ->check([](const std::string& d) {
        return delimiter_char(d) ? std::string() : "must be one character, 'tab' or 'space'";
      })
      ->capture_default_str();
  cmd->add_option("--skip-rows", s.skip_rows, "CSV lines to skip at the top, before any header")
      ->check(CLI::Validator(
          [](const std::string& v) {
            return whole_number(v) ? std::string()
                                   : "takes a count of lines, 0 to 2^63 - 1, not '" + v + "'";
          },
          "N>=0"));
  const bool moments = cmd->get_name() == "var" || cmd->get_name() == "std";  // (auto keeps the CPU: run_var)
  cmd->add_option("--backend", s.backend,
                  moments ? "auto (the CPU, as cpu), cpu or cuda (the GPU)"
                          : "auto (the GPU if present, else the CPU; the CPU under --distributed), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--accuracy", s.accuracy,
                  "exact (default): the correctly rounded result; fast: float64 accumulators (sum, dot and "
                  "norm --ord 1: a float64 tree; var, std: Welford/Chan). mean, the L2 and max norms, min/max and add "
                  "are always exact and ignore it")
      ->check(CLI::IsMember({"exact", "fast"}))
      ->capture_default_str();
  cmd->add_flag("--json", s.json, "print one JSON object: value, dtype, n, backend, seconds (of the library call alone)");
  if (cmd->get_name() != "add")
    cmd->add_flag("--distributed", s.distributed,
                  "under mpirun: each rank reads only its slice of the .npy file(s) and the ranks combine their "
                  "parts (exact: the same bits as one process; needs a build with MPI)");
}

int fail(const std::exception& e, int code) {
  // Library messages start "tally::sum: ..." or "tally: ..."; print "tally: sum: ..." once.
  std::string_view what = e.what();
  if (what.starts_with("tally::")) what.remove_prefix(7);
  else if (what.starts_with("tally: ")) what.remove_prefix(7);
  std::fprintf(stderr, "tally: %.*s\n", static_cast<int>(what.size()), what.data());
  return code;
}

}  // namespace
}  // namespace tally_cli

static int run_main(int argc, char** argv) {
  using namespace tally_cli;
  CLI::App app{"tally: sums, dot products, minima, maxima and element-wise sums of .npy and CSV files", "tally"};
  app.footer(kFooter);
  app.set_version_flag("--version", "tally " TALLY_VERSION);
  app.require_subcommand(1);
  settings s;
  CLI::App* sum = app.add_subcommand("sum", "sum of the elements of FILE");
  CLI::App* dot = app.add_subcommand("dot", "dot product of A and B (flattened, equal sizes)");
  CLI::App* add = app.add_subcommand("add", "element-wise A + B (equal shapes), written to OUT.npy");
  add_options(sum, s, false);
  add_options(dot, s, true);
  add_options(add, s, true);
  add->add_option("-o,--output", s.out, "the .npy file to write (replaced atomically; an existing file keeps its permissions and, where allowed, its owner; one the process may not write is refused)")
      ->required()
      ->check(CLI::Validator(
          [](const std::string& v) -> std::string {
            if (v.empty()) return "the output path is empty";
            // Only .npy is written; another name (out.csv) would hold .npy bytes under it.
            std::string ext = std::filesystem::path(v).extension().string();
            for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            return ext == ".npy" ? "" : "add writes a .npy file: name the output *.npy (got '" + v + "')";
          },
          "PATH.npy"));
  CLI::App* mean = app.add_subcommand("mean", "mean of the elements of FILE, correctly rounded");
  add_options(mean, s, false);
  CLI::App* norm = app.add_subcommand("norm", "L1, Euclidean (L2, default) or max norm of FILE (--ord 1|2|inf), correctly rounded (L1, L2; the max norm is exact)");
  add_options(norm, s, false);
  norm->add_option("--ord", s.ord, "which norm: 1 (sum |x|), 2 (Euclidean, default) or inf (max |x|)")
      ->check(CLI::IsMember({"1", "2", "inf"}));
  CLI::App* var = app.add_subcommand("var", "variance of the elements of FILE (--ddof as NumPy), correctly rounded");
  CLI::App* stdev = app.add_subcommand("std", "standard deviation of FILE (--ddof as NumPy), correctly rounded");
  for (CLI::App* cmd : {var, stdev}) {
    add_options(cmd, s, false);
    cmd->add_option("--ddof", s.ddof,
                    "delta degrees of freedom: divide by n - ddof (0: population, 1: sample); ddof >= n gives nan "
                    "(NumPy: inf, or nan for empty or constant data)")
        ->check(CLI::Validator(
            [](const std::string& v) {
              return whole_number(v) ? std::string()
                                     : "takes a whole number, 0 to 2^63 - 1, not '" + v + "'";
            },
            "N>=0"))
        ->capture_default_str();
  }
  std::vector<CLI::App*> extremes;
  for (const char* name : {"min", "max", "argmin", "argmax", "minmax"}) {
    std::string what = std::string(name) == "minmax"
                           ? std::string("minimum and maximum of FILE in one read, printed as 'MIN MAX' (see --skip-nan)")
                       : std::string(name).starts_with("arg")
                           ? std::string("index of the first ") + (name + 3) + "imum of FILE (flattened)"
                           : std::string(name) + "imum of FILE (NaN if FILE holds one; see --skip-nan)";
    CLI::App* cmd = app.add_subcommand(name, what);
    add_options(cmd, s, false);
    cmd->add_flag("--skip-nan", s.skip_nan, "ignore NaN (NumPy's nanmin, nanmax, nanargmin, nanargmax; tally's nanminmax)");
    extremes.push_back(cmd);
  }
  for (CLI::App* cmd : {sum, mean, extremes[0], extremes[1], extremes[2], extremes[3], extremes[4]})
    cmd->add_option("--axis", s.axis, "2-D .npy input: reduce along axis 0 (one result per column) or 1 (per row),"
                                      " printed one per line (either backend; see --backend)")
        ->check(CLI::IsMember({0, 1}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A word where the command belongs that is no command: name it (CLI11 would say only
    // "A subcommand is required").
    if (app.get_subcommands().empty() && !app.remaining().empty() && !app.remaining()[0].starts_with("-")) {
      std::string names;
      for (const CLI::App* cmd : app.get_subcommands({})) names += (names.empty() ? "" : ", ") + cmd->get_name();
      std::fprintf(stderr, "tally: unknown command '%s' (the commands: %s; see tally --help)\n",
                   app.remaining()[0].c_str(), names.c_str());
      return 2;
    }
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (s.distributed && (s.axis >= 0 || s.ord != "2")) {
    std::fprintf(stderr, "tally: --distributed reduces the whole flattened array (no --axis) and takes the 2-norm only\n");
    return 2;
  }
  if (s.distributed && (*var || *stdev || *extremes[4])) {
    std::fprintf(stderr, "tally: --distributed takes sum, dot, mean, norm, min, max, argmin and argmax (not var, std or minmax)\n");
    return 2;
  }
  // CSV-only options that no input would use are refused, not ignored
  std::vector<std::string> csv_given;
  bool two = false;
  for (CLI::App* cmd : app.get_subcommands()) {
    two = cmd == dot || cmd == add;
    for (const char* name : {"--column", "--column-b", "--delimiter", "--skip-rows"})
      if (const CLI::Option* o = cmd->get_option_no_throw(name); o && o->count() > 0) csv_given.push_back(name);
  }
  try {
    check_csv_options(s, csv_given, two);
  } catch (const input_error& e) {
    return fail(e, 2);
  }
  if (s.distributed)
    for (CLI::App* cmd : app.get_subcommands())
      return run_distributed({cmd->get_name(), s.a, s.b, s.backend, s.accuracy, s.json, s.skip_nan});
  try {
    if (s.axis >= 0) {
      for (CLI::App* cmd : {sum, mean, extremes[0], extremes[1], extremes[2], extremes[3]})
        if (*cmd) run_axis(cmd->get_name(), s);
      if (*extremes[4]) run_axis_minmax(s);
      return 0;
    }
    if (*extremes[4]) {
      print(run_minmax(s), s.json);
      return 0;
    }
    for (CLI::App* cmd : extremes)
      if (*cmd) {
        print(run_extreme(cmd->get_name(), s), s.json);
        return 0;
      }
    if (*var || *stdev) {
      print(run_var(static_cast<bool>(*stdev), s), s.json);
      return 0;
    }
    if (*mean || *norm) {
      print(run_mean_norm(static_cast<bool>(*norm), s), s.json);
      return 0;
    }
    if (*add) print(run_add(s), s.json);
    else print(run_reduce(*dot ? tally::reduce_op::dot : tally::reduce_op::sum, s), s.json);
    return 0;
  } catch (const npy::error& e) {
    return fail(e, 2);
  } catch (const csv::error& e) {
    return fail(e, 2);
  } catch (const input_error& e) {
    return fail(e, 2);
  } catch (const tally::error& e) {
    if (e.code() != tally::errc::overflow) return fail(e, 1);
    // the library names the operation; the tool adds the file(s)
    const bool two = *dot || *add;
    return fail(tally::error(e.code(), naming_files(e.what(), two ? s.a + " and " + s.b : s.a)), 1);
  } catch (const std::exception& e) {  // anything unexpected
    return fail(e, 1);
  } catch (...) {
    std::fprintf(stderr, "tally: unknown error\n");
    return 1;
  }
}

int main(int argc, char** argv) {
  const int rc = run_main(argc, argv);
  // The result is written to a buffered stdout: a write that fails (a full disk, a closed
  // stdout) shows only at this flush, which exit would do silently with status 0
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "tally: cannot write the result to standard output%s%s\n", errno ? ": " : "",
                 errno ? std::strerror(errno) : "");
    return rc != 0 ? rc : 1;
  }
  return rc;
}
