/*
 * Board qemu-m33: QEMU mps2-an505 (Cortex-M33, Secure state).
 *
 * Counter: IoTKit TIMER0, Secure alias of 0x40000000 (APB PPC0 port 0) at 0x50000000u, clocked at 20 MHz
 * (tick period 50 ns). Run QEMU with -icount shift=6 (64 ns per
 * instruction): instructions = ticks * 50 / 64 = ticks * 25u / 2^5.
 */
#define MCUFLOW_CMSDK_TIMER_BASE 0x50000000u
#define MCUFLOW_TICK_NUM 25u
#define MCUFLOW_TICK_SHIFT 5
#ifndef MCUFLOW_TICK_ROUND_UP
#define MCUFLOW_TICK_ROUND_UP 0
#endif
#include "timer_cmsdk_apb.h"

const char *board_name(void)
{
    return "qemu-m33";
}
