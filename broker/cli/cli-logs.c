/* corral logs: egress ledger records from corrald's logs stream, oldest
 * first, as short lines for people or as the ledger's own JSON lines. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/cli/cli-logs.h"
#include "broker/cli/cli.h"
#include "broker/cli/client-logs.h"
#include "broker/cli/client.h"
#include "common/ledgerrec.h"
#include "common/timeutil.h"
#include "common/visible.h"
#include "common/xmalloc.h"

#define CLI_LOGS_WORD_BYTES 32          /* event, decision, mode */
#define CLI_LOGS_WHY_BYTES 512

/* The fields a line for people shows, in its order. */
enum cli_logs_field {
	CLI_LOGS_TS, CLI_LOGS_SANDBOX, CLI_LOGS_EVENT, CLI_LOGS_DECISION, CLI_LOGS_HOST,
	CLI_LOGS_PORT, CLI_LOGS_MODE, CLI_LOGS_BINARY, CLI_LOGS_REASON, CLI_LOGS_UP,
	CLI_LOGS_DOWN, CLI_LOGS_IP, CLI_LOGS_FIELDS
};

/* Where one record's fields are decoded; one for the whole run (large). */
struct cli_logs_record {
	char ts[CLI_LOGS_WORD_BYTES], event[CLI_LOGS_WORD_BYTES];
	char decision[CLI_LOGS_WORD_BYTES], mode[CLI_LOGS_WORD_BYTES];
	char port[LEDGERREC_NUMBER_MAX_BYTES], up[LEDGERREC_NUMBER_MAX_BYTES];
	char down[LEDGERREC_NUMBER_MAX_BYTES], ip[LEDGERREC_VALUE_MAX_BYTES];
	char sandbox[LEDGERREC_VALUE_MAX_BYTES], host[LEDGERREC_VALUE_MAX_BYTES];
	char binary[LEDGERREC_VALUE_MAX_BYTES], reason[LEDGERREC_VALUE_MAX_BYTES];
	struct ledgerrec_field f[CLI_LOGS_FIELDS];
};

static void
cli_logs_record_init(struct cli_logs_record *r)
{
	static const char *const keys[CLI_LOGS_FIELDS] = { "ts", "sandbox", "event", "decision",
	    "host", "port", "mode", "binary", "reason", "bytes_up", "bytes_down", "ip" };
	char *outs[CLI_LOGS_FIELDS] = { r->ts, r->sandbox, r->event, r->decision, r->host,
	    r->port, r->mode, r->binary, r->reason, r->up, r->down, r->ip };
	size_t sizes[CLI_LOGS_FIELDS] = { sizeof(r->ts), sizeof(r->sandbox), sizeof(r->event),
	    sizeof(r->decision), sizeof(r->host), sizeof(r->port), sizeof(r->mode),
	    sizeof(r->binary), sizeof(r->reason), sizeof(r->up), sizeof(r->down), sizeof(r->ip) };

	for (size_t i = 0; i < CLI_LOGS_FIELDS; i++)
		r->f[i] = (struct ledgerrec_field){ keys[i], outs[i], sizes[i], LEDGERREC_ABSENT };
}

/* FIELD made safe to print, or "-" when it is null, absent or unreadable. */
static const char *
cli_logs_value(const struct cli_logs_record *r, enum cli_logs_field field)
{
	enum ledgerrec_kind kind = r->f[field].kind;

	if (kind == LEDGERREC_STRING || kind == LEDGERREC_NUMBER || kind == LEDGERREC_BOOL ||
	    kind == LEDGERREC_TOO_LONG)
		return cli_text(r->f[field].out);
	return "-";
}

static bool
cli_logs_has(const struct cli_logs_record *r, enum cli_logs_field field)
{
	return r->f[field].kind == LEDGERREC_STRING || r->f[field].kind == LEDGERREC_NUMBER ||
	    r->f[field].kind == LEDGERREC_TOO_LONG;
}

/* "host:port", "[v6]:port", "host" (dns, unix); the address when no name
 * is known (bypass records, refusals of an address); "-" when neither. */
static void
cli_logs_endpoint(const struct cli_logs_record *r, char *out, size_t size)
{
	const char *host = cli_logs_value(r, cli_logs_has(r, CLI_LOGS_HOST) ? CLI_LOGS_HOST :
	    CLI_LOGS_IP);

	if (!cli_logs_has(r, CLI_LOGS_PORT))
		snprintf(out, size, "%s", host);
	else if (strchr(host, ':') != NULL)
		snprintf(out, size, "[%s]:%s", host, cli_logs_value(r, CLI_LOGS_PORT));
	else
		snprintf(out, size, "%s:%s", host, cli_logs_value(r, CLI_LOGS_PORT));
}

/* One record as a line for people: time, sandbox ("-": host mode),
 * event, decision, host:port, mode, binary, reason, and a close's bytes. */
static void
cli_logs_print_line(struct cli_logs_record *r, const char *rec, size_t len)
{
	char endpoint[CLI_TEXT_MAX_BYTES + LEDGERREC_NUMBER_MAX_BYTES + 4];

	if (!ledgerrec_scan(rec, len, r->f, CLI_LOGS_FIELDS) &&
	    r->f[CLI_LOGS_TS].kind != LEDGERREC_STRING) {
		printf("(not a ledger record) %s\n", cli_text(rec));
		return;
	}
	cli_logs_endpoint(r, endpoint, sizeof(endpoint));
	printf("%s  %s  %-7s  %-5s  %s  %s  %s  %s", cli_logs_value(r, CLI_LOGS_TS),
	    cli_logs_value(r, CLI_LOGS_SANDBOX), cli_logs_value(r, CLI_LOGS_EVENT),
	    cli_logs_value(r, CLI_LOGS_DECISION), endpoint, cli_logs_value(r, CLI_LOGS_MODE),
	    cli_logs_value(r, CLI_LOGS_BINARY), cli_logs_value(r, CLI_LOGS_REASON));
	if (cli_logs_has(r, CLI_LOGS_UP) || cli_logs_has(r, CLI_LOGS_DOWN))
		printf("  up=%s down=%s", cli_logs_value(r, CLI_LOGS_UP),
		    cli_logs_value(r, CLI_LOGS_DOWN));
	putchar('\n');
}

/* What the record callback needs. */
struct cli_logs_out {
	bool json;
	struct cli_logs_record *fields;
};

static int
cli_logs_on_record(void *arg, const char *rec, size_t len)
{
	struct cli_logs_out *o = arg;

	if (o->json) {
		/* The daemon passes on only lines without C0 control bytes;
		 * DEL and C1 controls, which JSON strings may hold as they
		 * are, go out as \u escapes. */
		visible_json_write(rec, len, stdout);
		putchar('\n');
	} else {
		cli_logs_print_line(o->fields, rec, len);
	}
	if (ferror(stdout)) {
		cli_fail("writing the records failed");
		return 1;
	}
	return 0;
}

int
cli_logs_time(const char *option, const char *text, int64_t *us)
{
	if (time_parse_since(text, time_now_us(), us) == 0)
		return 0;
	return cli_fail("%s %s: not an RFC 3339 time or a duration back from now like 30s, 5m, "
	    "2h, 1d", option, cli_text(text));
}

int
cli_logs_stream(const struct cli *cli, Corral__Logs *lq, client_logs_record_fn record,
    void *arg)
{
	Corral__Request req = CORRAL__REQUEST__INIT;
	char why[CLI_LOGS_WHY_BYTES];
	enum client_logs_end end;
	int fd;

	req.request_case = CORRAL__REQUEST__REQUEST_LOGS;
	req.logs = lq;
	if ((fd = client_connect(cli->socket_path, why, sizeof(why))) == -1)
		return cli_fail("%s", why);
	end = client_logs(fd, &req, record, arg, why, sizeof(why));
	close(fd);
	fflush(stdout);
	if (end == CLIENT_LOGS_DONE)
		return CLI_EXIT_OK;
	if (end != CLIENT_LOGS_STOPPED)
		cli_fail("%s", cli_text(why));          /* the daemon's words may quote a name */
	return CLI_EXIT_FAILED;
}

/* The sandbox of `logs [NAME] [--sandbox NAME]`, given once; "" for all. */
static int
cli_logs_name(const char *positional, const char *option, char **name)
{
	if (positional != NULL && option != NULL && strcmp(positional, option) != 0)
		return cli_fail("two sandboxes named (%s and %s): give one", cli_text(positional),
		    cli_text(option));
	*name = (char *)(uintptr_t)(positional != NULL ? positional : option != NULL ? option : "");
	return (*name)[0] != '\0' ? cli_check_name(*name) : 0;
}

int
cli_logs(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sandbox", required_argument, NULL, 'S' },
		{ "denied", no_argument, NULL, 'd' },
		{ "since", required_argument, NULL, 's' },
		{ "until", required_argument, NULL, 'u' },
		{ "follow", no_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	Corral__Logs lq = CORRAL__LOGS__INIT;
	struct cli_logs_out out = { false, NULL };
	const char *sandbox = NULL;
	int opt, rc = 0;

	while (rc == 0 && (opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'S': sandbox = optarg; break;
		case 'd': lq.denied_only = 1; break;
		case 'f': lq.follow = 1; break;
		case 'j': out.json = true; break;
		case 's': rc = cli_logs_time("--since", optarg, &lq.since_us); break;
		case 'u': rc = cli_logs_time("--until", optarg, &lq.until_us); break;
		default: return cli_usage(cli_find("logs"));
		}
	}
	if (rc != 0)
		return rc;
	if (argc - optind > 1)
		return cli_usage(cli_find("logs"));
	if (cli_logs_name(optind < argc ? argv[optind] : NULL, sandbox, &lq.sandbox) != 0)
		return CLI_EXIT_FAILED;
	if (lq.until_us > 0 && lq.since_us >= lq.until_us)
		return cli_fail("--since must be before --until: nothing is in that window");
	if (lq.follow)
		setvbuf(stdout, NULL, _IOLBF, 0);       /* each record as it comes */
	out.fields = xmalloc(sizeof(*out.fields));
	cli_logs_record_init(out.fields);
	rc = cli_logs_stream(cli, &lq, cli_logs_on_record, &out);
	free(out.fields);
	return rc;
}
