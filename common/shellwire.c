/* The link of a persistent shell's supervisor; see shellwire.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "common/shellwire.h"
#include "common/sock.h"

#define SHELLWIRE_NUMS_MAX 8            /* numbers in one small message */

/* Sends IOV (N parts) and FD when it is not -1, as one datagram. */
static int
shellwire_sendv(int sock, struct iovec *iov, size_t n, int fd)
{
	return sock_send_fd(sock, iov, n, fd, 0) == -1 ? -1 : 0;
}

int
shellwire_send_nums(int sock, enum shellwire_type type, const uint32_t *nums, size_t n, int fd)
{
	/* Small messages need no 128 KiB seqmsg body: the words by hand. */
	uint32_t words[SHELLWIRE_NUMS_MAX + 1];
	struct iovec iov;

	if (n > SHELLWIRE_NUMS_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	words[0] = (uint32_t)type;
	memcpy(words + 1, nums, n * sizeof(*nums));
	iov.iov_base = words;
	iov.iov_len = (n + 1) * sizeof(*words);
	return shellwire_sendv(sock, &iov, 1, fd);
}

int
shellwire_send_text(int sock, enum shellwire_type type, uint32_t run, const char *text)
{
	char cut[SHELLWIRE_TEXT_MAX_BYTES];
	uint32_t head[3];
	struct iovec iov[2];
	size_t nhead = 0;

	snprintf(cut, sizeof(cut), "%s", text);
	head[nhead++] = (uint32_t)type;
	if (type == SHELLWIRE_FAILED)
		head[nhead++] = run;
	head[nhead++] = (uint32_t)strlen(cut) + 1;
	iov[0].iov_base = head;
	iov[0].iov_len = nhead * sizeof(*head);
	iov[1].iov_base = cut;
	iov[1].iov_len = strlen(cut) + 1;
	return shellwire_sendv(sock, iov, 2, -1);
}
