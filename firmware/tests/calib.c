/*
 * Instruction-counter calibration.
 *
 * Runs an inline-assembly loop of exactly CALIB_BODY instructions per
 * iteration (CALIB_BODY - 2 NOPs, SUBS, BNE; a taken branch is one
 * instruction for QEMU's -icount) for several iteration counts n, between
 * two board_counter() reads, and prints "calib n=<n> delta=<delta>".
 * Under the board's -icount shift the host test checks that
 *   delta(n) - CALIB_BODY * n
 * is the same constant (the cost of the two counter reads and the loop
 * set-up) for every n: the counter counts instructions exactly.
 * "calib empty delta=<d>" is two back-to-back reads.
 * Thumb-1 only, so the same code runs on Armv6-M.
 */
#include <stdint.h>

#include "mcuflow/board.h"

#define CALIB_BODY 10u

static void put_u32(uint32_t v)
{
    char buf[12];
    int i = 11;
    buf[i] = '\0';
    do {
        buf[--i] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0u);
    board_puts(&buf[i]);
}

__attribute__((noinline)) static uint32_t measure(uint32_t n)
{
    uint32_t c0 = board_counter();
    __asm__ volatile(
        "1:\n\t"
        "nop\n\t"
        "nop\n\t"
        "nop\n\t"
        "nop\n\t"
        "nop\n\t"
        "nop\n\t"
        "nop\n\t"
        "nop\n\t"
        "subs %0, %0, #1\n\t"
        "bne 1b\n\t"
        : "+l"(n)
        :
        : "cc", "memory");
    uint32_t c1 = board_counter();
    return c1 - c0;
}

__attribute__((noinline)) static uint32_t measure_empty(void)
{
    uint32_t c0 = board_counter();
    __asm__ volatile("" ::: "memory");
    uint32_t c1 = board_counter();
    return c1 - c0;
}

static const uint32_t counts[] = {
    1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
    17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
    33, 50, 64, 99, 100, 127, 128, 255, 256, 999, 1000, 1001, 4096, 10000, 100000,
};

int main(void)
{
    board_puts("calib board=");
    board_puts(board_name());
    board_puts(" body=");
    put_u32(CALIB_BODY);
    board_puts("\n");
    board_puts("calib empty delta=");
    put_u32(measure_empty());
    board_puts("\n");
    for (uint32_t i = 0; i < sizeof(counts) / sizeof(counts[0]); ++i) {
        uint32_t d = measure(counts[i]);
        board_puts("calib n=");
        put_u32(counts[i]);
        board_puts(" delta=");
        put_u32(d);
        board_puts("\n");
    }
    board_puts("calib done\n");
    return 0;
}
