/* Hexadecimal digits, as percent-encoding and chunk sizes write them. */
#ifndef CORRAL_HEX_H
#define CORRAL_HEX_H

/* The value of the hex digit C (either case), or -1 when C is none. */
int hex_digit(int c);

#endif
