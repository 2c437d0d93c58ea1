#include "support.hpp"

#include <new>
#include <stdexcept>
#include <utility>

namespace tt {

int grid_sms() {
#if defined(TALLY_TEST_HAVE_CUDA)
  if (tally::cuda_available()) return cuda::sm_count();
#endif
  return 132;  // NVIDIA H200
}

storage::storage(backend b, std::size_t bytes) : b_(b), bytes_(bytes) {
  if (b == backend::cuda) {
#if defined(TALLY_TEST_HAVE_CUDA)
    dev_ = cuda::device_buffer(bytes);
    p_ = static_cast<std::byte*>(dev_.get());
#else
    throw std::logic_error("tt::storage: cuda memory in a build without CUDA");
#endif
  } else {
    p_ = static_cast<std::byte*>(::operator new(std::max<std::size_t>(bytes, 1), std::align_val_t{256}));
  }
}

storage::~storage() { release(); }

void storage::release() noexcept {
  if (b_ != backend::cuda && p_) ::operator delete(p_, std::align_val_t{256});
  p_ = nullptr;
}

storage::storage(storage&& o) noexcept
    : b_(o.b_), p_(std::exchange(o.p_, nullptr)), bytes_(o.bytes_)
#if defined(TALLY_TEST_HAVE_CUDA)
      , dev_(std::move(o.dev_))
#endif
{
}

storage& storage::operator=(storage&& o) noexcept {
  if (this != &o) {
    release();
    b_ = o.b_;
    p_ = std::exchange(o.p_, nullptr);
    bytes_ = o.bytes_;
#if defined(TALLY_TEST_HAVE_CUDA)
    dev_ = std::move(o.dev_);
#endif
  }
  return *this;
}

void storage::upload(std::size_t offset, const void* src, std::size_t n) {
  if (n == 0) return;
  if (offset + n > bytes_) throw std::out_of_range("tt::storage::upload past the end");
#if defined(TALLY_TEST_HAVE_CUDA)
  if (b_ == backend::cuda) return dev_.upload(offset, src, n);
#endif
  std::memcpy(p_ + offset, src, n);
}

void storage::download(void* dst, std::size_t offset, std::size_t n) const {
  if (n == 0) return;
  if (offset + n > bytes_) throw std::out_of_range("tt::storage::download past the end");
#if defined(TALLY_TEST_HAVE_CUDA)
  if (b_ == backend::cuda) return dev_.download(dst, offset, n);
#endif
  std::memcpy(dst, p_ + offset, n);
}

std::string param_name(const ::testing::TestParamInfo<backend>& info) {
  return tally::backend_name(info.param);
}

std::string param_name(const ::testing::TestParamInfo<std::tuple<backend, dtype>>& info) {
  return std::string(tally::backend_name(std::get<0>(info.param))) + "_" +
         tally::dtype_name(std::get<1>(info.param));
}

}  // namespace tt
