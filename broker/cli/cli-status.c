/* corral status: is corrald there, and what does it say about itself. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "broker/cli/cli.h"
#include "broker/cli/client.h"

#define CLI_REASON_MAX_BYTES 512

static int
cli_status_disconnected(const char *reason)
{
	printf("Status: Disconnected\nReason: %s\n", reason);
	return CLI_EXIT_FAILED;
}

static int
cli_status_print(const Corral__StatusReply *st)
{
	char reason[CLI_REASON_MAX_BYTES];

	if (strcmp(st->version, PACKAGE_VERSION) != 0) {
		snprintf(reason, sizeof(reason), "version mismatch: corral %s, corrald %s",
		    PACKAGE_VERSION, st->version);
		return cli_status_disconnected(reason);
	}
	printf("Status: Connected\nVersion: %s\nSandboxes: %u\n", st->version, st->sandboxes);
	for (size_t i = 0; i < st->n_layers; i++)
		printf("%s\n", st->layers[i]);
	return CLI_EXIT_OK;
}

int
cli_status(struct cli *cli, int argc, char **argv)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	Corral__Status status = CORRAL__STATUS__INIT;
	Corral__Response *resp = NULL;
	char reason[CLI_REASON_MAX_BYTES * 2], why[CLI_REASON_MAX_BYTES];
	int fd, rc;

	if (argc > 1)
		return cli_usage(cli_find("status"));
	if ((fd = client_connect(cli->socket_path, reason, sizeof(reason))) == -1)
		return cli_status_disconnected(reason);
	req.request_case = CORRAL__REQUEST__REQUEST_STATUS;
	req.status = &status;
	rc = client_call(fd, &req, &resp, why, sizeof(why));
	close(fd);
	if (rc == -1 || resp->response_case != CORRAL__RESPONSE__RESPONSE_STATUS) {
		/* Something listens, but it does not answer as a corrald does. */
		snprintf(reason, sizeof(reason), "%s did not answer as corrald %s (%s)",
		    cli->socket_path, PACKAGE_VERSION, rc == -1 ? why : "unexpected answer");
		if (resp != NULL)
			corral__response__free_unpacked(resp, NULL);
		return cli_status_disconnected(reason);
	}
	rc = cli_status_print(resp->status);
	corral__response__free_unpacked(resp, NULL);
	return rc;
}
