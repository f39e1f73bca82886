/* corral's run verbs: not served yet (placeholders until they land). */
#include "config.h"

#include "broker/cli.h"

int
cli_run(struct cli *cli, int argc, char **argv)
{
	return cli_fail("run: not available in this corral yet");
}

int
cli_runs(struct cli *cli, int argc, char **argv)
{
	return cli_fail("runs: not available in this corral yet");
}

int
cli_interrupt(struct cli *cli, int argc, char **argv)
{
	return cli_fail("interrupt: not available in this corral yet");
}

int
cli_shell(struct cli *cli, int argc, char **argv)
{
	return cli_fail("shell: not available in this corral yet");
}
