/* What the running kernel offers corral's layers, for `corral status`. */
#ifndef CORRAL_KERNEL_H
#define CORRAL_KERNEL_H

#include <stddef.h>

#define KERNEL_LAYERS 4
#define KERNEL_LAYER_LINE_MAX_BYTES 160

/* The Landlock ABI version, 0 when Landlock is off or absent. */
int kernel_landlock_abi(void);
/* Fills LINES with one line per layer ("Landlock: ABI 6", "seccomp:
 * available", "nftables: available", "cgroups: v2 at /sys/fs/cgroup"). */
void kernel_layers(char lines[KERNEL_LAYERS][KERNEL_LAYER_LINE_MAX_BYTES]);

#endif
