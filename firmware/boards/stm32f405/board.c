/*
 * Board stm32f405: the STM32F405 (Cortex-M4F) as it is; QEMU emulates it as machine netduinoplus2.
 * Only the chip's own peripherals (register addresses and bits from ST's RM0090 reference manual):
 *
 * Clock: the reset clock, HSI 16 MHz, for the core and both APB buses (no PLL set up).
 * Console and host files: USART1 (PA9 TX, PA10 RX, alternate function 7), 115200 baud 8N1, polled;
 *   the framed protocol on top of it is firmware/common/uart_io.c. QEMU wires USART1 to -serial 0.
 * Counter: TIM2, a 32-bit up-counter. QEMU's stm32f2xx_timer counts its input clock, measured at
 *   1 GHz (tests/firmware/test_stm32f405.py); PSC = 31 divides it to 32 ns, the 2^5 ns of one
 *   instruction under -icount shift=5: the count is the instruction count itself (NUM / 2^SHIFT = 1).
 *   On the chip, TIM2 ticks at 16 MHz / 32 and the DWT cycle counter, which QEMU 7.2 does not
 *   model (it reads as zero), is used instead: board_init() picks whichever moves.
 * End of a run: board_exit() sends the end frame, then asks for a system reset (AIRCR SYSRESETREQ);
 *   QEMU started with -no-reboot exits there.
 */
#include <stdint.h>

#include "mcuflow/board.h"
#include "uart_io.h"

#define MCUFLOW_TICK_NUM 1u
#define MCUFLOW_TICK_SHIFT 0
#ifndef MCUFLOW_TIM_PRESCALER /* tests measure the timer's input clock with 0 */
#define MCUFLOW_TIM_PRESCALER 31u
#endif

#define REG(addr) (*(volatile uint32_t *)(addr))

#define RCC_AHB1ENR 0x40023830u
#define RCC_APB1ENR 0x40023840u
#define RCC_APB2ENR 0x40023844u
#define RCC_AHB1ENR_GPIOAEN (1u << 0)
#define RCC_APB1ENR_TIM2EN (1u << 0)
#define RCC_APB2ENR_USART1EN (1u << 4)

#define GPIOA_MODER 0x40020000u
#define GPIOA_PUPDR 0x4002000Cu
#define GPIOA_AFRH 0x40020024u

#define USART1_SR 0x40011000u
#define USART1_DR 0x40011004u
#define USART1_BRR 0x40011008u
#define USART1_CR1 0x4001100Cu
#define USART_SR_RXNE (1u << 5)
#define USART_SR_TXE (1u << 7)
#define USART_CR1_RE (1u << 2)
#define USART_CR1_TE (1u << 3)
#define USART_CR1_UE (1u << 13)
/* 16 MHz / (16 * 115200) = 8.68: mantissa 8, fraction 11/16 (115108 baud, 0.08 % slow). */
#define USART_BRR_115200_AT_16MHZ ((8u << 4) | 11u)

#define TIM2_CR1 0x40000000u
#define TIM2_EGR 0x40000014u
#define TIM2_CNT 0x40000024u
#define TIM2_PSC 0x40000028u
#define TIM2_ARR 0x4000002Cu

#define DEMCR 0xE000EDFCu
#define DEMCR_TRCENA (1u << 24)
#define DWT_CTRL 0xE0001000u
#define DWT_CYCCNT 0xE0001004u

static uint32_t board_started;
static uint32_t counter_is_cycles;

static void uart_init(void)
{
    REG(RCC_AHB1ENR) |= RCC_AHB1ENR_GPIOAEN;
    REG(RCC_APB2ENR) |= RCC_APB2ENR_USART1EN;
    /* PA9, PA10: alternate function (MODER 0b10), AF7 = USART1; pull-up on RX so an
     * unconnected line reads idle. */
    REG(GPIOA_MODER) = (REG(GPIOA_MODER) & ~(0xFu << 18)) | (0xAu << 18);
    REG(GPIOA_PUPDR) = (REG(GPIOA_PUPDR) & ~(0x3u << 20)) | (0x1u << 20);
    REG(GPIOA_AFRH) = (REG(GPIOA_AFRH) & ~(0xFFu << 4)) | (0x77u << 4);
    REG(USART1_BRR) = USART_BRR_115200_AT_16MHZ;
    REG(USART1_CR1) = USART_CR1_UE | USART_CR1_TE | USART_CR1_RE;
}

static void counter_init(void)
{
    REG(RCC_APB1ENR) |= RCC_APB1ENR_TIM2EN;
    REG(TIM2_CR1) = 0u;
    REG(TIM2_PSC) = MCUFLOW_TIM_PRESCALER;
    REG(TIM2_ARR) = 0xFFFFFFFFu;
    REG(TIM2_EGR) = 1u; /* UG: load the prescaler now (the chip buffers it until an update) */
    /* MCUFLOW_COUNTER_PRESET (tests only) starts the count that many ticks before its wrap. */
#ifdef MCUFLOW_COUNTER_PRESET
    REG(TIM2_CNT) = 0u - (uint32_t)(MCUFLOW_COUNTER_PRESET);
#else
    REG(TIM2_CNT) = 0u;
#endif
    REG(TIM2_CR1) = 1u; /* CEN */

    REG(DEMCR) |= DEMCR_TRCENA;
    REG(DWT_CYCCNT) = 0u;
    REG(DWT_CTRL) |= 1u; /* CYCCNTENA */
    const uint32_t before = REG(DWT_CYCCNT);
    __asm__ volatile("nop\n\tnop\n\tnop\n\tnop");
    counter_is_cycles = REG(DWT_CYCCNT) != before;
}

void board_init(void)
{
    if (board_started) {
        return;
    }
    board_started = 1u;
    uart_init();
    counter_init();
}

uint32_t mcuflow_board_ticks(void)
{
    return REG(TIM2_CNT);
}

uint32_t board_counter(void)
{
    return counter_is_cycles ? REG(DWT_CYCCNT) : REG(TIM2_CNT);
}

void mcuflow_uart_write_byte(uint8_t byte)
{
    while ((REG(USART1_SR) & USART_SR_TXE) == 0u) {
    }
    REG(USART1_DR) = byte;
}

uint8_t mcuflow_uart_read_byte(void)
{
    while ((REG(USART1_SR) & USART_SR_RXNE) == 0u) {
    }
    return (uint8_t)REG(USART1_DR);
}

void mcuflow_uart_flush(void)
{
    /* TC: the last byte has left the shift register. */
    while ((REG(USART1_SR) & (1u << 6)) == 0u) {
    }
}


const char *board_name(void)
{
    return "stm32f405";
}
