/*
 * Board qemu-m4: QEMU mps2-an386 (Cortex-M4F).
 *
 * Counter: CMSDK APB TIMER0 at 0x40000000u, clocked at 25 MHz
 * (tick period 40 ns). Run QEMU with -icount shift=6 (64 ns per
 * instruction): instructions = ticks * 40 / 64 = ticks * 5u / 2^3.
 */
#define MCUFLOW_CMSDK_TIMER_BASE 0x40000000u
#define MCUFLOW_TICK_NUM 5u
#define MCUFLOW_TICK_SHIFT 3
#ifndef MCUFLOW_TICK_ROUND_UP
#define MCUFLOW_TICK_ROUND_UP 0
#endif
#include "timer_cmsdk_apb.h"

const char *board_name(void)
{
    return "qemu-m4";
}
