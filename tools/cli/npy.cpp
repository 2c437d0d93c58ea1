// tally CLI: reading and writing NumPy .npy files.
#include "npy.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <filesystem>
#include <memory>
#include <string_view>
#include <tuple>
#include <utility>

namespace tally_cli::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;

/// `text` with control bytes (and DEL) written as \xNN, so that bytes from a file cannot cut
/// a message short or drive the terminal.
std::string printable(const std::string& text) {
  std::string r;
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) {
      static const char hex[] = "0123456789abcdef";
      r += "\\x";
      r += hex[c >> 4];
      r += hex[c & 15];
    } else {
      r += static_cast<char>(c);
    }
  }
  return r;
}

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw error(printable(path) + ": " + printable(problem));
}

/// make_array, or an error naming the file and the bytes it needs when memory runs out.
host_array allocate(const std::string& path, tally::dtype t, std::vector<std::int64_t> shape, std::int64_t bytes) {
  try {
    return make_array(t, std::move(shape));
  } catch (const std::bad_alloc&) {
    fail(path, "needs " + std::to_string(bytes) + " bytes of memory for its data, more than can be allocated");
  } catch (const std::length_error&) {
    fail(path, "needs " + std::to_string(bytes) + " bytes of memory for its data, more than can be allocated");
  }
}

/// NumPy's bool is one byte read as "not zero": a file may hold other bytes than 0 and 1
/// (np.load shows them as True), so they are made 0 / 1 once, on loading.
void normalise_bools(host_array& a) {
  if (a.type() != tally::dtype::bool_) return;
  auto* p = static_cast<unsigned char*>(a.bytes());
  for (std::int64_t i = 0, n = a.size(); i < n; ++i) p[i] = p[i] != 0;
}

std::string errno_text() { return std::strerror(errno); }

// ---- a small parser for the Python literal in the header ----------------------------------

/// A parse error inside the header; its text is the problem.
struct bad_header : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A Python literal: str, int, a name (True/False/None), tuple/list or dict.
struct pyval {
  enum kind { str, num, name, seq, dict } k = name;
  std::string text;               // str contents, digits, or the name
  std::vector<pyval> items;       // seq items, or dict values
  std::vector<std::string> keys;  // dict keys
  bool list = false;              // seq: a list [...] rather than a tuple (...)
  std::size_t begin = 0, end = 0;  // where its text lies in the header
};

/// Recursive-descent parser of the literals NumPy writes in .npy headers.
class literal_parser {
 public:
  explicit literal_parser(std::string_view s) : s_(s) {}

  pyval parse() {
    pyval v = value(0);
    skip_ws();
    if (i_ != s_.size()) throw bad_header("unexpected text after the dictionary");
    return v;
  }

 private:
  std::string_view s_;
  std::size_t i_ = 0;

  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  char peek() {
    skip_ws();
    if (i_ >= s_.size()) throw bad_header("unexpected end of header");
    return s_[i_];
  }
  void expect(char c) {
    if (peek() != c) throw bad_header(std::string("expected '") + c + "' at offset " + std::to_string(i_));
    ++i_;
  }

  pyval value(int depth) {
    if (depth > 16) throw bad_header("nested too deeply");
    char c = peek();
    const std::size_t begin = i_;
    pyval v;
    if (c == '{') v = dict(depth);
    else if (c == '(' || c == '[') v = seq(depth, c == '(' ? ')' : ']');
    else if (c == '\'' || c == '"') v = string();
    else if (c == '-' || (c >= '0' && c <= '9')) v = number();
    else if (std::isalpha(static_cast<unsigned char>(c))) v = word();
    else throw bad_header(std::string("unexpected character '") + c + "'");
    v.begin = begin;
    v.end = i_;
    return v;
  }

  pyval dict(int depth) {
    pyval v;
    v.k = pyval::dict;
    ++i_;
    while (peek() != '}') {
      pyval key = value(depth + 1);
      if (key.k != pyval::str) throw bad_header("a dictionary key is not a string");
      expect(':');
      v.keys.push_back(key.text);
      v.items.push_back(value(depth + 1));
      if (peek() == ',') ++i_;
      else if (peek() != '}') throw bad_header("expected ',' or '}' in the dictionary");
    }
    ++i_;
    return v;
  }

  /// A tuple (...) or list [...]. As in Python, parentheses around one value without a comma
  /// are only grouping: (2) is the int 2, not a tuple (a 1-tuple is written (2,)).
  pyval seq(int depth, char close) {
    pyval v;
    v.k = pyval::seq;
    v.list = close == ']';
    bool comma = false;
    ++i_;
    while (peek() != close) {
      v.items.push_back(value(depth + 1));
      if (peek() == ',') {
        ++i_;
        comma = true;
      } else if (peek() != close) {
        throw bad_header(std::string("expected ',' or '") + close + "'");
      }
    }
    ++i_;
    if (!v.list && v.items.size() == 1 && !comma) return std::move(v.items[0]);
    return v;
  }

  pyval string() {
    char q = s_[i_++];
    pyval v;
    v.k = pyval::str;
    while (i_ < s_.size() && s_[i_] != q) {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
      v.text += s_[i_++];
    }
    if (i_ >= s_.size()) throw bad_header("unterminated string");
    ++i_;
    return v;
  }

  pyval number() {
    pyval v;
    v.k = pyval::num;
    if (s_[i_] == '-') v.text += s_[i_++];
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') v.text += s_[i_++];
    if (v.text.empty() || v.text == "-") throw bad_header("malformed number");
    if (i_ < s_.size() && (s_[i_] == 'L' || s_[i_] == 'l')) ++i_;  // Python 2 long (old files)
    return v;
  }

  pyval word() {
    pyval v;
    v.k = pyval::name;
    while (i_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[i_]))) v.text += s_[i_++];
    return v;
  }
};

// ---- interpreting the header -------------------------------------------------------------

struct header {
  tally::dtype type;
  bool swap;     // file byte order differs from this machine's
  bool fortran;  // column-major data
  std::vector<std::int64_t> shape;
  std::int64_t count;  // number of elements
  std::int64_t bytes;  // count times the element size
};

/// The value of `key` in dictionary `d`; the last one when the key repeats, as Python's
/// dict literal (and so np.load) takes it.
const pyval* find(const pyval& d, const char* key) {
  for (std::size_t i = d.keys.size(); i-- > 0;)
    if (d.keys[i] == key) return &d.items[i];
  return nullptr;
}

/// Element type and byte order of a descr string such as '<f8'; throws for others.
std::pair<tally::dtype, bool> parse_descr(const std::string& path, const pyval& d) {
  if (d.k != pyval::str)
    fail(path, "unsupported dtype: structured arrays are not supported (tally reads f2, f4, f8, i1-i8, u1-u8, b1)");
  const std::string& s = d.text;
  auto unsupported = [&] {
    fail(path, "unsupported dtype '" + s + "' (tally reads f2, f4, f8, i1, i2, i4, i8, u1, u2, u4, u8 and b1"
                                           " arrays; bfloat16 has no NumPy dtype)");
  };
  if (s.size() != 3 || (s[0] != '<' && s[0] != '>' && s[0] != '=' && s[0] != '|')) unsupported();
  static const struct {
    const char* code;
    tally::dtype type;
  } known[] = {{"f2", tally::dtype::float16}, {"f4", tally::dtype::float32}, {"f8", tally::dtype::float64},
               {"i1", tally::dtype::int8},    {"i2", tally::dtype::int16},   {"i4", tally::dtype::int32},
               {"i8", tally::dtype::int64},   {"u1", tally::dtype::uint8},   {"u2", tally::dtype::uint16},
               {"u4", tally::dtype::uint32},  {"u8", tally::dtype::uint64},  {"b1", tally::dtype::bool_}};
  tally::dtype t{};
  bool found = false;
  for (const auto& k : known)
    if (s.compare(1, 2, k.code) == 0) { t = k.type; found = true; }
  if (!found) unsupported();
  bool file_big = s[0] == '>' || (s[0] == '=' && std::endian::native == std::endian::big);
  return {t, file_big != (std::endian::native == std::endian::big)};
}

/// The dimensions of the header's 'shape': a tuple of non-negative ints, as np.load demands
/// ((), (2,), (2, 3)); `text` is the header, for quoting a bad shape.
std::vector<std::int64_t> parse_shape(const std::string& path, std::string_view text, const pyval& v,
                                      std::int64_t& count) {
  if (v.k != pyval::seq || v.list) {
    std::string src(text.substr(v.begin, v.end - v.begin));
    if (src.size() > 80) src = src.substr(0, 77) + "...";
    std::string why = v.list ? "a list, not a tuple (NumPy writes a tuple: (2,) or (2, 3))"
                      : v.k == pyval::num && text[v.begin] == '('
                          ? "not a tuple: in Python (" + v.text + ") is the number " + v.text + "; a 1-D shape is written (" +
                                v.text + ",)"
                          : "not a tuple (NumPy writes a tuple: (), (2,) or (2, 3))";
    fail(path, "malformed header: 'shape' is " + src + ", " + why);
  }
  std::vector<std::int64_t> shape;
  count = 1;
  for (const pyval& d : v.items) {
    if (d.k != pyval::num) fail(path, "malformed header: bad dimension in 'shape' (not a whole number)");
    const std::string shown = d.text.size() > 40 ? d.text.substr(0, 37) + "..." : d.text;
    if (d.text[0] == '-') fail(path, "malformed header: negative dimension " + shown + " in 'shape'");
    if (d.text.size() > 18)  // (at least 10^18: beyond any array, and beyond int64 from 10^19)
      fail(path, "malformed header: dimension " + shown + " in 'shape' is too large");
    std::int64_t n = std::stoll(d.text);
    if (__builtin_mul_overflow(count, n, &count) || count > (std::int64_t(1) << 60))
      fail(path, "malformed header: 'shape' has too many elements");
    shape.push_back(n);
  }
  return shape;
}

header parse_header(const std::string& path, std::string_view text) {
  pyval d;
  try {
    d = literal_parser(text).parse();
  } catch (const bad_header& e) {
    fail(path, std::string("malformed header: ") + e.what());
  }
  if (d.k != pyval::dict) fail(path, "malformed header: not a dictionary");
  const pyval* descr = find(d, "descr");
  const pyval* fortran = find(d, "fortran_order");
  const pyval* shape = find(d, "shape");
  if (!descr || !fortran || !shape)
    fail(path, "malformed header: needs the keys 'descr', 'fortran_order' and 'shape'");
  if (fortran->k != pyval::name || (fortran->text != "True" && fortran->text != "False"))
    fail(path, "malformed header: 'fortran_order' is not True or False");
  header h{};
  std::tie(h.type, h.swap) = parse_descr(path, *descr);
  h.fortran = fortran->text == "True";
  h.shape = parse_shape(path, text, *shape, h.count);
  if (__builtin_mul_overflow(h.count, static_cast<std::int64_t>(tally::dtype_size(h.type)), &h.bytes))
    fail(path, "malformed header: 'shape' " + shape_str(h.shape) + " needs more than 2^63 - 1 bytes of data");
  return h;
}

// ---- data ---------------------------------------------------------------------------------

void byteswap(void* p, std::int64_t n, std::size_t size) {
  auto* b = static_cast<unsigned char*>(p);
  for (std::int64_t i = 0; i < n; ++i, b += size)
    for (std::size_t j = 0; j < size / 2; ++j) std::swap(b[j], b[size - 1 - j]);
}

/// Reorders column-major (Fortran) elements of `shape` into row-major (C) order.
template <class T> void fortran_to_c(std::vector<T>& v, const std::vector<std::int64_t>& shape) {
  std::size_t nd = shape.size();
  if (nd < 2 || v.empty()) return;
  std::vector<std::int64_t> stride(nd, 1), idx(nd, 0);  // C strides, in elements
  for (std::size_t d = nd - 1; d-- > 0;) stride[d] = stride[d + 1] * shape[d + 1];
  std::vector<T> out(v.size());
  std::int64_t c = 0;
  for (std::size_t f = 0; f < v.size(); ++f) {
    out[static_cast<std::size_t>(c)] = v[f];
    for (std::size_t d = 0; d < nd; ++d) {  // Fortran order: the first index runs fastest
      if (++idx[d] < shape[d]) { c += stride[d]; break; }
      c -= stride[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
  v.swap(out);
}

using file_ptr = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

file_ptr open_read(const std::string& path) {
  file_ptr f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) fail(path, "cannot open: " + errno_text());
  return f;
}

/// Reads exactly n bytes, or reports the short read with `what`.
void read_exact(const std::string& path, std::FILE* f, void* p, std::size_t n, const char* what) {
  if (std::fread(p, 1, n, f) == n) return;
  if (std::ferror(f)) fail(path, "cannot read: " + errno_text());
  fail(path, what);
}

/// Bytes from the current position to the end of the file.
std::int64_t bytes_left(const std::string& path, std::FILE* f) {
  struct stat st {};
  off_t pos = ftello(f);
  if (fstat(fileno(f), &st) != 0 || pos < 0) fail(path, "cannot read: " + errno_text());
  if (!S_ISREG(st.st_mode)) return -1;  // unknown (a pipe): let fread tell
  return static_cast<std::int64_t>(st.st_size - pos);
}

/// Reads the magic, version and header text; leaves `f` at the first data byte.
std::string read_header_text(const std::string& path, std::FILE* f) {
  unsigned char pre[8];
  std::size_t got = std::fread(pre, 1, 8, f);
  if (std::ferror(f)) fail(path, "cannot read: " + errno_text());
  if (got < kMagicLen || std::memcmp(pre, kMagic, kMagicLen) != 0)
    fail(path, "not a .npy file (bad magic: it does not start with \\x93NUMPY)");
  if (got < 8) fail(path, "truncated header");
  int major = pre[6], minor = pre[7];
  if (major < 1 || major > 3 || minor != 0)
    fail(path, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor));
  unsigned char len[4] = {0, 0, 0, 0};
  read_exact(path, f, len, major == 1 ? 2 : 4, "truncated header");
  std::size_t n = len[0] | (len[1] << 8) | (std::size_t(len[2]) << 16) | (std::size_t(len[3]) << 24);
  if (std::int64_t left = bytes_left(path, f); left >= 0 && static_cast<std::int64_t>(n) > left)
    fail(path, "malformed or truncated header: its length field says " + std::to_string(n) +
                   " bytes, which exceeds the file size (" + std::to_string(left + 8 + (major == 1 ? 2 : 4)) +
                   " bytes)");
  if (n > (std::size_t(1) << 24))
    fail(path, "malformed header: header length " + std::to_string(n) + " is above the 16 MiB tally reads");
  std::string text(n, '\0');
  read_exact(path, f, text.data(), n, "truncated header");
  return text;
}

}  // namespace

bool has_magic(const std::string& path) {
  file_ptr f(std::fopen(path.c_str(), "rb"), &std::fclose);
  char b[kMagicLen];
  return f && std::fread(b, 1, kMagicLen, f.get()) == kMagicLen && std::memcmp(b, kMagic, kMagicLen) == 0;
}

host_array read(const std::string& path) {
  file_ptr f = open_read(path);
  header h = parse_header(path, read_header_text(path, f.get()));
  std::size_t size = tally::dtype_size(h.type);
  std::int64_t need = h.bytes;
  std::int64_t left = bytes_left(path, f.get());
  std::string truncated = "truncated data: the header says " + std::to_string(h.count) +
                          " elements (" + std::to_string(need) + " bytes) but ";
  if (left >= 0 && left < need)
    fail(path, truncated + "only " + std::to_string(left) + " bytes follow it");
  host_array a = allocate(path, h.type, h.shape, need);
  read_exact(path, f.get(), a.bytes(), static_cast<std::size_t>(need),
             (truncated + "fewer bytes follow it").c_str());
  if (h.swap) byteswap(a.bytes(), h.count, size);
  if (h.fortran) std::visit([&](auto& v) { fortran_to_c(v, a.shape); }, a.data);
  normalise_bools(a);
  return a;
}

host_array read_slice(const std::string& path, int rank, int parts, std::int64_t& offset, std::int64_t& total) {
  file_ptr f = open_read(path);
  header h = parse_header(path, read_header_text(path, f.get()));
  total = h.count;
  offset = static_cast<std::int64_t>(static_cast<__int128>(h.count) * rank / parts);
  std::int64_t end = static_cast<std::int64_t>(static_cast<__int128>(h.count) * (rank + 1) / parts);
  std::int64_t n = end - offset;
  host_array a = allocate(path, h.type, {n}, n * static_cast<std::int64_t>(tally::dtype_size(h.type)));
  if (h.fortran && h.shape.size() >= 2) {  // C order is scattered on disk: read it all
    f.reset();
    host_array whole = read(path);
    std::size_t size = tally::dtype_size(h.type);
    std::memcpy(a.bytes(), static_cast<const char*>(whole.bytes()) + offset * size, static_cast<std::size_t>(n) * size);
    return a;  // (read normalised the bools)
  }
  std::size_t size = tally::dtype_size(h.type);
  std::int64_t need = h.bytes;
  std::int64_t left = bytes_left(path, f.get());
  if (left >= 0 && left < need)
    fail(path, "truncated data: the header says " + std::to_string(h.count) + " elements (" + std::to_string(need) +
                   " bytes) but only " + std::to_string(left) + " bytes follow it");
  if (fseeko(f.get(), static_cast<off_t>(offset * static_cast<std::int64_t>(size)), SEEK_CUR) != 0)
    fail(path, "cannot seek: " + errno_text());
  read_exact(path, f.get(), a.bytes(), static_cast<std::size_t>(n) * size, "truncated data");
  if (h.swap) byteswap(a.bytes(), n, size);
  normalise_bools(a);
  return a;
}

// ---- writing ------------------------------------------------------------------------------

namespace {

/// The header of a little-endian C-order array (format 1.0 when it fits, else 2.0).
std::string make_header(const host_array& a) {
  static const char* descr[tally::dtype_count] = {"<f4", "<f8", "<i4", "<i8", "<f2", nullptr, "|i1",
                                                  "<i2", "|u1", "<u2", "<u4", "<u8", "|b1"};
  const char* code = descr[static_cast<int>(a.type())];
  if (!code) throw error("bfloat16 arrays cannot be written as .npy (NumPy has no bfloat16 dtype)");
  std::string dict = std::string("{'descr': '") + code +
                     "', 'fortran_order': False, 'shape': " + shape_str(a.shape) + ", }";
  for (int major = 1; major <= 2; ++major) {
    std::size_t pre = major == 1 ? 10 : 12;  // magic, version, header length
    std::size_t pad = 64 - (pre + dict.size() + 1) % 64;
    std::size_t hlen = dict.size() + pad + 1;
    if (major == 2 || hlen <= 0xffff) {
      std::string out(kMagic, kMagicLen);
      out += static_cast<char>(major);
      out += '\0';
      for (std::size_t i = 0; i < pre - 8; ++i) out += static_cast<char>((hlen >> (8 * i)) & 0xff);
      return out + dict + std::string(pad, ' ') + '\n';
    }
  }
  return {};
}

// The temporary files being written, for the signal handler: SIGINT, SIGTERM or SIGHUP
// while one is open removes it (unlink is async-signal-safe), then the signal takes its
// default course. Fixed slots of plain characters: nothing in the handler allocates.
constexpr int kTempSlots = 4;
char temp_paths[kTempSlots][4096];
volatile std::sig_atomic_t temp_used[kTempSlots];
// A signal that reaches another thread (the CPU backend's OpenMP workers do not block them)
// while a temporary file is being created and registered: the handler leaves it pending, and
// the creating thread raises it again once the file is registered (lock-free atomics are
// async-signal-safe). Before this, such a signal could stop the process with the new file
// left behind (a CI run of test_a_signal_while_writing_leaves_no_temporary_file[SIGHUP]).
std::atomic<int> temp_creating{0}, temp_pending{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void remove_temps_and_reraise(int sig) {
  temp_pending.store(sig);
  if (temp_creating.load() != 0) return;  // (the creating thread raises it again)
  for (int i = 0; i < kTempSlots; ++i)
    if (temp_used[i]) ::unlink(temp_paths[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_temp_handlers() {
  static const bool installed = [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction sa {};
      sa.sa_handler = remove_temps_and_reraise;
      sigemptyset(&sa.sa_mask);
      struct sigaction old {};
      // keep an ignored signal ignored (nohup, a background job's SIGINT)
      if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
      ::sigaction(sig, &sa, nullptr);
    }
    return true;
  }();
  (void)installed;
}

int register_temp(const std::string& path) {
  if (path.size() >= sizeof temp_paths[0]) return -1;
  for (int i = 0; i < kTempSlots; ++i)
    if (!temp_used[i]) {
      std::memcpy(temp_paths[i], path.c_str(), path.size() + 1);
      temp_used[i] = 1;
      return i;
    }
  return -1;  // (more than kTempSlots at once: not removed on a signal)
}

/// A temporary file next to the destination; removed unless committed (also when the
/// process is stopped by SIGINT, SIGTERM or SIGHUP while it is open).
class temp_file {
 public:
  explicit temp_file(const std::string& dest) : dest_(dest) {
    std::filesystem::path p(dest);
    std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
    path_ = dir + "/." + p.filename().string() + ".tmpXXXXXX";
    install_temp_handlers();
    // the signals wait while the file is created and registered, so none finds it unregistered
    sigset_t block, old;
    sigemptyset(&block);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, sig);
    ::pthread_sigmask(SIG_BLOCK, &block, &old);
    temp_creating.store(1);
    fd_ = mkstemp(path_.data());
    const int made = errno;
    if (fd_ >= 0) slot_ = register_temp(path_);
    temp_creating.store(0);
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    // (a signal another thread took meanwhile: now, with the file registered)
    if (const int pending = temp_pending.load(); pending != 0) std::raise(pending);
    errno = made;
    if (fd_ < 0) fail(dest, "cannot create a temporary file in '" + dir + "': " + errno_text());
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  ~temp_file() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
    release();
  }

  void write(const void* p, std::size_t n) {
    const char* b = static_cast<const char*>(p);
    while (n > 0) {
      ssize_t w = ::write(fd_, b, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) fail(dest_, "cannot write: " + errno_text());
      b += w;
      n -= static_cast<std::size_t>(w);
    }
  }

  /// Makes the data durable and renames the file over the destination. A new file gets
  /// 0666 & ~umask; a replaced one keeps its permission bits and, where the process may set
  /// them (root, or a group it is in), its owner and group.
  void commit() {
    mode_t mask = ::umask(0);
    ::umask(mask);
    mode_t mode = 0666 & ~mask;
    struct stat old {};
    if (::stat(dest_.c_str(), &old) == 0 && S_ISREG(old.st_mode)) {
      // owner first: a change of owner clears the set-user-ID and set-group-ID bits
      if (::fchown(fd_, old.st_uid, old.st_gid) != 0 && ::fchown(fd_, static_cast<uid_t>(-1), old.st_gid) != 0) {
        // best effort: the new file stays the process's own
      }
      mode = old.st_mode & 07777;
    }
    if (::fchmod(fd_, mode) != 0 || ::fsync(fd_) != 0) fail(dest_, "cannot write: " + errno_text());
    int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) fail(dest_, "cannot write: " + errno_text());
    if (std::rename(path_.c_str(), dest_.c_str()) != 0) fail(dest_, "cannot write: " + errno_text());
    committed_ = true;
    release();
    sync_dir();
  }

 private:
  void release() {
    if (slot_ >= 0) temp_used[slot_] = 0;
    slot_ = -1;
  }

  /// Best effort: makes the rename itself durable.
  void sync_dir() {
    std::filesystem::path p(dest_);
    int d = ::open(p.has_parent_path() ? p.parent_path().c_str() : ".", O_RDONLY | O_DIRECTORY);
    if (d >= 0) {
      ::fsync(d);
      ::close(d);
    }
  }

  std::string dest_, path_;
  int fd_ = -1;
  int slot_ = -1;  // in temp_paths, or -1
  bool committed_ = false;
};

}  // namespace

void write_atomic(const std::string& given, const host_array& a) {
  // The rename replaces what is at the path: follow a symlink to its target, and never
  // replace anything but a regular file (say /dev/null, a FIFO or a socket).
  namespace fs = std::filesystem;
  std::string path = given;
  std::error_code ec;
  for (int hops = 0; fs::is_symlink(fs::symlink_status(path, ec)); ++hops) {
    if (hops == 40) fail(given, "too many levels of symbolic links");
    fs::path target = fs::read_symlink(path, ec);
    if (ec) fail(given, "cannot read the symbolic link: " + ec.message());
    path = (target.is_absolute() ? target : fs::path(path).parent_path() / target).string();
  }
  auto st = fs::status(path, ec);
  if (!ec && fs::exists(st) && !fs::is_regular_file(st))
    fail(given, "cannot write: it exists and is not a regular file (refusing to replace it)");
  // The rename needs only the directory's write permission: a write-protected file is
  // refused here as open(2) would refuse it (np.save, cp), not replaced behind its mode bits
  if (!ec && fs::exists(st) && ::access(path.c_str(), W_OK) != 0 && (errno == EACCES || errno == EROFS))
    fail(given, "cannot write: it exists and is write-protected (" + errno_text() + "; refusing to replace it)");
  std::string head = make_header(a);
  temp_file tmp(path);
  tmp.write(head.data(), head.size());
  std::size_t bytes = static_cast<std::size_t>(a.size()) * tally::dtype_size(a.type());
  if constexpr (std::endian::native == std::endian::big) {
    host_array le = a;
    byteswap(le.bytes(), le.size(), tally::dtype_size(a.type()));
    tmp.write(le.bytes(), bytes);
  } else {
    tmp.write(a.bytes(), bytes);
  }
  tmp.commit();
}

}  // namespace tally_cli::npy
