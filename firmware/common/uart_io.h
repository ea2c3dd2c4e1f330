/*
 * What a board gives firmware/common/uart_io.c (the board interface over a UART instead of
 * semihosting): a polled byte transport. Implemented by the board's board.c; uart_io.c ends a
 * run with the architectural system reset.
 */
#ifndef MCUFLOW_UART_IO_H
#define MCUFLOW_UART_IO_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Blocking: waits until the transmitter takes the byte / a byte has arrived. */
void mcuflow_uart_write_byte(uint8_t byte);
uint8_t mcuflow_uart_read_byte(void);
/* Waits until every written byte has left the UART. */
void mcuflow_uart_flush(void);

#ifdef __cplusplus
}
#endif

#endif /* MCUFLOW_UART_IO_H */
