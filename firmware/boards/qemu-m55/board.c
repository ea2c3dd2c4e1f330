/*
 * Board qemu-m55: QEMU mps3-an547 (Cortex-M55 with MVE, SSE-300, Secure).
 *
 * Counter: the SSE-300 system counter (64-bit, clocked by MAINCLK 32 MHz,
 * 31.25 ns per tick). Control frame at 0x58100000 (CNTCR bit 0 = enable,
 * Secure only), status frame at 0x48101000 (CNTCV_LO at +0x0). The SSE-300
 * has no CMSDK timer on the main clock (its system timers at 0x48000000
 * are driven by this counter). Run QEMU with -icount shift=5 (32 ns per
 * instruction): instructions = ticks * 31.25 / 32 = ticks * 125 / 128.
 */
#include <stdint.h>

#include "mcuflow/board.h"

#define MCUFLOW_TICK_NUM 125u
#define MCUFLOW_TICK_SHIFT 7
#ifndef MCUFLOW_TICK_ROUND_UP
#define MCUFLOW_TICK_ROUND_UP 1
#endif
#include "mcuflow_internal.h"

#define SYSCNT_CONTROL 0x58100000u
#define SYSCNT_STATUS 0x48101000u
#define CNTCR (*(volatile uint32_t *)(SYSCNT_CONTROL + 0x0u))
#define CNTCV_LO (*(volatile uint32_t *)(SYSCNT_STATUS + 0x0u))

static uint32_t mcuflow_timer_started;

void board_init(void)
{
    if (mcuflow_timer_started) {
        return;
    }
    mcuflow_timer_started = 1u;
    CNTCR = 0u;
    /* CNTCV_LO. MCUFLOW_COUNTER_PRESET (tests only) starts the count that
     * many ticks before its 32-bit wrap, to exercise wrap tracking. It must be a
     * multiple of 2^MCUFLOW_TICK_SHIFT (128 suits every board) so that
     * ticks stay in phase with instructions. */
#ifdef MCUFLOW_COUNTER_PRESET
    *(volatile uint32_t *)(SYSCNT_CONTROL + 0x8u) = 0u - (uint32_t)(MCUFLOW_COUNTER_PRESET);
#else
    *(volatile uint32_t *)(SYSCNT_CONTROL + 0x8u) = 0u;
#endif
    *(volatile uint32_t *)(SYSCNT_CONTROL + 0xCu) = 0u; /* CNTCV_HI */
    CNTCR = 1u; /* EN, no scaling */
}

uint32_t mcuflow_board_ticks(void)
{
    return CNTCV_LO;
}

uint32_t board_counter(void)
{
    return mcuflow_ticks_to_instructions(CNTCV_LO);
}

const char *board_name(void)
{
    return "qemu-m55";
}
