/* The fence's nftables table, generated as rule text and run through
 * libnftables in one transaction. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <nftables/libnftables.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/monitor/fence.h"

#define FENCE_TABLE_PREFIX "corral_"
#define FENCE_TABLE_MAX_BYTES (sizeof(FENCE_TABLE_PREFIX) + FENCE_INSTANCE_MAX_CHARS)
/* Room for the whole rule text below with every value at its widest. */
#define FENCE_RULES_MAX_BYTES 4096
#define FENCE_COMMAND_MAX_BYTES 256
/* The port a sandbox's resolver (any resolver) sends DNS queries to. */
#define FENCE_DNS_WELL_KNOWN_PORT 53
/* Bypass records: packets copied to the log group per sandbox interface,
 * and how much of each (the IP and transport headers). */
#define FENCE_LOG_RATE "10/second"
#define FENCE_LOG_BURST "20"
#define FENCE_LOG_SNAP_BYTES "96"
#define FENCE_LOG_SET_SIZE "65535"
#define FENCE_LOG_RULE_MAX_BYTES 192

/*
 * The table (ARCHITECTURE.md, "The fence"). Arguments: 1 table
 * name, 2 interface group, 3 connect port, 4 DNS port, 5 transparent port,
 * 6 DNS's well-known port, 7 the log rule, 8 the port the CONNECT proxy
 * listens on (a privileged one: the connect port is sent there).
 *
 * nat prerouting (dstnat, -100) runs before filter prerouting (filter, 0),
 * so a redirected packet is already addressed to the gateway there.
 * "fib daddr . iif type local" holds only for an address of the incoming
 * interface, so another sandbox's gateway or the host's other addresses
 * count as "anywhere". Rejects are ICMP admin-prohibited or TCP resets so
 * a bypass fails at once, never by a timeout, and each is
 * counted in the named counter "bypass". Every rejected packet goes
 * through the chain "bypass", whose first rule (argument 7, empty when no
 * log group is set) copies it to an NFLOG group for the ledger's bypass
 * records, at most FENCE_LOG_RATE a second per interface: the limit's
 * state lives in the set "bypass_rate", one element per sandbox, so one
 * sandbox's flood never silences another's records. A packet past the
 * limit fails the rule's limit and is rejected all the same by the next.
 *
 * Also: UDP to port 53 anywhere is redirected to the stub; forward rejects
 * whatever a sandbox would route through the host (with ip_forward=0
 * nothing gets there; this holds if someone turns it on); and
 * output and forward refuse new connections to the sandboxes' interfaces,
 * so nothing from the host reaches a sandbox's address, while replies
 * (established, related: the gateway's own answers, ICMP errors) pass.
 * The first two lines make the install idempotent: create the table if it
 * is missing, delete it, then add it whole, in one atomic transaction.
 */
static const char fence_rules[] =
    "table inet %1$s\n"
    "delete table inet %1$s\n"
    "table inet %1$s {\n"
    "  counter bypass {\n"
    "  }\n"
    "  set bypass_rate {\n"
    "    type iface_index; size " FENCE_LOG_SET_SIZE "; flags dynamic,timeout; timeout 60s;\n"
    "  }\n"
    "  chain bypass {\n"
    "%7$s"
    "    meta l4proto tcp counter name bypass reject with tcp reset\n"
    "    counter name bypass reject with icmpx admin-prohibited\n"
    "  }\n"
    "  chain nat_prerouting {\n"
    "    type nat hook prerouting priority dstnat; policy accept;\n"
    "    iifgroup %2$" PRIu32 " fib daddr . iif type local tcp dport %3$u redirect to :%8$u\n"
    "    iifgroup %2$" PRIu32 " fib daddr . iif type local tcp dport %4$u return\n"
    "    iifgroup %2$" PRIu32 " meta l4proto tcp redirect to :%5$u\n"
    "    iifgroup %2$" PRIu32 " udp dport %6$u redirect to :%4$u\n"
    "  }\n"
    "  chain filter_prerouting {\n"
    "    type filter hook prerouting priority filter; policy accept;\n"
    "    iifgroup %2$" PRIu32 " meta l4proto != tcp fib daddr . iif type != local jump bypass\n"
    "  }\n"
    "  chain input {\n"
    "    type filter hook input priority filter; policy accept;\n"
    "    iifgroup %2$" PRIu32 " ct status dnat tcp dport { %5$u, %8$u } accept\n"
    "    iifgroup %2$" PRIu32 " fib daddr . iif type local tcp dport %4$u accept\n"
    "    iifgroup %2$" PRIu32 " fib daddr . iif type local udp dport %4$u accept\n"
    "    iifgroup %2$" PRIu32 " jump bypass\n"
    "  }\n"
    "  chain forward {\n"
    "    type filter hook forward priority filter; policy accept;\n"
    "    iifgroup %2$" PRIu32 " jump bypass\n"
    "    oifgroup %2$" PRIu32 " ct state established,related accept\n"
    "    oifgroup %2$" PRIu32 " meta l4proto tcp reject with tcp reset\n"
    "    oifgroup %2$" PRIu32 " reject with icmpx admin-prohibited\n"
    "  }\n"
    "  chain output {\n"
    "    type filter hook output priority filter; policy accept;\n"
    "    oifgroup %2$" PRIu32 " ct state established,related accept\n"
    "    oifgroup %2$" PRIu32 " meta l4proto tcp reject with tcp reset\n"
    "    oifgroup %2$" PRIu32 " reject with icmpx admin-prohibited\n"
    "  }\n"
    "}\n";

/* The bypass chain's first rule, for log group %1$u: a copy of the
 * packet's first FENCE_LOG_SNAP_BYTES to the group, rate-limited per
 * interface. */
static const char fence_log_rule[] =
    "    update @bypass_rate { iif limit rate " FENCE_LOG_RATE " burst " FENCE_LOG_BURST
    " packets } log group %1$u snaplen " FENCE_LOG_SNAP_BYTES "\n";

struct fence {
	struct nft_ctx *nft;
	char table[FENCE_TABLE_MAX_BYTES];
	char log_rule[FENCE_LOG_RULE_MAX_BYTES];       /* "" until fence_set_log_group */
	char reason[FENCE_REASON_MAX_BYTES];
};

/* Records a one-line reason on F, keeping errno as it was. */
static void __attribute__((format(printf, 2, 3)))
fence_fail(struct fence *f, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->reason, sizeof(f->reason), fmt, ap);
	va_end(ap);
	f->reason[strcspn(f->reason, "\n")] = '\0';
	errno = saved;
}

/* An instance id that is safe as part of an nftables identifier. */
static int
fence_instance_ok(const char *instance)
{
	size_t len = instance == NULL ? 0 : strlen(instance);

	if (len == 0 || len > FENCE_INSTANCE_MAX_CHARS)
		return 0;
	return strspn(instance, "abcdefghijklmnopqrstuvwxyz0123456789_") == len;
}

struct fence *
fence_new(const char *instance)
{
	struct fence *f;

	if (!fence_instance_ok(instance)) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return NULL;
	f->nft = nft_ctx_new(NFT_CTX_DEFAULT);
	if (f->nft == NULL || nft_ctx_buffer_output(f->nft) != 0 ||
	    nft_ctx_buffer_error(f->nft) != 0) {
		fence_free(f);
		errno = ENOMEM;
		return NULL;
	}
	snprintf(f->table, sizeof(f->table), FENCE_TABLE_PREFIX "%s", instance);
	snprintf(f->reason, sizeof(f->reason), "no error");
	return f;
}

void
fence_free(struct fence *f)
{
	if (f == NULL)
		return;
	if (f->nft != NULL)
		nft_ctx_free(f->nft);
	free(f);
}

const char *
fence_reason(const struct fence *f)
{
	return f->reason;
}

/* Runs the command text CMD; on failure the reason is nftables' first
 * error line, prefixed by WHAT. Returns nftables' output, or NULL. */
static const char *
fence_run(struct fence *f, const char *cmd, const char *what)
{
	const char *errors;

	if (nft_run_cmd_from_buffer(f->nft, cmd) == 0) {
		(void)nft_ctx_get_error_buffer(f->nft);
		return nft_ctx_get_output_buffer(f->nft);
	}
	errors = nft_ctx_get_error_buffer(f->nft);
	(void)nft_ctx_get_output_buffer(f->nft);
	errno = EPROTO;
	fence_fail(f, "%s: %s", what, errors != NULL && *errors != '\0' ? errors : "nftables failed");
	return NULL;
}

/* Checks install's arguments: group 0 is every interface's default
 * group, so a fence on it would capture the host's own traffic. */
static int
fence_args_ok(struct fence *f, uint32_t group, const struct fence_ports *p)
{
	if (group == 0) {
		fence_fail(f, "the sandboxes' interface group must not be 0");
		return 0;
	}
	const uint16_t v[] = { p->connect, p->connect_listen, p->dns, p->transparent };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		bool bad = v[i] == 0;

		for (size_t j = 0; j < i; j++)
			bad = bad || v[i] == v[j];
		if (bad) {
			fence_fail(f, "the gateway's ports must be four different non-zero ports");
			return 0;
		}
	}
	return 1;
}

int
fence_install(struct fence *f, uint32_t group, const struct fence_ports *ports)
{
	char rules[FENCE_RULES_MAX_BYTES];
	int n;

	if (!fence_args_ok(f, group, ports)) {
		errno = EINVAL;
		return -1;
	}
	n = snprintf(rules, sizeof(rules), fence_rules, f->table, group,
	    (unsigned int)ports->connect, (unsigned int)ports->dns,
	    (unsigned int)ports->transparent, (unsigned int)FENCE_DNS_WELL_KNOWN_PORT,
	    f->log_rule, (unsigned int)ports->connect_listen);
	if (n < 0 || (size_t)n >= sizeof(rules)) {
		errno = EOVERFLOW;
		fence_fail(f, "installing the fence: the rule text does not fit");
		return -1;
	}
	return fence_run(f, rules, "installing the fence") == NULL ? -1 : 0;
}

void
fence_set_log_group(struct fence *f, uint16_t log_group)
{
	snprintf(f->log_rule, sizeof(f->log_rule), fence_log_rule, (unsigned int)log_group);
}

int
fence_remove(struct fence *f)
{
	char cmd[FENCE_COMMAND_MAX_BYTES];

	/* Adding the table first makes the delete succeed when it is gone. */
	snprintf(cmd, sizeof(cmd), "table inet %1$s\ndelete table inet %1$s\n", f->table);
	return fence_run(f, cmd, "removing the fence") == NULL ? -1 : 0;
}

int
fence_present(struct fence *f)
{
	char line[FENCE_COMMAND_MAX_BYTES];
	const char *out = fence_run(f, "list tables inet", "listing the tables");
	const char *hit;

	if (out == NULL)
		return -1;
	/* A whole line, so corral_a is not found inside corral_ab's line. */
	snprintf(line, sizeof(line), "table inet %s\n", f->table);
	for (hit = strstr(out, line); hit != NULL; hit = strstr(hit + 1, line)) {
		if (hit == out || hit[-1] == '\n')
			return 1;
	}
	return 0;
}

int
fence_bypass_count(struct fence *f, uint64_t *packets)
{
	char cmd[FENCE_COMMAND_MAX_BYTES];
	const char *out, *at;
	char *end;

	snprintf(cmd, sizeof(cmd), "list counter inet %s bypass", f->table);
	out = fence_run(f, cmd, "reading the bypass counter");
	if (out == NULL)
		return -1;
	at = strstr(out, "packets ");
	if (at == NULL) {
		errno = EPROTO;
		fence_fail(f, "reading the bypass counter: no packet count in nftables' answer");
		return -1;
	}
	errno = 0;
	*packets = strtoull(at + strlen("packets "), &end, 10);
	if (errno != 0 || end == at + strlen("packets ")) {
		errno = EPROTO;
		fence_fail(f, "reading the bypass counter: a bad packet count");
		return -1;
	}
	return 0;
}

const char *
fence_table(const struct fence *f)
{
	return f->table;
}
