/* Fuzz target for the exec channel's UNIX report (common/initproto.h),
 * which the broker decodes from corral-init: a sandbox's corral-init is the
 * sandbox's user's process, so what it sends is read as untrusted. The
 * input's first byte says how many descriptors come with it (0-3, as
 * SCM_RIGHTS would bring them); the rest is the body. A decoded report
 * must hold a known decision and bounded texts, and whatever descriptor it
 * takes is closed: a leaked or double-closed one aborts. */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/initproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_FDS_MAX 3

static struct seqmsg fuzz_msg;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct initproto_unix u;
	size_t nfds, len;

	if (size == 0)
		return 0;
	nfds = data[0] % (FUZZ_FDS_MAX + 1);
	len = size - 1 < sizeof(fuzz_msg.body) ? size - 1 : sizeof(fuzz_msg.body);
	seqmsg_init(&fuzz_msg, INITPROTO_UNIX);
	memcpy(fuzz_msg.body, data + 1, len);
	fuzz_msg.len = len;
	for (size_t i = 0; i < nfds; i++)
		fuzz_msg.fds[fuzz_msg.n_fds++] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (initproto_unix_decode(&fuzz_msg, &u) == 0) {
		if ((u.decision != INITPROTO_UNIX_ALLOW && u.decision != INITPROTO_UNIX_DENY) ||
		    strlen(u.path) >= INITPROTO_UNIX_TEXT_MAX_BYTES ||
		    strlen(u.listed) >= INITPROTO_UNIX_TEXT_MAX_BYTES ||
		    strlen(u.binary) >= INITPROTO_UNIX_TEXT_MAX_BYTES)
			abort();
		if (u.pidfd != -1 && close(u.pidfd) == -1)
			abort();
	}
	seqmsg_clear(&fuzz_msg);
	return 0;
}
