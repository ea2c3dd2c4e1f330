/*
 * mcuflow firmware self-test: exercises the board interface on a board.
 *
 *  1. prints a banner (semihosting console)
 *  2. checks .data was copied and .bss zeroed by the reset handler
 *  3. reads selftest_in.bin, writes selftest_out.bin = each byte XOR 0x5A,
 *     in reverse order
 *  4. checks the error paths of board_read_file (missing file, too big)
 *  5. uses the FPU / MVE where the build has them, and C++ (selftest_cxx.cpp)
 *  6. uses some stack on purpose and reports the high-water mark
 *  7. exits with SELFTEST_EXIT_CODE (default 42) if everything passed,
 *     1 otherwise.
 * Output lines are "key=value" so the host test can parse them.
 */
#include <stdint.h>

#include "mcuflow/board.h"

#ifndef SELFTEST_EXIT_CODE
#define SELFTEST_EXIT_CODE 42
#endif

#ifdef __ARM_FEATURE_MVE
#include <arm_mve.h>
#endif

extern int selftest_cxx(int x); /* selftest_cxx.cpp */

static void put_kv(const char *key, uint32_t v, int negative)
{
    char buf[13];
    int i = 12;
    buf[i] = '\0';
    do {
        buf[--i] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0u);
    if (negative) {
        buf[--i] = '-';
    }
    board_puts(key);
    board_puts("=");
    board_puts(&buf[i]);
    board_puts("\n");
}

static void put_u32(const char *key, uint32_t v)
{
    put_kv(key, v, 0);
}

static void put_i32(const char *key, int32_t v)
{
    put_kv(key, v < 0 ? 0u - (uint32_t)v : (uint32_t)v, v < 0);
}

static int failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        ++failures;
        board_puts("FAIL ");
        board_puts(what);
        board_puts("\n");
    }
}

/* .data and .bss checks */
static volatile uint32_t data_word = 0x12345678u;
static volatile uint32_t bss_words[8];

static uint8_t io_buf[1024];
static uint8_t out_buf[1024];

/* Uses at least `depth` * 48 bytes of stack: real recursion (noipa, and
 * the local array is live across the recursive call). */
__attribute__((noinline, noipa)) static uint32_t stack_user(uint32_t depth)
{
    volatile uint8_t local[48];
    for (uint32_t i = 0; i < sizeof(local); ++i) {
        local[i] = (uint8_t)(i + depth);
    }
    uint32_t sum = 0;
    if (depth > 0u) {
        sum = stack_user(depth - 1u);
    }
    __asm__ volatile("" : : "r"(local) : "memory");
    return sum + local[depth % sizeof(local)];
}

int main(void)
{
    board_init(); /* idempotent: already called by the reset handler */
    board_puts("mcuflow selftest board=");
    board_puts(board_name());
    board_puts("\n");

    check(data_word == 0x12345678u, ".data initialised");
    int bss_zero = 1;
    for (int i = 0; i < 8; ++i) {
        bss_zero &= (bss_words[i] == 0u);
    }
    check(bss_zero, ".bss zeroed");

    /* File round trip. */
    uint32_t n = 0;
    int rc = board_read_file("selftest_in.bin", io_buf, sizeof(io_buf), &n);
    put_i32("read_rc", rc);
    put_u32("read_n", n);
    check(rc == MCUFLOW_BOARD_OK, "read selftest_in.bin");
    for (uint32_t i = 0; i < n; ++i) {
        out_buf[i] = (uint8_t)(io_buf[n - 1u - i] ^ 0x5Au);
    }
    rc = board_write_file("selftest_out.bin", out_buf, n);
    put_i32("write_rc", rc);
    check(rc == MCUFLOW_BOARD_OK, "write selftest_out.bin");

    /* Error paths. */
    uint32_t m = 0;
    rc = board_read_file("selftest_in.bin", io_buf, 4u, &m);
    put_i32("toobig_rc", rc);
    check(n <= 4u || (rc == MCUFLOW_BOARD_ERR_TOO_BIG && m == n), "too big");
    rc = board_read_file("does/not/exist.bin", io_buf, sizeof(io_buf), &m);
    put_i32("missing_rc", rc);
    check(rc == MCUFLOW_BOARD_ERR_OPEN, "missing file");

    /* Floating point / vector units. */
#if defined(__ARM_FP)
    {
        volatile float a = 1.5f, b = 2.25f;
        float c = a * b + a; /* 4.875 */
        put_u32("fpu_result_x1000", (uint32_t)(c * 1000.0f));
        check(c == 4.875f, "fpu");
    }
#endif
#if defined(__ARM_FEATURE_MVE)
    {
        static int8_t va[16], vb[16];
        for (int i = 0; i < 16; ++i) {
            va[i] = (int8_t)i;
            vb[i] = (int8_t)(2 * i);
        }
        int8x16_t x = vldrbq_s8(va);
        int8x16_t y = vldrbq_s8(vb);
        int32_t dot = vmladavq_s8(x, y); /* sum 2*i*i, i<16 = 2480 */
        put_i32("mve_dot", dot);
        check(dot == 2480, "mve");
    }
#endif

    int cx = selftest_cxx(7);
    put_i32("cxx", cx);
    check(cx == 49 + 3, "c++");

    /* Counter must advance. */
    uint32_t c0 = board_counter();
    volatile uint32_t spin = 0;
    for (int i = 0; i < 100; ++i) {
        spin += (uint32_t)i;
    }
    uint32_t c1 = board_counter();
    put_u32("counter_delta", c1 - c0);
    check(c1 - c0 > 100u, "counter advances");

    put_u32("stack_user", stack_user(20));
    put_u32("stack_size", board_stack_size());
    put_u32("stack_high_water", board_stack_high_water());
    check(board_stack_high_water() > 20u * 48u, "stack high water");

    put_u32("failures", (uint32_t)failures);
    board_puts(failures == 0 ? "selftest PASS\n" : "selftest FAIL\n");
    return failures == 0 ? SELFTEST_EXIT_CODE : 1;
}
