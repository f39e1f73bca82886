/* Probing the kernel's layers without changing anything. */
#include "config.h"

#include <errno.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "broker/kernel.h"

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

int
kernel_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);

	return abi < 0 ? 0 : (int)abi;
}

static const char *
kernel_seccomp(void)
{
	/* PR_GET_SECCOMP answers EINVAL on a kernel built without seccomp. */
	return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == -1 && errno == EINVAL ?
	    "missing" : "available";
}

static const char *
kernel_nftables(void)
{
	struct stat st;

	if (stat("/proc/net/netfilter", &st) == 0 || stat("/sys/module/nf_tables", &st) == 0)
		return "available";
	return "missing";
}

static const char *
kernel_cgroups(void)
{
	struct stat st;

	if (stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0)
		return "v2 at /sys/fs/cgroup";
	if (stat("/sys/fs/cgroup/unified/cgroup.controllers", &st) == 0)
		return "v2 at /sys/fs/cgroup/unified";
	return "missing";
}

void
kernel_layers(char lines[KERNEL_LAYERS][KERNEL_LAYER_LINE_MAX_BYTES])
{
	int abi = kernel_landlock_abi();

	if (abi > 0)
		snprintf(lines[0], KERNEL_LAYER_LINE_MAX_BYTES, "Landlock: ABI %d", abi);
	else
		snprintf(lines[0], KERNEL_LAYER_LINE_MAX_BYTES, "Landlock: missing");
	snprintf(lines[1], KERNEL_LAYER_LINE_MAX_BYTES, "seccomp: %s", kernel_seccomp());
	snprintf(lines[2], KERNEL_LAYER_LINE_MAX_BYTES, "nftables: %s", kernel_nftables());
	snprintf(lines[3], KERNEL_LAYER_LINE_MAX_BYTES, "cgroups: %s", kernel_cgroups());
}
