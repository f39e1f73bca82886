/* corral status: is corrald there, and what does it say about itself. */
#include "config.h"

#include <stdio.h>
#include <unistd.h>

#include "broker/cli.h"
#include "broker/client.h"

#define CLI_REASON_MAX_BYTES 512

static int
cli_status_disconnected(const char *reason)
{
	printf("Status: Disconnected\nReason: %s\n", reason);
	return CLI_EXIT_FAILED;
}

int
cli_status(struct cli *cli, int argc, char **argv)
{
	char reason[CLI_REASON_MAX_BYTES];
	int fd;

	if (argc > 1)
		return cli_usage(cli_find("status"));
	if ((fd = client_connect(cli->socket_path, reason, sizeof(reason))) == -1)
		return cli_status_disconnected(reason);
	/* Something listens; until it answers a status request in our
	 * protocol it is not a corrald we can talk to. */
	close(fd);
	snprintf(reason, sizeof(reason), "%s accepted the connection but did not "
	    "answer as corrald %s", cli->socket_path, PACKAGE_VERSION);
	return cli_status_disconnected(reason);
}
