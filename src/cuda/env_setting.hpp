// Settings read once from the environment, then replaceable by code (the tuning switches).
#pragma once

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace tally::cuda::tuning {

/// The setting held in `state` (-1: not read yet): on first use, parse(value of the variable
/// `env`, or nullptr when unset), a value >= 0; later, whatever was stored since (the set_
/// functions store into `state`). Thread-safe: the first reader's value wins.
template <class Parse> int env_setting(std::atomic<int>& state, const char* env, Parse parse) noexcept {
  int v = state.load(std::memory_order_relaxed);
  if (v < 0) {
    int expected = -1;
    state.compare_exchange_strong(expected, parse(std::getenv(env)));
    v = state.load(std::memory_order_relaxed);
  }
  return v;
}

/// An on/off switch: on unless the variable is "0".
inline bool env_switch(std::atomic<int>& state, const char* env) noexcept {
  return env_setting(state, env, [](const char* e) { return e && std::strcmp(e, "0") == 0 ? 0 : 1; }) == 1;
}

}  // namespace tally::cuda::tuning
