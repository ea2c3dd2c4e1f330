/*
 * Board pico2: the Raspberry Pi Pico 2 (RP2350, Cortex-M33, Arm Secure). No emulator runs this
 * board: its image is built and checked (tests/python/test_uf2.py) but untested on hardware.
 * Register addresses and bits from the RP2350 datasheet (resets 7.5, clocks 8.1, boot ROM 5.9);
 * the UART is an Arm PL011.
 *
 * Boot: the boot ROM finds the IMAGE_DEF block below in the first 4 KiB of flash, and with no
 *   VECTOR_TABLE item takes the vector table at the start of the image (0x10000000).
 * Clock: left as the boot ROM leaves it (clk_sys from the ring oscillator, whose frequency
 *   varies with process, voltage and temperature; no XOSC or PLL set up). clk_peri, disabled at
 *   reset, is enabled from clk_sys for the UART.
 * Console and host files: UART0 on GP0 (TX) / GP1 (RX), 8N1, polled, in the frames of
 *   firmware/common/uart_io.c. The divisor assumes clk_peri = MCUFLOW_PICO2_CLK_PERI_HZ: the
 *   ring oscillator's frequency is not given by the datasheet, so measure it on the board and
 *   build with -DMCUFLOW_PICO2_CLK_PERI_HZ=<Hz> until the console reads clean at 115200 baud.
 * Counter: the DWT cycle counter (cycles of clk_sys).
 * End of a run: the exit frame, then a system reset (AIRCR SYSRESETREQ).
 */
#include <stdint.h>

#include "mcuflow/board.h"
#include "uart_io.h"

#ifndef MCUFLOW_PICO2_CLK_PERI_HZ
#define MCUFLOW_PICO2_CLK_PERI_HZ 12000000u /* an assumption to measure, see above */
#endif
#define MCUFLOW_PICO2_BAUD 115200u

#define REG(addr) (*(volatile uint32_t *)(addr))

#define RESETS_RESET 0x40020000u
#define RESETS_RESET_DONE 0x40020008u
#define RESET_IO_BANK0 (1u << 6)
#define RESET_PADS_BANK0 (1u << 9)
#define RESET_UART0 (1u << 26)

#define CLK_PERI_CTRL 0x40010048u
#define CLK_PERI_ENABLE (1u << 11) /* AUXSRC (bits 7:5) 0: clk_sys */

#define IO_BANK0_GPIO_CTRL(n) (0x40028004u + 8u * (n))
#define GPIO_FUNC_UART 2u
#define PADS_BANK0_GPIO(n) (0x40038004u + 4u * (n))
#define PAD_ISO (1u << 8) /* pads start isolated */
#define PAD_IE (1u << 6)

#define UART0_DR 0x40070000u
#define UART0_FR 0x40070018u
#define UART0_IBRD 0x40070024u
#define UART0_FBRD 0x40070028u
#define UART0_LCR_H 0x4007002Cu
#define UART0_CR 0x40070030u
#define UART_FR_BUSY (1u << 3)
#define UART_FR_RXFE (1u << 4)
#define UART_FR_TXFF (1u << 5)
#define UART_LCR_H_8N1_FIFO ((3u << 5) | (1u << 4))
#define UART_CR_ENABLE_TX_RX ((1u << 0) | (1u << 8) | (1u << 9))

#define DEMCR 0xE000EDFCu
#define DEMCR_TRCENA (1u << 24)
#define DWT_CTRL 0xE0001000u
#define DWT_CYCCNT 0xE0001004u

/* The IMAGE_DEF block the boot ROM needs (datasheet 5.9.5.1, the minimum Arm IMAGE_DEF): start
 * marker, IMAGE_TYPE item (EXE, Secure, Arm, RP2350), LAST item (1 word of items), a link of 0
 * (a loop of this block alone), end marker. The linker script keeps it right after the vectors. */
__attribute__((section(".mcuflow_boot_block"), used)) static const uint32_t image_def[5] = {
    0xFFFFDED3u, 0x10210142u, 0x000001FFu, 0x00000000u, 0xAB123579u,
};

static uint32_t board_started;

static void unreset(uint32_t bits)
{
    REG(RESETS_RESET) &= ~bits;
    while ((REG(RESETS_RESET_DONE) & bits) != bits) {
    }
}

static void uart_init(void)
{
    REG(CLK_PERI_CTRL) = CLK_PERI_ENABLE;
    unreset(RESET_IO_BANK0 | RESET_PADS_BANK0 | RESET_UART0);
    for (uint32_t pin = 0u; pin < 2u; ++pin) {
        REG(IO_BANK0_GPIO_CTRL(pin)) = GPIO_FUNC_UART;
        REG(PADS_BANK0_GPIO(pin)) = (REG(PADS_BANK0_GPIO(pin)) & ~PAD_ISO) | PAD_IE;
    }
    /* PL011: divisor = clk / (16 baud) as 16.6 fixed point, rounded. */
    const uint32_t div64 = (8u * MCUFLOW_PICO2_CLK_PERI_HZ / MCUFLOW_PICO2_BAUD + 1u) / 2u;
    REG(UART0_IBRD) = div64 >> 6;
    REG(UART0_FBRD) = div64 & 63u;
    REG(UART0_LCR_H) = UART_LCR_H_8N1_FIFO; /* writing LCR_H latches the divisor */
    REG(UART0_CR) = UART_CR_ENABLE_TX_RX;
}

void board_init(void)
{
    if (board_started) {
        return;
    }
    board_started = 1u;
    uart_init();
    REG(DEMCR) |= DEMCR_TRCENA;
    REG(DWT_CYCCNT) = 0u;
    REG(DWT_CTRL) |= 1u; /* CYCCNTENA */
}

uint32_t mcuflow_board_ticks(void)
{
    return REG(DWT_CYCCNT);
}

uint32_t board_counter(void)
{
    return REG(DWT_CYCCNT);
}

void mcuflow_uart_write_byte(uint8_t byte)
{
    while (REG(UART0_FR) & UART_FR_TXFF) {
    }
    REG(UART0_DR) = byte;
}

uint8_t mcuflow_uart_read_byte(void)
{
    while (REG(UART0_FR) & UART_FR_RXFE) {
    }
    return (uint8_t)REG(UART0_DR);
}

void mcuflow_uart_flush(void)
{
    while (REG(UART0_FR) & UART_FR_BUSY) {
    }
}


const char *board_name(void)
{
    return "pico2";
}
