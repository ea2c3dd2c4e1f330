/*
 * The board interface (console, exit, host files) over a UART, for boards without semihosting.
 * The host side is python/mcuflow/uart.py; docs/boards.md describes the protocol:
 *
 *   frame   = "MF" type:u8 length:u32 payload[length] crc:u16
 *             (little-endian; crc = CRC-16/CCITT-FALSE, poly 0x1021, init 0xFFFF,
 *              over type, length and payload)
 *   board -> host   'C' console text          'X' exit: code:i32
 *                   'R' read file: cap:u32 path
 *                   'P' read part: offset:u32 n:u32 path
 *                   'W' write file: path_length:u32 path data
 *   host -> board   'r' reply to R, P, W: status:i32 size:u32 data
 *                   (status = MCUFLOW_BOARD_OK or MCUFLOW_BOARD_ERR_*; R: size = file size, data
 *                   only when it fits cap; P: data = the n bytes; W: size 0, no data)
 *
 * The board only ever waits for a reply right after its request, so the host sends nothing
 * unasked and no byte can arrive while the UART is not listening.
 */
#include <stddef.h>
#include <stdint.h>

#include "mcuflow/board.h"
#include "uart_io.h"

#define FRAME_MAGIC0 'M'
#define FRAME_MAGIC1 'F'
#define FRAME_CONSOLE 'C'
#define FRAME_EXIT 'X'
#define FRAME_READ 'R'
#define FRAME_READ_PART 'P'
#define FRAME_WRITE 'W'
#define FRAME_REPLY 'r'

static uint16_t crc16_byte(uint16_t crc, uint8_t byte)
{
    crc ^= (uint16_t)((uint16_t)byte << 8);
    for (int i = 0; i < 8; ++i) {
        crc = (crc & 0x8000u) ? (uint16_t)((crc << 1) ^ 0x1021u) : (uint16_t)(crc << 1);
    }
    return crc;
}

static uint16_t send_bytes(uint16_t crc, const void *data, uint32_t n)
{
    const uint8_t *p = (const uint8_t *)data;
    for (uint32_t i = 0; i < n; ++i) {
        mcuflow_uart_write_byte(p[i]);
        crc = crc16_byte(crc, p[i]);
    }
    return crc;
}

static uint16_t send_u32(uint16_t crc, uint32_t v)
{
    const uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    return send_bytes(crc, le, 4);
}

/* Starts a frame of `length` payload bytes; returns the running CRC. */
static uint16_t frame_begin(uint8_t type, uint32_t length)
{
    board_init(); /* idempotent: a fault before main() can still report */
    mcuflow_uart_write_byte(FRAME_MAGIC0);
    mcuflow_uart_write_byte(FRAME_MAGIC1);
    return send_u32(send_bytes(0xFFFFu, &type, 1), length);
}

static void frame_end(uint16_t crc)
{
    mcuflow_uart_write_byte((uint8_t)crc);
    mcuflow_uart_write_byte((uint8_t)(crc >> 8));
}

static uint32_t str_len(const char *s)
{
    uint32_t n = 0;
    while (s[n] != '\0') {
        ++n;
    }
    return n;
}

static uint8_t recv_byte(uint16_t *crc)
{
    const uint8_t b = mcuflow_uart_read_byte();
    *crc = crc16_byte(*crc, b);
    return b;
}

static uint32_t recv_u32(uint16_t *crc)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
        v |= (uint32_t)recv_byte(crc) << (8 * i);
    }
    return v;
}

/* Receives the host's reply: returns its status, sets *size, puts its data (at most `cap`
 * bytes) into buf. A malformed reply is MCUFLOW_BOARD_ERR_IO. */
static int recv_reply(void *buf, uint32_t cap, uint32_t *size)
{
    /* Skip to the magic: nothing else is expected on the line, but resynchronise anyway. */
    uint8_t prev = 0, b = mcuflow_uart_read_byte();
    while (!(prev == FRAME_MAGIC0 && b == FRAME_MAGIC1)) {
        prev = b;
        b = mcuflow_uart_read_byte();
    }
    uint16_t crc = 0xFFFFu;
    const uint8_t type = recv_byte(&crc);
    const uint32_t length = recv_u32(&crc);
    if (type != FRAME_REPLY || length < 8u || length - 8u > cap) {
        return MCUFLOW_BOARD_ERR_IO; /* the rest of the line cannot be trusted either */
    }
    const int32_t status = (int32_t)recv_u32(&crc);
    *size = recv_u32(&crc);
    uint8_t *dst = (uint8_t *)buf;
    for (uint32_t i = 0; i < length - 8u; ++i) {
        dst[i] = recv_byte(&crc);
    }
    const uint16_t sent = (uint16_t)(mcuflow_uart_read_byte() | (uint16_t)mcuflow_uart_read_byte() << 8);
    if (sent != crc) {
        return MCUFLOW_BOARD_ERR_IO;
    }
    if (status == MCUFLOW_BOARD_OK && length - 8u != *size) {
        return MCUFLOW_BOARD_ERR_IO;
    }
    return status;
}

void board_puts(const char *s)
{
    if (s == NULL) {
        return;
    }
    const uint32_t n = str_len(s);
    frame_end(send_bytes(frame_begin(FRAME_CONSOLE, n), s, n));
}

/* The Armv7-M / Armv8-M system reset (AIRCR SYSRESETREQ, with the register's write key):
 * QEMU started with -no-reboot exits there; a chip restarts. */
static void system_reset(void)
{
    __asm__ volatile("dsb" ::: "memory");
    *(volatile uint32_t *)0xE000ED0Cu = 0x05FAu << 16 | 1u << 2;
    __asm__ volatile("dsb" ::: "memory");
}

void board_exit(int code)
{
    frame_end(send_u32(frame_begin(FRAME_EXIT, 4), (uint32_t)code));
    mcuflow_uart_flush();
    for (;;) {
        system_reset();
    }
}

int board_read_file(const char *path, void *buf, uint32_t cap, uint32_t *n_read)
{
    if (n_read != NULL) {
        *n_read = 0;
    }
    if (path == NULL || n_read == NULL || (buf == NULL && cap != 0)) {
        return MCUFLOW_BOARD_ERR_ARG;
    }
    const uint32_t n = str_len(path);
    frame_end(send_bytes(send_u32(frame_begin(FRAME_READ, 4 + n), cap), path, n));
    uint32_t size = 0;
    const int rc = recv_reply(buf, cap, &size);
    if (rc == MCUFLOW_BOARD_OK || rc == MCUFLOW_BOARD_ERR_TOO_BIG) {
        *n_read = size;
    }
    return rc;
}

int board_read_file_at(const char *path, uint32_t offset, void *buf, uint32_t n)
{
    if (path == NULL || (buf == NULL && n != 0)) {
        return MCUFLOW_BOARD_ERR_ARG;
    }
    const uint32_t len = str_len(path);
    frame_end(send_bytes(send_u32(send_u32(frame_begin(FRAME_READ_PART, 8 + len), offset), n), path, len));
    uint32_t size = 0;
    const int rc = recv_reply(buf, n, &size);
    return rc == MCUFLOW_BOARD_OK && size != n ? MCUFLOW_BOARD_ERR_IO : rc;
}

int board_write_file(const char *path, const void *buf, uint32_t n)
{
    if (path == NULL || (buf == NULL && n != 0)) {
        return MCUFLOW_BOARD_ERR_ARG;
    }
    const uint32_t len = str_len(path);
    uint16_t crc = send_u32(frame_begin(FRAME_WRITE, 4 + len + n), len);
    frame_end(send_bytes(send_bytes(crc, path, len), buf, n));
    uint32_t size = 0;
    return recv_reply(NULL, 0, &size);
}
