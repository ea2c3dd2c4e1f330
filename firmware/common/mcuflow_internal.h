/*
 * Internal helpers shared by the startup code and the board files.
 * Not part of the public board interface.
 */
#ifndef MCUFLOW_INTERNAL_H
#define MCUFLOW_INTERNAL_H

#include <stdint.h>

/* Word written over the unused stack at reset (high-water measurement). */
#define MCUFLOW_STACK_PAINT 0xC5A3E7B1u

/* Arm semihosting (BKPT 0xAB in Thumb state; r0 = operation, r1 = argument
 * or pointer to an argument block; result in r0). */
#define MCUFLOW_SYS_OPEN 0x01
#define MCUFLOW_SYS_CLOSE 0x02
#define MCUFLOW_SYS_WRITE0 0x04
#define MCUFLOW_SYS_WRITE 0x05
#define MCUFLOW_SYS_READ 0x06
#define MCUFLOW_SYS_SEEK 0x0A
#define MCUFLOW_SYS_FLEN 0x0C
#define MCUFLOW_SYS_EXIT 0x18
#define MCUFLOW_SYS_EXIT_EXTENDED 0x20
#define MCUFLOW_ADP_STOPPED_APPLICATION_EXIT 0x20026

static inline int32_t mcuflow_semihost(int32_t op, const void *arg)
{
    register int32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

/*
 * Instruction counter from a board timer.
 *
 * Under `-icount shift=K` QEMU advances virtual time by exactly 2^K ns per
 * guest instruction. A timer of period P ns (P <= 2^K, so every instruction
 * moves it at least one tick) started at an instruction boundary and read
 * D instructions later shows E = floor(D * 2^K / P) ticks (ROUND_UP = 1) or
 * E = ceil(D * 2^K / P) ticks (ROUND_UP = 0). Either way D is recovered
 * exactly as ceil(E * P / 2^K) resp. floor(E * P / 2^K). Each board writes
 * P / 2^K as NUM / 2^SHIFT and defines:
 *   MCUFLOW_TICK_NUM, MCUFLOW_TICK_SHIFT, MCUFLOW_TICK_ROUND_UP
 * The 32-bit tick value is extended to 64 bits by counting wraps, so the
 * converted value is continuous modulo 2^32.
 */
#if defined(MCUFLOW_TICK_NUM)
static uint32_t mcuflow_tick_last;
static uint32_t mcuflow_tick_wraps;

static inline uint32_t mcuflow_ticks_to_instructions(uint32_t ticks)
{
    if (ticks < mcuflow_tick_last) {
        ++mcuflow_tick_wraps;
    }
    mcuflow_tick_last = ticks;
    /* (wraps * 2^32 + ticks) * NUM / 2^SHIFT modulo 2^32, in 32-bit
     * arithmetic (no 64-bit multiply on Armv6-M): 2^32 and the high part
     * of ticks are multiples of 2^SHIFT, so only the low SHIFT bits of
     * ticks need rounding. */
    const uint32_t mask = (1u << MCUFLOW_TICK_SHIFT) - 1u;
    uint32_t r = (mcuflow_tick_wraps * (uint32_t)MCUFLOW_TICK_NUM) << (32 - MCUFLOW_TICK_SHIFT);
    r += (ticks >> MCUFLOW_TICK_SHIFT) * (uint32_t)MCUFLOW_TICK_NUM;
#if MCUFLOW_TICK_ROUND_UP
    r += ((ticks & mask) * (uint32_t)MCUFLOW_TICK_NUM + mask) >> MCUFLOW_TICK_SHIFT;
#else
    r += ((ticks & mask) * (uint32_t)MCUFLOW_TICK_NUM) >> MCUFLOW_TICK_SHIFT;
#endif
    return r;
}
#endif

#endif /* MCUFLOW_INTERNAL_H */
