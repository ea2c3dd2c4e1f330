// C++ part of the firmware self-test: checks that C++17 device code
// (virtual functions, templates, constexpr) builds and links with
// -fno-exceptions -fno-rtti, no libstdc++ and no heap.
#include <cstdint>
#include <type_traits>

namespace {

struct Op {
    virtual ~Op() = default;
    virtual int apply(int x) const = 0;
};

struct Square final : Op {
    int apply(int x) const override { return x * x; }
};

template <typename T>
constexpr T add3(T v)
{
    static_assert(std::is_integral<T>::value, "integral only");
    return v + T{3};
}

}  // namespace

extern "C" int selftest_cxx(int x)
{
    static_assert(add3(1) == 4, "constexpr");
    Square sq;
    const Op& op = sq;
    volatile int v = x;
    return add3(op.apply(v));
}
