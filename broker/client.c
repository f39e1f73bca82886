/* Connecting to corrald's control socket, with reasons a person can act on. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker/client.h"

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
		return -1;
	}
	return fd;
}
