/* Connecting to corrald's control socket, with reasons a person can act on. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker/cli/client.h"
#include "common/frame.h"

/* Turns a connect() failure into a reason that names the fix. */
static void
client_explain(const char *path, int error, char *why, size_t why_size)
{
	switch (error) {
	case ENOENT:
		snprintf(why, why_size, "no socket at %s: corrald is not running "
		    "(start it, or point --socket or CORRAL_SOCKET at its socket)", path);
		break;
	case ECONNREFUSED:
		snprintf(why, why_size, "connection refused at %s: the socket is "
		    "stale and corrald is not running", path);
		break;
	case EACCES:
	case EPERM:
		snprintf(why, why_size, "permission denied on %s: run as root or "
		    "as a member of the group corral", path);
		break;
	case ENOTSOCK:
		snprintf(why, why_size, "%s is not a socket", path);
		break;
	case ENOTDIR:
		snprintf(why, why_size, "%s: a component of the path is not a folder", path);
		break;
	default:
		snprintf(why, why_size, "cannot connect to %s: %s", path, strerror(error));
		break;
	}
}

int
client_connect(const char *path, char *why, size_t why_size)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, saved_errno;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(why, why_size, "socket path too long (at most %zu bytes): %s",
		    sizeof(sun.sun_path) - 1, path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		snprintf(why, why_size, "socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		saved_errno = errno;
		close(fd);
		client_explain(path, saved_errno, why, why_size);
		errno = saved_errno;    /* the caller may tell a refusal from an absence */
		return -1;
	}
	return fd;
}

int
client_send_all(int fd, const uint8_t *data, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, data, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads exactly LEN bytes into BUF, waiting at most CLIENT_TIMEOUT_MS for
 * each part; 0, or -1 with errno (ETIMEDOUT, or ECONNRESET at end of file). */
static int
client_read_all(int fd, uint8_t *buf, size_t len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	while (len > 0) {
		ssize_t n;
		int ready = poll(&pfd, 1, CLIENT_TIMEOUT_MS);

		if (ready == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (ready < 0 && errno != EINTR)
			return -1;
		if (ready < 0)
			continue;
		n = recv(fd, buf, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			errno = ECONNRESET;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads one answer frame into *RESP; -1 with WHY when there is none. */
static int
client_read_answer(int fd, Corral__Response **resp, char *why, size_t why_size)
{
	uint8_t header[FRAME_HEADER_BYTES], *payload;
	const char *problem = NULL;
	size_t len;

	if (client_read_all(fd, header, sizeof(header)) == -1) {
		snprintf(why, why_size, "no answer from corrald: %s", strerror(errno));
		return -1;
	}
	if (frame_header_parse(header, sizeof(header), &len) != FRAME_READY) {
		snprintf(why, why_size, "the answer is not a corral frame");
		return -1;
	}
	if ((payload = malloc(len > 0 ? len : 1)) == NULL || client_read_all(fd, payload, len) == -1) {
		free(payload);
		snprintf(why, why_size, "the answer was cut short");
		return -1;
	}
	*resp = wire_response_unpack(payload, len, &problem);
	free(payload);
	if (*resp == NULL) {
		snprintf(why, why_size, "the answer is not a corral response: %s",
		    problem != NULL ? problem : "unreadable");
		return -1;
	}
	return 0;
}

int
client_call(int fd, const Corral__Request *req, Corral__Response **resp, char *why,
    size_t why_size)
{
	uint8_t *frame;
	size_t len;
	int saved;

	if ((frame = wire_pack(&req->base, &len)) == NULL) {
		snprintf(why, why_size, "the request is too large to send");
		return -1;
	}
	if (client_send_all(fd, frame, len) == -1) {
		saved = errno;
		explicit_bzero(frame, len);     /* it may carry a secret's value */
		free(frame);
		/* A daemon that refused the connection at once (a share reached)
		 * wrote why before it closed: that answer says more than EPIPE. */
		if (client_read_answer(fd, resp, why, why_size) == 0)
			return 0;
		snprintf(why, why_size, "sending the request failed: %s", strerror(saved));
		return -1;
	}
	explicit_bzero(frame, len);
	free(frame);
	return client_read_answer(fd, resp, why, why_size);
}

int
client_request(const char *path, const Corral__Request *req, Corral__Response **resp,
    char *why, size_t why_size)
{
	int fd = client_connect(path, why, why_size), rc;

	if (fd == -1)
		return -1;
	rc = client_call(fd, req, resp, why, why_size);
	close(fd);
	return rc;
}
