/*
 * Instruction counter on an Arm CMSDK APB timer (32-bit down-counter):
 *   +0x0 CTRL (bit 0 enable)  +0x4 VALUE  +0x8 RELOAD
 * Include from a board.c after defining MCUFLOW_CMSDK_TIMER_BASE and the
 * MCUFLOW_TICK_* conversion constants (see mcuflow_internal.h).
 */
#ifndef MCUFLOW_TIMER_CMSDK_APB_H
#define MCUFLOW_TIMER_CMSDK_APB_H

#include <stdint.h>

#include "mcuflow/board.h"
#include "mcuflow_internal.h"

#define MCUFLOW_CMSDK_REG(off) (*(volatile uint32_t *)(MCUFLOW_CMSDK_TIMER_BASE + (off)))

static uint32_t mcuflow_timer_started;

void board_init(void)
{
    if (mcuflow_timer_started) {
        return;
    }
    mcuflow_timer_started = 1u;
    MCUFLOW_CMSDK_REG(0x0) = 0u;          /* stop */
    MCUFLOW_CMSDK_REG(0x8) = 0xFFFFFFFFu; /* RELOAD: full 32-bit period */
    /* VALUE. MCUFLOW_COUNTER_PRESET (tests only) starts the count that many
     * ticks before its 32-bit wrap, to exercise wrap tracking. It must be a
     * multiple of 2^MCUFLOW_TICK_SHIFT (128 suits every board) so that
     * ticks stay in phase with instructions. */
#ifdef MCUFLOW_COUNTER_PRESET
    MCUFLOW_CMSDK_REG(0x4) = (uint32_t)(MCUFLOW_COUNTER_PRESET)-1u;
#else
    MCUFLOW_CMSDK_REG(0x4) = 0xFFFFFFFFu;
#endif
    MCUFLOW_CMSDK_REG(0x0) = 1u;          /* enable, no interrupt */
}

/* Elapsed timer ticks since board_init (up-counting, wraps at 2^32). */
uint32_t mcuflow_board_ticks(void)
{
    return 0xFFFFFFFFu - MCUFLOW_CMSDK_REG(0x4);
}

uint32_t board_counter(void)
{
    return mcuflow_ticks_to_instructions(0xFFFFFFFFu - MCUFLOW_CMSDK_REG(0x4));
}

#endif
