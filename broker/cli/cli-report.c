/* corral report: what the ledger says each sandbox did, read from
 * corrald's logs stream and summed up (broker/cli/report.h). */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "broker/cli/cli-logs.h"
#include "broker/cli/cli.h"
#include "broker/cli/report.h"

static int
cli_report_on_record(void *arg, const char *rec, size_t len)
{
	report_add(arg, rec, len);
	return 0;
}

int
cli_report(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "since", required_argument, NULL, 's' },
		{ "until", required_argument, NULL, 'u' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	Corral__Logs lq = CORRAL__LOGS__INIT;
	bool all = false, json = false;
	struct report_window w;
	struct report *r;
	int opt, rc = 0;

	while (rc == 0 && (opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'a': all = true; break;
		case 'j': json = true; break;
		case 's': rc = cli_logs_time("--since", optarg, &lq.since_us); break;
		case 'u': rc = cli_logs_time("--until", optarg, &lq.until_us); break;
		default: return cli_usage(cli_find("report"));
		}
	}
	if (rc != 0)
		return rc;
	if (argc - optind != (all ? 0 : 1))
		return cli_usage(cli_find("report"));
	lq.sandbox = all ? (char *)(uintptr_t)"" : argv[optind];
	if (!all && cli_check_name(lq.sandbox) != 0)
		return CLI_EXIT_FAILED;
	if (lq.until_us > 0 && lq.since_us >= lq.until_us)
		return cli_fail("--since must be before --until: nothing is in that window");
	r = report_new();
	if ((rc = cli_logs_stream(cli, &lq, cli_report_on_record, r)) == CLI_EXIT_OK) {
		w.since_us = lq.since_us;
		w.until_us = lq.until_us;
		if ((json ? report_write_json(r, &w, stdout) : report_write_text(r, &w, stdout)) != 0)
			rc = cli_fail("writing the report failed");
	}
	report_free(r);
	return rc;
}
