/* Unit tests for broker/cli/report (corral report): sums over a fixed
 * ledger text: connections and bytes by host matched by id, refusals by
 * reason and host, binaries, host mode, the caps, hostile text. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "broker/cli/report.h"

#define TEST_LINE_BYTES 2048

/* One ledger record with the fields the report reads, in the ledger's order. */
static void
add(struct report *r, const char *event, const char *sandbox, long long id, const char *binary,
    const char *host, int port, const char *decision, const char *reason, long long up,
    long long down)
{
	char line[TEST_LINE_BYTES], sb[128], bin[256], h[256], dec[32], why[128], ids[32],
	    ports[16], ups[32], downs[32];

#define Q(buf, s) ((s) != NULL ? (snprintf(buf, sizeof(buf), "\"%s\"", (s)), buf) : "null")
#define N(buf, v) ((v) >= 0 ? (snprintf(buf, sizeof(buf), "%lld", (long long)(v)), buf) : "null")
	snprintf(line, sizeof(line), "{\"ts\":\"2026-11-29T17:58:31.123456Z\",\"event\":\"%s\","
	    "\"id\":%s,\"sandbox\":%s,\"session_id\":null,\"agent\":null,\"run\":null,\"pid\":null,"
	    "\"binary\":%s,\"mode\":\"connect\",\"host\":%s,\"port\":%s,\"ip\":null,\"decision\":%s,"
	    "\"policy\":null,\"reason\":%s,\"bytes_up\":%s,\"bytes_down\":%s,\"duration_ms\":null}",
	    event, N(ids, id), Q(sb, sandbox), Q(bin, binary), Q(h, host), N(ports, port),
	    Q(dec, decision), Q(why, reason), N(ups, up), N(downs, down));
#undef Q
#undef N
	report_add(r, line, strlen(line));
}

/* The report as JSON, or as text; free() it. */
static char *
written(const struct report *r, bool json)
{
	struct report_window w = { 0, 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	assert_int_equal(json ? report_write_json(r, &w, out) : report_write_text(r, &w, out), 0);
	fclose(out);
	return text;
}

static void
assert_has(const char *text, const char *part)
{
	if (strstr(text, part) == NULL)
		fail_msg("expected %s\nin %s", part, text);
}

static void
assert_lacks(const char *text, const char *part)
{
	if (strstr(text, part) != NULL)
		fail_msg("did not expect %s\nin %s", part, text);
}

/* The workload of tests/e2e/logs.sh: three fetches of a known size and
 * two refusals. */
static void
add_workload(struct report *r)
{
	for (int i = 1; i <= 3; i++)
		add(r, "connect", "web", i, "/usr/bin/curl", "example.com", 443, "allow", NULL, -1, -1);
	add(r, "connect", "web", -1, "/usr/bin/curl", "evil.com", 443, "deny", "host_not_allowed",
	    -1, -1);
	add(r, "dns", "web", -1, NULL, "secret.evil.com", -1, "deny", "dns_name_not_allowed", -1, -1);
	/* Closes come in another order than their connects. */
	add(r, "close", "web", 2, "/usr/bin/curl", "example.com", 443, NULL, NULL, 100, 1048576);
	add(r, "close", "web", 3, "/usr/bin/curl", "example.com", 443, NULL, NULL, 101, 1048577);
	add(r, "close", "web", 1, "/usr/bin/curl", "example.com", 443, NULL, NULL, 99, 1048575);
}

static void
test_connections_and_bytes_are_summed_by_host(void **state)
{
	struct report *r = report_new();
	char *json;

	add_workload(r);
	json = written(r, true);
	assert_has(json, "\"sandbox\":\"web\",\"records\":8,\"connections\":3,\"closes\":3,"
	    "\"closes_unmatched\":0");
	assert_has(json, "\"hosts\":[{\"host\":\"example.com\",\"port\":443,\"connections\":3,"
	    "\"closes\":3,\"bytes_up\":300,\"bytes_down\":3145728}]");
	free(json);
	report_free(r);
}

static void
test_refusals_are_counted_by_reason_and_by_host(void **state)
{
	struct report *r = report_new();
	char *json;

	add_workload(r);
	add(r, "connect", "web", -1, NULL, "evil.com", 443, "deny", "host_not_allowed", -1, -1);
	json = written(r, true);
	assert_has(json, "\"refusals\":3,\"refusals_by_reason\":[{\"reason\":\"host_not_allowed\","
	    "\"count\":2},{\"reason\":\"dns_name_not_allowed\",\"count\":1}]");
	assert_has(json, "\"refusals_by_host\":[{\"host\":\"evil.com\",\"port\":443,\"count\":2},"
	    "{\"host\":\"secret.evil.com\",\"port\":null,\"count\":1}]");
	free(json);
	report_free(r);
}

static void
test_binaries_are_counted_with_the_unidentified(void **state)
{
	struct report *r = report_new();
	char *json;

	add_workload(r);
	add(r, "connect", "web", 9, NULL, "example.com", 443, "allow", NULL, -1, -1);
	add(r, "unix", "web", -1, "/usr/bin/ssh", "/run/agent.sock", -1, "deny",
	    "unix_socket_not_allowed", -1, -1);
	json = written(r, true);
	assert_has(json, "\"binaries\":[{\"binary\":\"/usr/bin/curl\",\"count\":4},"
	    "{\"binary\":\"/usr/bin/ssh\",\"count\":1}],\"unidentified\":1");
	free(json);
	report_free(r);
}

/* A close whose connect came before the window: its bytes, not a connection. */
static void
test_close_without_its_connect_counts_bytes_only(void **state)
{
	struct report *r = report_new();
	char *json, *text;

	add(r, "close", "web", 77, NULL, "pypi.org", 443, NULL, NULL, 5, 6);
	json = written(r, true);
	assert_has(json, "\"connections\":0,\"closes\":1,\"closes_unmatched\":1");
	assert_has(json, "{\"host\":\"pypi.org\",\"port\":443,\"connections\":0,\"closes\":1,"
	    "\"bytes_up\":5,\"bytes_down\":6}");
	text = written(r, false);
	assert_has(text, "1 close records whose connect came before the window");
	free(text);
	free(json);
	report_free(r);
}

/* Ids are unique per connection across sandboxes: a close finds its own. */
static void
test_closes_go_to_their_own_sandbox(void **state)
{
	struct report *r = report_new();
	char *json;

	add(r, "connect", "a", 1, NULL, "github.com", 443, "allow", NULL, -1, -1);
	add(r, "connect", "b", 2, NULL, "github.com", 443, "allow", NULL, -1, -1);
	add(r, "close", "b", 2, NULL, "github.com", 443, NULL, NULL, 20, 200);
	add(r, "close", "a", 1, NULL, "github.com", 443, NULL, NULL, 10, 100);
	json = written(r, true);
	assert_has(json, "\"sandbox\":\"a\",\"records\":2,\"connections\":1,\"closes\":1,"
	    "\"closes_unmatched\":0,\"hosts\":[{\"host\":\"github.com\",\"port\":443,"
	    "\"connections\":1,\"closes\":1,\"bytes_up\":10,\"bytes_down\":100}]");
	assert_has(json, "\"bytes_up\":20,\"bytes_down\":200");
	free(json);
	report_free(r);
}

static void
test_host_mode_is_its_own_entry(void **state)
{
	struct report *r = report_new();
	char *json, *text;

	add(r, "connect", NULL, 1, NULL, "pypi.org", 443, "allow", NULL, -1, -1);
	json = written(r, true);
	assert_has(json, "\"sandbox\":null,\"records\":1");
	text = written(r, false);
	assert_has(text, "host mode: 1 record\n");
	assert_lacks(text, "null");
	free(text);
	free(json);
	report_free(r);
}

static void
test_hosts_past_the_cap_are_counted_as_other(void **state)
{
	struct report *r = report_new();
	char host[64], *json, *text;

	for (int i = 0; i < REPORT_HOSTS_MAX + 10; i++) {
		snprintf(host, sizeof(host), "h%d.example.com", i);
		add(r, "connect", "web", i + 1, NULL, host, 443, "allow", NULL, -1, -1);
		add(r, "close", "web", i + 1, NULL, host, 443, NULL, NULL, 1, 2);
	}
	json = written(r, true);
	assert_has(json, "{\"other\":true,\"host\":null,\"port\":null,\"connections\":10,"
	    "\"closes\":10,\"bytes_up\":10,\"bytes_down\":20}");
	assert_has(json, "\"capped\":[\"hosts\"]");
	text = written(r, false);
	assert_has(text, "(only 256 distinct hosts are kept: the rest are counted as (other))");
	free(text);
	free(json);
	report_free(r);
}

/* Many connections open at once, closed in another order: each close
 * finds its connect (the open table's deletions keep every chain whole). */
static void
test_many_open_connections_all_find_their_close(void **state)
{
	struct report *r = report_new();
	const int n = 20000;
	char *json;

	for (int i = 0; i < n; i++)
		add(r, "connect", "web", 1000003LL * i + 17, NULL, "example.com", 443, "allow", NULL,
		    -1, -1);
	for (int i = 0; i < n; i++) {
		int k = (i * 7919) % n;         /* a permutation: 7919 is prime to n */

		add(r, "close", "web", 1000003LL * k + 17, NULL, "example.com", 443, NULL, NULL, 1, 1);
	}
	json = written(r, true);
	assert_has(json, "\"connections\":20000,\"closes\":20000,\"closes_unmatched\":0");
	free(json);
	report_free(r);
}

static void
test_unreadable_records_are_counted(void **state)
{
	struct report *r = report_new();
	char *json;

	report_add(r, "not json", 8);
	report_add(r, "{\"ts\":\"x\",\"event\":1}", 21);
	add_workload(r);
	json = written(r, true);
	assert_has(json, "\"records\":10,\"unreadable\":2");
	free(json);
	report_free(r);
}

/* What others chose is shown, never obeyed: escapes stay visible in the
 * text and stay escaped in the JSON. */
static void
test_hostile_names_are_made_safe(void **state)
{
	static const char rec[] = "{\"ts\":\"2026-11-29T17:58:31.123456Z\",\"event\":\"connect\","
	    "\"id\":1,\"sandbox\":\"web\",\"binary\":\"/tmp/x\\u001b]0;pwned\\u0007\","
	    "\"host\":\"a\\nb.com\",\"port\":80,\"decision\":\"allow\"}";
	struct report *r = report_new();
	char *json, *text;

	report_add(r, rec, strlen(rec));
	text = written(r, false);
	assert_has(text, "/tmp/x\\x1b]0;pwned\\x07");
	assert_has(text, "a\\x0ab.com:80");
	assert_lacks(text, "\x1b");
	json = written(r, true);
	assert_has(json, "\"binary\":\"/tmp/x\\u001b]0;pwned\\u0007\"");
	assert_has(json, "\"host\":\"a\\nb.com\"");
	free(json);
	free(text);
	report_free(r);
}

static void
test_text_lists_hosts_refusals_and_binaries(void **state)
{
	struct report *r = report_new();
	char *text;

	add_workload(r);
	text = written(r, false);
	assert_has(text, "sandbox web: 8 records\n");
	assert_has(text, "  hosts reached: 1, in 3 connections\n");
	assert_has(text, "              3            300        3145728  example.com:443\n");
	assert_has(text, "  refusals: 2\n");
	assert_has(text, "          1  host_not_allowed\n");
	assert_has(text, "          1  evil.com:443\n");
	assert_has(text, "          1  secret.evil.com\n");
	assert_has(text, "          4  /usr/bin/curl\n");     /* the refused connect too */
	free(text);
	report_free(r);
}

int
main(void)
{
#define T(f) cmocka_unit_test(f)
	const struct CMUnitTest tests[] = {
		T(test_connections_and_bytes_are_summed_by_host),
		T(test_refusals_are_counted_by_reason_and_by_host),
		T(test_binaries_are_counted_with_the_unidentified),
		T(test_close_without_its_connect_counts_bytes_only),
		T(test_closes_go_to_their_own_sandbox),
		T(test_host_mode_is_its_own_entry),
		T(test_hosts_past_the_cap_are_counted_as_other),
		T(test_many_open_connections_all_find_their_close),
		T(test_unreadable_records_are_counted),
		T(test_hostile_names_are_made_safe),
		T(test_text_lists_hosts_refusals_and_binaries),
	};
#undef T

	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
