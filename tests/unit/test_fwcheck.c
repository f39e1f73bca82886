/* broker/fwcheck: canned rulesets, in libnftables' JSON as `nft -j list
 * ruleset` prints them (1.0.6), judged for the default pool and ports;
 * then the real ruleset of a fresh network namespace (root only: the
 * program moves itself into one, so the host's firewall is never read or
 * touched). */
#include "config.h"

#include <errno.h>
#include <nftables/libnftables.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "broker/monitor/fwcheck.h"

/* 10.231.0.0/16, host byte order. */
#define POOL_ADDR ((10U << 24) | (231U << 16))
#define POOL_PREFIX 16
#define OWN_TABLE "corral_itest"
#define IFGROUP 4242

/* A ruleset: the "nftables" array around the items given. */
#define RULESET(...) "{\"nftables\": [{\"metainfo\": {\"version\": \"1.0.6\", " \
	"\"json_schema_version\": 1}}" __VA_ARGS__ "]}"
#define TABLE(fam, name) ", {\"table\": {\"family\": \"" fam "\", \"name\": \"" name \
	"\", \"handle\": 1}}"
#define BASE(fam, table, name, hook, policy) ", {\"chain\": {\"family\": \"" fam \
	"\", \"table\": \"" table "\", \"name\": \"" name "\", \"handle\": 1, " \
	"\"type\": \"filter\", \"hook\": \"" hook "\", \"prio\": 0, \"policy\": \"" policy "\"}}"
#define CHAIN(fam, table, name) ", {\"chain\": {\"family\": \"" fam "\", \"table\": \"" \
	table "\", \"name\": \"" name "\", \"handle\": 2}}"
#define RULE(fam, table, chain, handle, ...) ", {\"rule\": {\"family\": \"" fam \
	"\", \"table\": \"" table "\", \"chain\": \"" chain "\", \"handle\": " #handle \
	", \"expr\": [" __VA_ARGS__ "]}}"

/* Expressions. */
#define M(op, left, right) "{\"match\": {\"op\": \"" op "\", \"left\": " left \
	", \"right\": " right "}}"
#define PAYLOAD(proto, field) "{\"payload\": {\"protocol\": \"" proto "\", \"field\": \"" \
	field "\"}}"
#define META(key) "{\"meta\": {\"key\": \"" key "\"}}"
#define CT_STATE "{\"ct\": {\"key\": \"state\"}}"
#define PREFIX(addr, len) "{\"prefix\": {\"addr\": \"" addr "\", \"len\": " #len "}}"
#define ACCEPT "{\"accept\": null}"
#define DROP "{\"drop\": null}"
#define REJECT "{\"reject\": {\"type\": \"icmpx\", \"expr\": \"admin-prohibited\"}}"
#define COUNTER "{\"counter\": {\"packets\": 0, \"bytes\": 0}}"
#define JUMP(t) "{\"jump\": {\"target\": \"" t "\"}}"
#define GOTO(t) "{\"goto\": {\"target\": \"" t "\"}}"
#define ESTABLISHED M("in", CT_STATE, "[\"established\", \"related\"]")

/* A typical host firewall's input chain, policy drop, SSH only. */
#define HOSTFW_INPUT(...) TABLE("inet", "filter") \
	BASE("inet", "filter", "input", "input", "drop") \
	RULE("inet", "filter", "input", 3, ESTABLISHED ", " ACCEPT) \
	RULE("inet", "filter", "input", 4, M("in", CT_STATE, "\"invalid\"") ", " DROP) \
	RULE("inet", "filter", "input", 5, M("==", META("iif"), "\"lo\"") ", " ACCEPT) \
	RULE("inet", "filter", "input", 6, M("==", PAYLOAD("tcp", "dport"), "22") ", " ACCEPT) \
	__VA_ARGS__

static struct fwcheck_target
target(void)
{
	struct fwcheck_target t = {
		.pool_addr = POOL_ADDR, .pool_prefix = POOL_PREFIX,
		.tcp_ports = { 3128, 15001, 53 }, .n_tcp_ports = 3,
		.udp_ports = { 53 }, .n_udp_ports = 1,
		.own_table = OWN_TABLE, .ifname_prefix = "crs", .ifgroup = IFGROUP,
	};

	return t;
}

static struct fwcheck_result
judge(const char *json)
{
	struct fwcheck_target t = target();
	struct fwcheck_result r;

	memset(&r, 0x55, sizeof(r));
	fwcheck_judge_json(json, strlen(json), &t, &r);
	return r;
}

/* Asserts R is VERDICT, its reason holding each of the NULL-ended texts. */
static void
expect(struct fwcheck_result r, enum fwcheck_verdict verdict, ...)
{
	const char *text;
	va_list ap;

	if (r.verdict != verdict)
		print_error("verdict %s, reason: %s\n", fwcheck_verdict_name(r.verdict), r.reason);
	assert_int_equal(r.verdict, verdict);
	if (verdict == FWCHECK_OK)
		assert_string_equal(r.reason, "");
	va_start(ap, verdict);
	while ((text = va_arg(ap, const char *)) != NULL)
		assert_non_null(strstr(r.reason, text));
	va_end(ap);
}

static void
test_empty_ruleset_is_ok(void **s)
{
	expect(judge(RULESET("")), FWCHECK_OK, NULL);
}

/* corral's own table rejects plenty; it is not another firewall. */
static void
test_own_table_is_not_judged(void **s)
{
	expect(judge(RULESET(TABLE("inet", OWN_TABLE)
	    BASE("inet", OWN_TABLE, "input", "input", "drop")
	    RULE("inet", OWN_TABLE, "input", 2, COUNTER ", " REJECT))), FWCHECK_OK, NULL);
}

static void
test_input_policy_drop_is_at_risk_naming_table_and_chain(void **s)
{
	expect(judge(RULESET(HOSTFW_INPUT())), FWCHECK_AT_RISK,
	    "table inet filter, chain input", "policy drop", "tcp to the gateway's port 3128",
	    NULL);
}

static void
test_a_rule_accepting_the_pool_makes_policy_drop_ok(void **s)
{
	expect(judge(RULESET(HOSTFW_INPUT(RULE("inet", "filter", "input", 7,
	    M("==", PAYLOAD("ip", "saddr"), PREFIX("10.231.0.0", 16)) ", " ACCEPT)))),
	    FWCHECK_OK, NULL);
}

static void
test_a_wildcard_of_the_sandbox_interfaces_makes_policy_drop_ok(void **s)
{
	expect(judge(RULESET(HOSTFW_INPUT(RULE("inet", "filter", "input", 7,
	    M("==", META("iifname"), "\"crs*\"") ", " ACCEPT)))), FWCHECK_OK, NULL);
}

static void
test_the_sandbox_interface_group_makes_policy_drop_ok(void **s)
{
	expect(judge(RULESET(HOSTFW_INPUT(RULE("inet", "filter", "input", 7,
	    M("==", META("iifgroup"), "4242") ", " ACCEPT)))), FWCHECK_OK, NULL);
}

/* Accepting only some of the ports leaves the others to the policy. */
static void
test_accepting_some_ports_names_the_first_missing_one(void **s)
{
	expect(judge(RULESET(HOSTFW_INPUT(RULE("inet", "filter", "input", 7,
	    M("==", PAYLOAD("tcp", "dport"), "{\"set\": [3128, 53]}") ", " ACCEPT)))),
	    FWCHECK_AT_RISK, "policy drop", "tcp to the gateway's port 15001", NULL);
}

static void
test_an_unconditional_reject_is_at_risk(void **s)
{
	expect(judge(RULESET(TABLE("ip", "mine") BASE("ip", "mine", "in", "input", "accept")
	    RULE("ip", "mine", "in", 9, COUNTER ", " REJECT))), FWCHECK_AT_RISK,
	    "table ip mine, chain in: rule (handle 9) drops", NULL);
}

static void
test_drops_of_other_traffic_are_ok(void **s)
{
	expect(judge(RULESET(TABLE("inet", "f") BASE("inet", "f", "in", "input", "accept")
	    RULE("inet", "f", "in", 2, M("==", PAYLOAD("tcp", "dport"), "22") ", " DROP)
	    RULE("inet", "f", "in", 3, M("in", CT_STATE, "\"invalid\"") ", " DROP)
	    RULE("inet", "f", "in", 4, M("==", PAYLOAD("ip", "saddr"), PREFIX("192.168.0.0", 16))
	        ", " DROP)
	    RULE("inet", "f", "in", 5, M("==", META("l4proto"), "\"icmp\"") ", " DROP)
	    RULE("inet", "f", "in", 6, M("==", META("nfproto"), "\"ipv6\"") ", " DROP)
	    RULE("inet", "f", "in", 7, M("==", META("iifname"), "\"eth0\"") ", " DROP)
	    RULE("inet", "f", "in", 8, M("==", PAYLOAD("ip6", "saddr"), "\"::1\"") ", " DROP))),
	    FWCHECK_OK, NULL);
}

static void
test_a_drop_of_a_wider_prefix_is_at_risk(void **s)
{
	expect(judge(RULESET(TABLE("inet", "f") BASE("inet", "f", "in", "input", "accept")
	    RULE("inet", "f", "in", 4, M("==", PAYLOAD("ip", "saddr"), PREFIX("10.0.0.0", 8))
	        ", " DROP))), FWCHECK_AT_RISK, "rule (handle 4) drops", NULL);
}

/* A match fwcheck does not read (a mark) may hold: "may drop". */
static void
test_a_drop_under_an_unknown_match_may_drop(void **s)
{
	expect(judge(RULESET(TABLE("inet", "f") BASE("inet", "f", "in", "input", "accept")
	    RULE("inet", "f", "in", 4, M("==", META("mark"), "7") ", " DROP))),
	    FWCHECK_AT_RISK, "rule (handle 4) may drop", NULL);
}

static void
test_negated_match_is_understood(void **s)
{
	/* "ip saddr != 10.231.0.0/16 drop" spares the pool. */
	expect(judge(RULESET(TABLE("inet", "f") BASE("inet", "f", "in", "input", "accept")
	    RULE("inet", "f", "in", 4, M("!=", PAYLOAD("ip", "saddr"), PREFIX("10.231.0.0", 16))
	        ", " DROP))), FWCHECK_OK, NULL);
}

static void
test_ip6_and_netdev_tables_are_not_on_the_path(void **s)
{
	expect(judge(RULESET(TABLE("ip6", "f") BASE("ip6", "f", "in", "input", "drop")
	    TABLE("bridge", "b") BASE("bridge", "b", "in", "input", "drop"))), FWCHECK_OK, NULL);
}

static void
test_a_drop_in_a_jumped_chain_is_at_risk(void **s)
{
	expect(judge(RULESET(TABLE("inet", "f") BASE("inet", "f", "in", "input", "accept")
	    CHAIN("inet", "f", "checks")
	    RULE("inet", "f", "in", 3, M("==", META("l4proto"), "\"tcp\"") ", " JUMP("checks"))
	    RULE("inet", "f", "checks", 5, M("==", PAYLOAD("tcp", "dport"), "3128") ", " DROP))),
	    FWCHECK_AT_RISK, "table inet f, chain checks: rule (handle 5) drops",
	    "tcp to the gateway's port 3128", NULL);
}

static void
test_an_accept_in_a_jumped_chain_counts(void **s)
{
	expect(judge(RULESET(HOSTFW_INPUT(CHAIN("inet", "filter", "sandboxes")
	    RULE("inet", "filter", "input", 7, JUMP("sandboxes"))
	    RULE("inet", "filter", "sandboxes", 8,
	        M("==", PAYLOAD("ip", "saddr"), PREFIX("10.231.0.0", 16)) ", " ACCEPT)))),
	    FWCHECK_OK, NULL);
}

/* After a goto the packet does not come back: the base chain's policy. */
static void
test_a_goto_falling_off_its_chain_meets_the_drop_policy(void **s)
{
	expect(judge(RULESET(TABLE("inet", "f") BASE("inet", "f", "in", "input", "drop")
	    CHAIN("inet", "f", "zone")
	    RULE("inet", "f", "in", 3, ESTABLISHED ", " ACCEPT)
	    RULE("inet", "f", "in", 4, GOTO("zone"))
	    RULE("inet", "f", "zone", 5, COUNTER))), FWCHECK_AT_RISK,
	    "table inet f, chain in: rule (handle 4) goes to chain zone", "policy drops", NULL);
}

/* A return, or a goto in a jumped chain, leaves that chain: its later
 * drop is never reached. */
static void
test_a_return_ends_the_jumped_chain(void **s)
{
	expect(judge(RULESET(TABLE("inet", "f") BASE("inet", "f", "in", "input", "accept")
	    CHAIN("inet", "f", "a") CHAIN("inet", "f", "b")
	    RULE("inet", "f", "in", 3, JUMP("a"))
	    RULE("inet", "f", "a", 4, GOTO("b"))
	    RULE("inet", "f", "a", 5, DROP)
	    RULE("inet", "f", "b", 6, "{\"return\": null}")
	    RULE("inet", "f", "b", 7, DROP))), FWCHECK_OK, NULL);
}

/* A return that holds for some packets only: the others meet the drop. */
static void
test_a_partial_return_still_reaches_the_drop(void **s)
{
	expect(judge(RULESET(TABLE("inet", "f") BASE("inet", "f", "in", "input", "accept")
	    CHAIN("inet", "f", "a")
	    RULE("inet", "f", "in", 3, JUMP("a"))
	    RULE("inet", "f", "a", 4, M("==", META("mark"), "1") ", {\"return\": null}")
	    RULE("inet", "f", "a", 5, DROP))), FWCHECK_AT_RISK, "chain a: rule (handle 5) drops",
	    NULL);
}

static void
test_a_jump_to_a_missing_chain_is_unknown(void **s)
{
	expect(judge(RULESET(TABLE("inet", "f") BASE("inet", "f", "in", "input", "accept")
	    RULE("inet", "f", "in", 3, JUMP("nowhere")))), FWCHECK_UNKNOWN,
	    "chain nowhere", "does not exist", NULL);
}

static void
test_a_jump_loop_is_unknown(void **s)
{
	expect(judge(RULESET(TABLE("inet", "f") BASE("inet", "f", "in", "input", "accept")
	    CHAIN("inet", "f", "a")
	    RULE("inet", "f", "in", 3, JUMP("a"))
	    RULE("inet", "f", "a", 4, JUMP("a")))), FWCHECK_UNKNOWN, "deeper", NULL);
}

static void
test_a_queue_is_unknown(void **s)
{
	expect(judge(RULESET(TABLE("inet", "f") BASE("inet", "f", "in", "input", "accept")
	    RULE("inet", "f", "in", 3, "{\"queue\": {\"num\": 1}}"))), FWCHECK_UNKNOWN,
	    "queue", NULL);
}

static void
test_output_drop_policy_needs_established_accepted(void **s)
{
	expect(judge(RULESET(TABLE("inet", "f") BASE("inet", "f", "out", "output", "drop"))),
	    FWCHECK_AT_RISK, "chain out", "replies from the gateway's port", NULL);
	expect(judge(RULESET(TABLE("inet", "f") BASE("inet", "f", "out", "output", "drop")
	    RULE("inet", "f", "out", 3, ESTABLISHED ", " ACCEPT))), FWCHECK_OK, NULL);
}

/* Before corral's redirect a sandbox's TCP goes anywhere, on any port. */
static void
test_a_prerouting_drop_of_some_port_hits_the_transparent_path(void **s)
{
	expect(judge(RULESET(TABLE("ip", "raw") BASE("ip", "raw", "pre", "prerouting", "accept")
	    RULE("ip", "raw", "pre", 3, M("==", PAYLOAD("tcp", "dport"), "25") ", " DROP))),
	    FWCHECK_AT_RISK, "may drop", "transparent path", NULL);
}

static void
test_a_nat_statement_ends_the_chain_as_accept(void **s)
{
	expect(judge(RULESET(TABLE("ip", "nat") BASE("ip", "nat", "pre", "prerouting", "drop")
	    RULE("ip", "nat", "pre", 3, "{\"redirect\": {\"port\": 15001}}"))), FWCHECK_OK, NULL);
}

static void
test_an_iptables_nft_reject_target_is_at_risk(void **s)
{
	expect(judge(RULESET(TABLE("ip", "filter") BASE("ip", "filter", "INPUT", "input", "accept")
	    RULE("ip", "filter", "INPUT", 3, COUNTER ", {\"xt\": {\"type\": \"target\", "
	        "\"name\": \"REJECT\"}}"))), FWCHECK_AT_RISK, "chain INPUT", NULL);
}

/* firewalld's shape (1.3, default zone public): accepted states, zone
 * dispatch by goto, and a final reject in filter_INPUT. */
static void
test_a_firewalld_like_ruleset_is_at_risk_at_its_final_reject(void **s)
{
	expect(judge(RULESET(TABLE("inet", "firewalld")
	    BASE("inet", "firewalld", "filter_INPUT", "input", "accept")
	    CHAIN("inet", "firewalld", "filter_INPUT_ZONES")
	    CHAIN("inet", "firewalld", "filter_IN_public")
	    CHAIN("inet", "firewalld", "filter_IN_public_allow")
	    RULE("inet", "firewalld", "filter_INPUT", 10, ESTABLISHED ", " ACCEPT)
	    RULE("inet", "firewalld", "filter_INPUT", 11,
	        M("in", "{\"ct\": {\"key\": \"status\"}}", "\"dnat\"") ", " ACCEPT)
	    RULE("inet", "firewalld", "filter_INPUT", 12, M("==", META("iifname"), "\"lo\"") ", " ACCEPT)
	    RULE("inet", "firewalld", "filter_INPUT", 13, M("in", CT_STATE, "\"invalid\"") ", " DROP)
	    RULE("inet", "firewalld", "filter_INPUT", 14, JUMP("filter_INPUT_ZONES"))
	    RULE("inet", "firewalld", "filter_INPUT", 15, REJECT)
	    RULE("inet", "firewalld", "filter_INPUT_ZONES", 20,
	        M("==", META("iifname"), "\"eth0\"") ", " GOTO("filter_IN_public"))
	    RULE("inet", "firewalld", "filter_INPUT_ZONES", 21, GOTO("filter_IN_public"))
	    RULE("inet", "firewalld", "filter_IN_public", 30, JUMP("filter_IN_public_allow"))
	    RULE("inet", "firewalld", "filter_IN_public", 31,
	        M("==", META("l4proto"), "{\"set\": [\"icmp\", \"ipv6-icmp\"]}") ", " ACCEPT)
	    RULE("inet", "firewalld", "filter_IN_public_allow", 40,
	        M("==", PAYLOAD("tcp", "dport"), "22") ", "
	        M("in", CT_STATE, "{\"set\": [\"new\", \"untracked\"]}") ", " ACCEPT))),
	    FWCHECK_AT_RISK, "table inet firewalld, chain filter_INPUT: rule (handle 15) drops",
	    NULL);
}

/* Docker's shape: a forward chain with policy drop (not on the path), and
 * nat prerouting jumping to DOCKER, whose dnat rules end the chain. */
static void
test_a_docker_like_ruleset_is_ok(void **s)
{
	expect(judge(RULESET(TABLE("ip", "filter") TABLE("ip", "nat")
	    BASE("ip", "filter", "FORWARD", "forward", "drop")
	    BASE("ip", "nat", "PREROUTING", "prerouting", "accept")
	    CHAIN("ip", "nat", "DOCKER")
	    RULE("ip", "filter", "FORWARD", 2, COUNTER ", " DROP)
	    RULE("ip", "nat", "PREROUTING", 3,
	        "{\"match\": {\"op\": \"==\", \"left\": {\"fib\": {\"result\": \"type\", "
	        "\"flags\": [\"daddr\"]}}, \"right\": \"local\"}}, " COUNTER ", " JUMP("DOCKER"))
	    RULE("ip", "nat", "DOCKER", 4, M("==", META("iifname"), "\"docker0\"") ", "
	        "{\"return\": null}")
	    RULE("ip", "nat", "DOCKER", 5, M("!=", META("iifname"), "\"docker0\"") ", "
	        M("==", PAYLOAD("tcp", "dport"), "8080") ", "
	        "{\"dnat\": {\"addr\": \"172.17.0.2\", \"port\": 80}}"))), FWCHECK_OK, NULL);
}

static void
test_malformed_json_is_unknown(void **s)
{
	expect(judge("{\"nftables\": [{\"table\": {\"family\": \"inet\""), FWCHECK_UNKNOWN,
	    "does not read", NULL);
	expect(judge("[1, 2]"), FWCHECK_UNKNOWN, NULL);
	expect(judge("{\"nftables\": [] } trailing"), FWCHECK_UNKNOWN, "does not read", NULL);
}

static void
test_nesting_too_deep_is_unknown(void **s)
{
	char deep[256];

	memset(deep, '[', sizeof(deep) - 1);
	deep[sizeof(deep) - 1] = '\0';
	expect(judge(deep), FWCHECK_UNKNOWN, "nested too deep", NULL);
}

static void
test_verdict_names(void **s)
{
	assert_string_equal(fwcheck_verdict_name(FWCHECK_OK), "ok");
	assert_string_equal(fwcheck_verdict_name(FWCHECK_AT_RISK), "at risk");
	assert_string_equal(fwcheck_verdict_name(FWCHECK_UNKNOWN), "unknown");
}

/* Runs nft command text CMD in this network namespace. */
static void
nft_cmd(const char *cmd)
{
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	int rc;

	assert_non_null(nft);
	assert_int_equal(nft_ctx_buffer_error(nft), 0);
	rc = nft_run_cmd_from_buffer(nft, cmd);
	if (rc != 0)
		print_error("nft: %s\n", nft_ctx_get_error_buffer(nft));
	nft_ctx_free(nft);
	assert_int_equal(rc, 0);
}

/* The real ruleset of a fresh namespace: corral's own table alone is ok;
 * another table's input chain with policy drop puts the fence at risk. */
static void
test_real_namespace_with_drop_input_is_at_risk(void **s)
{
	struct fwcheck_target t = target();
	struct fwcheck_result r;

	assert_int_equal(unshare(CLONE_NEWNET), 0);
	nft_cmd("table inet " OWN_TABLE " { chain input { type filter hook input "
	    "priority filter; policy accept; iifgroup 4242 counter reject; }\n}\n");
	fwcheck_run(&t, &r);
	expect(r, FWCHECK_OK, NULL);
	nft_cmd("table inet hostfw { chain input { type filter hook input priority 10; "
	    "policy drop; ct state established,related accept; iif lo accept; }\n}\n");
	fwcheck_run(&t, &r);
	expect(r, FWCHECK_AT_RISK, "table inet hostfw, chain input", "policy drop", NULL);
	nft_cmd("add rule inet hostfw input iifname \"crs*\" accept");
	fwcheck_run(&t, &r);
	expect(r, FWCHECK_OK, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_ruleset_is_ok),
		cmocka_unit_test(test_own_table_is_not_judged),
		cmocka_unit_test(test_input_policy_drop_is_at_risk_naming_table_and_chain),
		cmocka_unit_test(test_a_rule_accepting_the_pool_makes_policy_drop_ok),
		cmocka_unit_test(test_a_wildcard_of_the_sandbox_interfaces_makes_policy_drop_ok),
		cmocka_unit_test(test_the_sandbox_interface_group_makes_policy_drop_ok),
		cmocka_unit_test(test_accepting_some_ports_names_the_first_missing_one),
		cmocka_unit_test(test_an_unconditional_reject_is_at_risk),
		cmocka_unit_test(test_drops_of_other_traffic_are_ok),
		cmocka_unit_test(test_a_drop_of_a_wider_prefix_is_at_risk),
		cmocka_unit_test(test_a_drop_under_an_unknown_match_may_drop),
		cmocka_unit_test(test_negated_match_is_understood),
		cmocka_unit_test(test_ip6_and_netdev_tables_are_not_on_the_path),
		cmocka_unit_test(test_a_drop_in_a_jumped_chain_is_at_risk),
		cmocka_unit_test(test_an_accept_in_a_jumped_chain_counts),
		cmocka_unit_test(test_a_goto_falling_off_its_chain_meets_the_drop_policy),
		cmocka_unit_test(test_a_return_ends_the_jumped_chain),
		cmocka_unit_test(test_a_partial_return_still_reaches_the_drop),
		cmocka_unit_test(test_a_jump_to_a_missing_chain_is_unknown),
		cmocka_unit_test(test_a_jump_loop_is_unknown),
		cmocka_unit_test(test_a_queue_is_unknown),
		cmocka_unit_test(test_output_drop_policy_needs_established_accepted),
		cmocka_unit_test(test_a_prerouting_drop_of_some_port_hits_the_transparent_path),
		cmocka_unit_test(test_a_nat_statement_ends_the_chain_as_accept),
		cmocka_unit_test(test_an_iptables_nft_reject_target_is_at_risk),
		cmocka_unit_test(test_a_firewalld_like_ruleset_is_at_risk_at_its_final_reject),
		cmocka_unit_test(test_a_docker_like_ruleset_is_ok),
		cmocka_unit_test(test_malformed_json_is_unknown),
		cmocka_unit_test(test_nesting_too_deep_is_unknown),
		cmocka_unit_test(test_verdict_names),
		/* Last: it needs root, and moves the program into a new namespace. */
		cmocka_unit_test(test_real_namespace_with_drop_input_is_at_risk),
	};
	size_t n = sizeof(tests) / sizeof(tests[0]);

	/* cmocka 1.1 prints a skipped test as a failure to automake's TAP
	 * driver: without root the last test is left out of the plan. */
	if (geteuid() != 0)
		n--;
	return _cmocka_run_group_tests("tests", tests, n, NULL, NULL);
}
