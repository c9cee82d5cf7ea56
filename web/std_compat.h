#pragma once
// Force-included into every C++ file of the page (web/header_deps.cmake): Emscripten 3.1.6's
// libc++ lacks C++20's std::bit_cast, which the engine uses; the compiler's builtin is the same
// operation. Nothing here reaches the desktop build.
#include <version>
#if defined(__EMSCRIPTEN__) && !defined(__cpp_lib_bit_cast)
#include <type_traits>
namespace std {
template <class To, class From>
requires(sizeof(To) == sizeof(From) && is_trivially_copyable_v<To> &&
         is_trivially_copyable_v<From>) constexpr To bit_cast(const From& from) noexcept {
    return __builtin_bit_cast(To, from);
}
}  // namespace std
#endif
