/* corral's fs verbs: not served yet (placeholders until they land). */
#include "config.h"

#include "broker/cli.h"

int
cli_fs_read(struct cli *cli, int argc, char **argv)
{
	return cli_fail("fs read: not available in this corral yet");
}

int
cli_fs_write(struct cli *cli, int argc, char **argv)
{
	return cli_fail("fs write: not available in this corral yet");
}

int
cli_fs_edit(struct cli *cli, int argc, char **argv)
{
	return cli_fail("fs edit: not available in this corral yet");
}

int
cli_fs_list(struct cli *cli, int argc, char **argv)
{
	return cli_fail("fs list: not available in this corral yet");
}

int
cli_fs_grep(struct cli *cli, int argc, char **argv)
{
	return cli_fail("fs grep: not available in this corral yet");
}
