/*
 * Instruction-counter calibration.
 *
 * Runs an inline-assembly loop of exactly CALIB_BODY instructions per
 * iteration (5 NOPs, SUBS, BNE; a taken branch is one
 * instruction for QEMU's -icount) for several iteration counts n, between
 * two board_counter() reads, and prints "calib n=<n> delta=<delta>".
 * Under the board's -icount shift the host test checks that
 *   delta(n) - CALIB_BODY * n
 * is the same constant (the cost of the two counter reads and the loop
 * set-up) for every n: the counter counts instructions exactly.
 * "calib empty delta=<d>" is two back-to-back reads. The overhead is the
 * number of instructions executed after the first read's timer access up
 * to and including the second read's timer access.
 * Thumb-1 only, so the same code runs on Armv6-M.
 */
#include <stdint.h>

#include "mcuflow/board.h"

#define CALIB_BODY 7u

/* Raw timer ticks (every board.c provides it; not part of board.h). */
extern uint32_t mcuflow_board_ticks(void);

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
        ".syntax unified\n\t" /* GCC assumes divided syntax for Thumb-1 */
        "1:\n\t"
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

/* After n = 1..CALIB_SMALL, these larger counts. Many small n put the two
 * counter reads at every phase of the tick/instruction ratio, so a wrong
 * conversion would show up as a varying overhead. */
#define CALIB_SMALL 160u
static const uint32_t large_counts[] = {255, 256, 999, 1000, 1001, 4096, 10000, 100000};

static void report(uint32_t n)
{
    uint32_t d = measure(n);
    board_puts("calib n=");
    put_u32(n);
    board_puts(" delta=");
    put_u32(d);
    board_puts("\n");
}

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
    for (uint32_t n = 1; n <= CALIB_SMALL; ++n) {
        report(n);
    }
    for (uint32_t i = 0; i < sizeof(large_counts) / sizeof(large_counts[0]); ++i) {
        report(large_counts[i]);
    }
    /* With -DMCUFLOW_COUNTER_PRESET the count started just before its
     * 32-bit wrap; a small value here shows the wrap happened. */
    board_puts("calib end_ticks=");
    put_u32(mcuflow_board_ticks());
    board_puts("\n");
    board_puts("calib done\n");
    return 0;
}
