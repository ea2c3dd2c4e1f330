/*
 * Board qemu-m0: QEMU microbit (nRF51822, Cortex-M0).
 *
 * Counter: nRF51 TIMER0 at 0x40008000 in 32-bit timer mode. Its base
 * clock is 16 MHz; PRESCALER = 1 gives 8 MHz (125 ns per tick). The
 * prescaler is needed because QEMU's nRF51 timer re-synchronises its
 * counter in whole-nanosecond steps: at 16 MHz (62.5 ns) that truncation
 * drifts, at 8 MHz it is exact. Run QEMU with -icount shift=7 (128 ns per
 * instruction): instructions = ticks * 125 / 128.
 * The counter is read by triggering TASKS_CAPTURE[0] and reading CC[0].
 */
#include <stdint.h>

#include "mcuflow/board.h"

#define MCUFLOW_TICK_NUM 125u
#define MCUFLOW_TICK_SHIFT 7
#ifndef MCUFLOW_TICK_ROUND_UP
#define MCUFLOW_TICK_ROUND_UP 1
#endif
#include "mcuflow_internal.h"

#define NRF_TIMER0 0x40008000u
#define TIMER_REG(off) (*(volatile uint32_t *)(NRF_TIMER0 + (off)))
#define TASKS_START 0x000u
#define TASKS_STOP 0x004u
#define TASKS_CLEAR 0x00Cu
#define TASKS_CAPTURE0 0x040u
#define REG_MODE 0x504u
#define REG_BITMODE 0x508u
#define REG_PRESCALER 0x510u
#define REG_CC0 0x540u

static uint32_t mcuflow_timer_started;

void board_init(void)
{
    if (mcuflow_timer_started) {
        return;
    }
    mcuflow_timer_started = 1u;
    TIMER_REG(TASKS_STOP) = 1u;
    TIMER_REG(REG_MODE) = 0u;      /* timer mode */
    TIMER_REG(REG_BITMODE) = 3u;   /* 32 bit */
    TIMER_REG(REG_PRESCALER) = 1u; /* 16 MHz / 2^1 = 8 MHz */
    TIMER_REG(TASKS_CLEAR) = 1u;
    TIMER_REG(TASKS_START) = 1u;
}

uint32_t mcuflow_board_ticks(void)
{
    TIMER_REG(TASKS_CAPTURE0) = 1u;
    return TIMER_REG(REG_CC0);
}

uint32_t board_counter(void)
{
    TIMER_REG(TASKS_CAPTURE0) = 1u;
    return mcuflow_ticks_to_instructions(TIMER_REG(REG_CC0));
}

const char *board_name(void)
{
    return "qemu-m0";
}
