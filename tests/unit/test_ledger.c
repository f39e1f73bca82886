/* Unit tests for egress-proxy/ledger: the line format byte for byte, nulls,
 * escaping and cuts of hostile strings, and the writer thread: counts,
 * concurrency, rotation, a full queue and a failing disk. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/timeutil.h"
#include "egress-proxy/ledger.h"

#define TEST_TS_US INT64_C(1764439111123456)    /* 2025-11-29T17:58:31.123456Z */
#define TEST_RECORDS 10000
#define TEST_THREAD_RECORDS 5000
#define TEST_LONG_BYTES 10000                   /* past every string cap */
#define TEST_WAIT_MAX_MS 10000                  /* for the writer to catch up */
#define TEST_PIPE_READ_BYTES 65536
#define TEST_DIR_MAX_BYTES 64
#define TEST_PATH_MAX_BYTES 128

/* A scratch directory and the ledger path in it, per test. */
struct test_dir {
	char dir[TEST_DIR_MAX_BYTES];
	char path[TEST_PATH_MAX_BYTES];
	char old[TEST_PATH_MAX_BYTES];
};

static int
setup_dir(void **state)
{
	struct test_dir *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return -1;
	snprintf(t->dir, sizeof(t->dir), "/tmp/test_ledger.XXXXXX");
	if (mkdtemp(t->dir) == NULL) {
		free(t);
		return -1;
	}
	snprintf(t->path, sizeof(t->path), "%s/egress.jsonl", t->dir);
	snprintf(t->old, sizeof(t->old), "%s/egress.jsonl.1", t->dir);
	*state = t;
	return 0;
}

static int
teardown_dir(void **state)
{
	struct test_dir *t = *state;

	unlink(t->path);
	unlink(t->old);
	rmdir(t->dir);
	free(t);
	return 0;
}

/* A tiny JSON checker, enough to tell a well-formed ledger line. */
static const char *json_check_value(const char *p);

static const char *
json_check_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (strchr("0123456789abcdefABCDEF", p[i]) == NULL || p[i] == '\0')
						return NULL;
				p += 4;
			} else if (*p == '\0' || strchr("\"\\/bfnrt", *p) == NULL) {
				return NULL;
			}
		}
		p++;
	}
	return p + 1;
}

static const char *
json_check_object(const char *p)
{
	if (*p++ != '{')
		return NULL;
	if (*p == '}')
		return p + 1;
	for (;;) {
		p = json_check_string(p);
		if (p == NULL || *p++ != ':')
			return NULL;
		p = json_check_value(p);
		if (p == NULL)
			return NULL;
		if (*p == '}')
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *
json_check_value(const char *p)
{
	if (*p == '"')
		return json_check_string(p);
	if (*p == '{')
		return json_check_object(p);
	if (strncmp(p, "null", 4) == 0)
		return p + 4;
	if (*p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return NULL;
	while (*p >= '0' && *p <= '9')
		p++;
	return p;
}

/* True when LINE is one JSON object, its newline, and nothing else. */
static bool
line_is_json(const char *line)
{
	const char *end = json_check_object(line);

	return end != NULL && strcmp(end, "\n") == 0;
}

static void
fill_deny(struct ledger_record *rec)
{
	ledger_record_init(rec, LEDGER_EVENT_CONNECT);
	rec->ts_us = TEST_TS_US;
	rec->id = 42;
	rec->sandbox = "web-1";
	rec->session_id = "s-9f2";
	rec->agent = "claude";
	rec->run = "run-7";
	rec->pid = 4711;
	rec->binary = "/usr/bin/curl";
	rec->mode = LEDGER_MODE_CONNECT;
	rec->host = "evil.example";
	rec->port = 443;
	rec->ip = NULL;
	rec->decision = LEDGER_DECISION_DENY;
	rec->policy = NULL;
	rec->reason = "no_matching_entry";
}

static int
format(const struct ledger_record *rec, char *out)
{
	return ledger_format(rec, out, LEDGER_RECORD_MAX_BYTES);
}

static void
test_format_deny_connect_record_is_byte_exact(void **state)
{
	struct ledger_record rec;
	char out[LEDGER_RECORD_MAX_BYTES];
	const char *expect = "{\"ts\":\"2025-11-29T17:58:31.123456Z\",\"event\":\"connect\","
	    "\"id\":42,\"sandbox\":\"web-1\",\"session_id\":\"s-9f2\",\"agent\":\"claude\","
	    "\"run\":\"run-7\",\"pid\":4711,\"binary\":\"/usr/bin/curl\",\"mode\":\"connect\","
	    "\"host\":\"evil.example\",\"port\":443,\"ip\":null,\"decision\":\"deny\","
	    "\"policy\":null,\"reason\":\"no_matching_entry\",\"bytes_up\":null,"
	    "\"bytes_down\":null,\"duration_ms\":null}\n";

	(void)state;
	fill_deny(&rec);
	assert_int_equal(format(&rec, out), (int)strlen(expect));
	assert_string_equal(out, expect);
}

static void
test_format_close_record_has_bytes_and_duration(void **state)
{
	struct ledger_record rec;
	char out[LEDGER_RECORD_MAX_BYTES];
	const char *expect = "{\"ts\":\"2025-11-29T17:58:31.123456Z\",\"event\":\"close\","
	    "\"id\":7,\"sandbox\":\"web-1\",\"session_id\":null,\"agent\":null,\"run\":null,"
	    "\"pid\":12,\"binary\":null,\"mode\":\"sni\",\"host\":\"api.github.com\","
	    "\"port\":443,\"ip\":\"140.82.121.6\",\"decision\":\"allow\","
	    "\"policy\":\"api.github.com:443\",\"reason\":null,\"bytes_up\":1234,"
	    "\"bytes_down\":9876543210,\"duration_ms\":0}\n";

	(void)state;
	ledger_record_init(&rec, LEDGER_EVENT_CLOSE);
	rec.ts_us = TEST_TS_US;
	rec.id = 7;
	rec.sandbox = "web-1";
	rec.pid = 12;
	rec.mode = LEDGER_MODE_SNI;
	rec.host = "api.github.com";
	rec.port = 443;
	rec.ip = "140.82.121.6";
	rec.decision = LEDGER_DECISION_ALLOW;
	rec.policy = "api.github.com:443";
	rec.bytes_up = 1234;
	rec.bytes_down = INT64_C(9876543210);
	rec.duration_ms = 0;
	format(&rec, out);
	assert_string_equal(out, expect);
}

static void
test_format_absent_fields_are_null(void **state)
{
	struct ledger_record rec;
	char out[LEDGER_RECORD_MAX_BYTES];
	const char *expect = "{\"ts\":\"2025-11-29T17:58:31.123456Z\",\"event\":\"bypass\","
	    "\"id\":null,\"sandbox\":null,\"session_id\":null,\"agent\":null,\"run\":null,"
	    "\"pid\":null,\"binary\":null,\"mode\":null,\"host\":null,\"port\":null,"
	    "\"ip\":null,\"decision\":null,\"policy\":null,\"reason\":null,\"bytes_up\":null,"
	    "\"bytes_down\":null,\"duration_ms\":null}\n";

	(void)state;
	ledger_record_init(&rec, LEDGER_EVENT_BYPASS);
	rec.ts_us = TEST_TS_US;
	format(&rec, out);
	assert_string_equal(out, expect);
}

/* corral-ledger(5)'s unix record: the socket's path as host, no mode,
 * port or ip. */
static void
test_format_unix_refusal(void **state)
{
	struct ledger_record rec;
	char out[LEDGER_RECORD_MAX_BYTES];
	const char *expect = "{\"ts\":\"2025-11-29T17:58:31.123456Z\",\"event\":\"unix\","
	    "\"id\":null,\"sandbox\":\"sb\",\"session_id\":null,\"agent\":null,\"run\":null,"
	    "\"pid\":4242,\"binary\":\"/usr/bin/ssh\",\"mode\":null,\"host\":\"/srv/w/docker.sock\","
	    "\"port\":null,\"ip\":null,\"decision\":\"deny\",\"policy\":null,"
	    "\"reason\":\"unix_socket_not_allowed\",\"bytes_up\":null,\"bytes_down\":null,"
	    "\"duration_ms\":null}\n";

	(void)state;
	ledger_record_init(&rec, LEDGER_EVENT_UNIX);
	rec.ts_us = TEST_TS_US;
	rec.sandbox = "sb";
	rec.pid = 4242;
	rec.binary = "/usr/bin/ssh";
	rec.host = "/srv/w/docker.sock";
	rec.decision = LEDGER_DECISION_DENY;
	rec.reason = "unix_socket_not_allowed";
	format(&rec, out);
	assert_string_equal(out, expect);
}

static void
test_format_request_record_has_its_four_fields(void **state)
{
	struct ledger_record rec;
	char out[LEDGER_RECORD_MAX_BYTES];
	const char *expect = "{\"ts\":\"2025-11-29T17:58:31.123456Z\",\"event\":\"request\","
	    "\"id\":9,\"sandbox\":\"sb\",\"session_id\":null,\"agent\":null,\"run\":null,"
	    "\"pid\":null,\"binary\":null,\"mode\":\"connect\",\"host\":\"api.github.com\","
	    "\"port\":443,\"ip\":null,\"decision\":\"deny\",\"policy\":\"api\","
	    "\"reason\":\"path_not_allowed\",\"bytes_up\":null,\"bytes_down\":null,"
	    "\"duration_ms\":null,\"method\":\"DELETE\",\"path\":\"/repos/x?\\\"q\",\"status\":403,"
	    "\"secrets\":null}\n";

	(void)state;
	ledger_record_init(&rec, LEDGER_EVENT_REQUEST);
	rec.ts_us = TEST_TS_US;
	rec.id = 9;
	rec.sandbox = "sb";
	rec.mode = LEDGER_MODE_CONNECT;
	rec.host = "api.github.com";
	rec.port = 443;
	rec.decision = LEDGER_DECISION_DENY;
	rec.policy = "api";
	rec.reason = "path_not_allowed";
	rec.method = "DELETE";
	rec.path = "/repos/x?\"q";
	rec.status = 403;
	format(&rec, out);
	assert_string_equal(out, expect);
	/* Another event never writes them, whatever they hold. */
	rec.event = LEDGER_EVENT_CONNECT;
	format(&rec, out);
	assert_null(strstr(out, "\"method\""));
}

static void
test_format_negative_numbers_and_dns_mode(void **state)
{
	struct ledger_record rec;
	char out[LEDGER_RECORD_MAX_BYTES];

	(void)state;
	ledger_record_init(&rec, LEDGER_EVENT_DNS);
	rec.ts_us = TEST_TS_US;
	rec.mode = LEDGER_MODE_DNS;
	rec.pid = -1;
	rec.bytes_up = INT64_MIN + 1;
	format(&rec, out);
	assert_non_null(strstr(out, "\"event\":\"dns\","));
	assert_non_null(strstr(out, "\"mode\":\"dns\","));
	assert_non_null(strstr(out, "\"pid\":-1,"));
	assert_non_null(strstr(out, "\"bytes_up\":-9223372036854775807,"));
	assert_true(line_is_json(out));
}

static void
test_format_zero_ts_means_now(void **state)
{
	struct ledger_record rec;
	char out[LEDGER_RECORD_MAX_BYTES];
	char year[16];
	time_t now = time(NULL);
	struct tm tm;

	(void)state;
	ledger_record_init(&rec, LEDGER_EVENT_BYPASS);
	format(&rec, out);
	gmtime_r(&now, &tm);
	snprintf(year, sizeof(year), "%04d-", tm.tm_year + 1900);
	assert_memory_equal(out + strlen("{\"ts\":\""), year, strlen(year));
	assert_int_not_equal(strncmp(out, "{\"ts\":\"1970", 11), 0);
}

/* The ts field of a record stamped US, as the line has it. */
static void
format_ts(int64_t us, char *ts, size_t size)
{
	struct ledger_record rec;
	char out[LEDGER_RECORD_MAX_BYTES];
	const char *start, *end;

	ledger_record_init(&rec, LEDGER_EVENT_BYPASS);
	rec.ts_us = us;
	assert_true(format(&rec, out) > 0);
	start = out + strlen("{\"ts\":\"");
	end = strchr(start, '"');
	assert_non_null(end);
	assert_true((size_t)(end - start) < size);
	memcpy(ts, start, (size_t)(end - start));
	ts[end - start] = '\0';
}

/* The second is worked out once and reused: stamps in the same second, the
 * next, the one before, with short fractions and before 1970 all read as
 * time_format_rfc3339_us() writes them. */
static void
test_format_ts_reuses_the_second_and_stays_exact(void **state)
{
	static const int64_t stamps[] = {
		TEST_TS_US, TEST_TS_US + 1, TEST_TS_US - 123456, TEST_TS_US + 876543,
		TEST_TS_US + 876544, TEST_TS_US - 123457, TEST_TS_US + 86400000000, 1, 7,
		-1, -1000001, INT64_C(253402300799999999), INT64_C(253402300800000000),
	};
	char got[RFC3339_US_BYTES + 8], want[RFC3339_US_BYTES];

	(void)state;
	for (size_t i = 0; i < sizeof(stamps) / sizeof(stamps[0]); i++) {
		format_ts(stamps[i], got, sizeof(got));
		time_format_rfc3339_us(stamps[i], want);
		assert_string_equal(got, want);
	}
	format_ts(TEST_TS_US - 123456 + 999999, got, sizeof(got));
	assert_string_equal(got, "2025-11-29T17:58:31.999999Z");
	format_ts(TEST_TS_US - 123456 + 5, got, sizeof(got));
	assert_string_equal(got, "2025-11-29T17:58:31.000005Z");
}

static void
test_format_escapes_hostile_host(void **state)
{
	struct ledger_record rec;
	char out[LEDGER_RECORD_MAX_BYTES];

	(void)state;
	fill_deny(&rec);
	rec.host = "a\"b\\c\nd\re\x01" "f\x7f" "g\xff" "h\xc3(i\xe2\x80\xa8j\xed\xa0\x80k";
	format(&rec, out);
	assert_non_null(strstr(out, "\"host\":\"a\\\"b\\\\c\\nd\\re\\u0001f\x7f" "g\\ufffdh"
	    "\\ufffd(i\\u2028j\\ufffd\\ufffd\\ufffdk\","));
	assert_ptr_equal(strchr(out, '\n'), out + strlen(out) - 1);
	assert_true(line_is_json(out));
}

static void
test_format_escapes_every_string_field(void **state)
{
	struct ledger_record rec;
	char out[LEDGER_RECORD_MAX_BYTES];
	const char *evil = "x\"}\n{\"forged\":1";

	(void)state;
	fill_deny(&rec);
	rec.sandbox = rec.session_id = rec.agent = rec.run = evil;
	rec.binary = rec.ip = rec.policy = rec.reason = evil;
	format(&rec, out);
	assert_null(strstr(out, "\"}\n"));
	assert_null(strstr(out, "{\"forged\""));
	assert_true(line_is_json(out));
}

static void
test_format_port_is_a_number(void **state)
{
	struct ledger_record rec;
	char out[LEDGER_RECORD_MAX_BYTES];

	(void)state;
	fill_deny(&rec);
	rec.port = 8443;
	format(&rec, out);
	assert_non_null(strstr(out, ",\"port\":8443,"));
	assert_null(strstr(out, "\"port\":\""));
}

/* The length of the string value of field KEY (quoted, with its colon) in
 * LINE, from after its opening quote up to its closing quote. */
static size_t
field_len(const char *line, const char *key)
{
	const char *start = strstr(line, key);
	const char *end;

	assert_non_null(start);
	start += strlen(key) + 1;
	end = start;
	while (*end != '"') {
		if (*end == '\\')
			end++;
		end++;
	}
	return (size_t)(end - start);
}

static void
test_format_cuts_overlong_plain_host_at_cap(void **state)
{
	struct ledger_record rec;
	char out[LEDGER_RECORD_MAX_BYTES];
	char *host = malloc(TEST_LONG_BYTES + 1);

	(void)state;
	assert_non_null(host);
	memset(host, 'a', TEST_LONG_BYTES);
	host[TEST_LONG_BYTES] = '\0';
	fill_deny(&rec);
	rec.host = host;
	assert_true(format(&rec, out) > 0);
	assert_int_equal(field_len(out, "\"host\":"), LEDGER_HOST_MAX_BYTES);
	assert_true(line_is_json(out));
	free(host);
}

/* A host of N 'a's and then "€" (e2 82 ac) over and over, TEST_LONG_BYTES long. */
static char *
host_a_then_euros(size_t n)
{
	char *host = malloc(TEST_LONG_BYTES + 1);

	assert_non_null(host);
	memset(host, 'a', n);
	for (size_t i = n; i + 3 <= TEST_LONG_BYTES; i += 3)
		memcpy(host + i, "\xe2\x82\xac", 3);
	host[n + (TEST_LONG_BYTES - n) / 3 * 3] = '\0';
	return host;
}

static void
test_format_cut_does_not_split_utf8(void **state)
{
	struct ledger_record rec;
	char out[LEDGER_RECORD_MAX_BYTES];
	/* 1019 + 3 fits the cap, 1019 + 6 does not: the cap falls inside the second "€" */
	size_t keep = LEDGER_HOST_MAX_BYTES - 5 + 3;
	char *host = host_a_then_euros(LEDGER_HOST_MAX_BYTES - 5);
	const char *value;

	(void)state;
	fill_deny(&rec);
	rec.host = host;
	format(&rec, out);
	assert_int_equal(field_len(out, "\"host\":"), keep);
	value = strstr(out, "\"host\":\"") + strlen("\"host\":\"");
	assert_memory_equal(value, host, keep);
	assert_null(strstr(out, "\\ufffd"));
	assert_true(line_is_json(out));
	free(host);
}

static void
test_format_cut_of_escaped_string_ends_on_a_character(void **state)
{
	struct ledger_record rec;
	char out[LEDGER_RECORD_MAX_BYTES];
	/* '\\"' (2 bytes) + 1018 'a' + "€" (3) = 1023 fits, another "€" does not */
	char *host = host_a_then_euros(LEDGER_HOST_MAX_BYTES - 5);

	(void)state;
	host[0] = '"';
	fill_deny(&rec);
	rec.host = host;
	format(&rec, out);
	assert_int_equal(field_len(out, "\"host\":"), LEDGER_HOST_MAX_BYTES - 1);
	assert_null(strstr(out, "\\ufffd"));
	assert_non_null(strstr(out, "a\xe2\x82\xac\",\"port\":"));
	assert_true(line_is_json(out));
	free(host);
}

static void
test_format_cut_never_splits_an_escape(void **state)
{
	struct ledger_record rec;
	char out[LEDGER_RECORD_MAX_BYTES];
	char *reason = malloc(TEST_LONG_BYTES + 1);
	size_t len;

	(void)state;
	assert_non_null(reason);
	memset(reason, '\x01', TEST_LONG_BYTES);       /* each one is "\u0001", 6 bytes */
	reason[TEST_LONG_BYTES] = '\0';
	fill_deny(&rec);
	rec.reason = reason;
	format(&rec, out);
	len = field_len(out, "\"reason\":");
	assert_int_equal(len, LEDGER_REASON_MAX_BYTES / 6 * 6);
	assert_true(line_is_json(out));
	free(reason);
}

static void
test_format_every_field_at_worst_fits_one_record(void **state)
{
	struct ledger_record rec;
	char out[LEDGER_RECORD_MAX_BYTES];
	char *evil = malloc(TEST_LONG_BYTES + 1);
	int len;

	(void)state;
	assert_non_null(evil);
	memset(evil, '\xff', TEST_LONG_BYTES);         /* each one is "\ufffd", 6 bytes */
	evil[TEST_LONG_BYTES] = '\0';
	fill_deny(&rec);
	rec.sandbox = rec.session_id = rec.agent = rec.run = evil;
	rec.binary = rec.host = rec.ip = rec.policy = rec.reason = evil;
	rec.pid = rec.port = rec.bytes_up = rec.bytes_down = rec.duration_ms = INT64_MAX;
	rec.id = UINT64_MAX;
	len = format(&rec, out);
	assert_true(len > 0 && len < LEDGER_RECORD_MAX_BYTES);
	assert_int_equal(field_len(out, "\"binary\":"), LEDGER_BINARY_MAX_BYTES / 6 * 6);
	assert_true(line_is_json(out));
	free(evil);
}

static void
test_format_too_small_buffer_fails(void **state)
{
	struct ledger_record rec;
	char out[64];

	(void)state;
	fill_deny(&rec);
	assert_int_equal(ledger_format(&rec, out, sizeof(out)), -1);
	assert_string_equal(out, "");
	assert_int_equal(ledger_format(&rec, out, 0), -1);
}

static void
test_next_id_is_unique_nonzero_and_exact_in_a_double(void **state)
{
	uint64_t a = ledger_next_id(), b = ledger_next_id();

	(void)state;
	assert_true(a != 0);
	assert_true(b > a);
	assert_true(b < (UINT64_C(1) << 53));
	/* counted up from the wall clock in microseconds */
	assert_true(a >= (uint64_t)TEST_TS_US);
}

/* The whole content of PATH, NUL-terminated; *LEN its length. */
static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *data;
	long size;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	rewind(f);
	data = malloc((size_t)size + 1);
	assert_non_null(data);
	assert_int_equal(fread(data, 1, (size_t)size, f), (size_t)size);
	data[size] = '\0';
	fclose(f);
	*len = (size_t)size;
	return data;
}

/* Checks that every line of PATH is whole JSON and that the ids in it are
 * exactly FIRST..FIRST+COUNT-1, each once (in any order). */
static void
check_file_ids(const char *path, uint64_t first, size_t count)
{
	size_t len, lines = 0;
	char *data = slurp(path, &len);
	unsigned char *seen = calloc(count, 1);
	char *line = data, *nl;

	assert_non_null(seen);
	assert_true(len == 0 || data[len - 1] == '\n');
	while ((nl = strchr(line, '\n')) != NULL) {
		char saved = nl[1];
		uint64_t id;

		nl[1] = '\0';
		assert_true(line_is_json(line));
		id = strtoull(strstr(line, "\"id\":") + strlen("\"id\":"), NULL, 10);
		assert_true(id >= first && id < first + count);
		assert_int_equal(seen[id - first], 0);
		seen[id - first] = 1;
		nl[1] = saved;
		line = nl + 1;
		lines++;
	}
	assert_int_equal(lines, count);
	free(seen);
	free(data);
}

static int
write_id(struct ledger *l, uint64_t id)
{
	struct ledger_record rec;

	fill_deny(&rec);
	rec.id = id;
	return ledger_write(l, &rec);
}

static struct ledger *
open_ok(const char *path)
{
	char *error = NULL;
	struct ledger *l = ledger_open(path, &error);

	if (l == NULL)
		fail_msg("ledger_open: %s", error);
	assert_null(error);
	return l;
}

static void
test_writer_writes_every_record_as_one_line(void **state)
{
	struct test_dir *t = *state;
	struct ledger *l = open_ok(t->path);

	for (uint64_t id = 1; id <= TEST_RECORDS; id++)
		assert_int_equal(write_id(l, id), 0);
	ledger_flush(l);
	check_file_ids(t->path, 1, TEST_RECORDS);
	assert_true(ledger_ok(l));
	ledger_close(l);
}

static void
test_close_writes_what_is_queued(void **state)
{
	struct test_dir *t = *state;
	struct ledger *l = open_ok(t->path);

	for (uint64_t id = 1; id <= 1000; id++)
		assert_int_equal(write_id(l, id), 0);
	ledger_close(l);
	check_file_ids(t->path, 1, 1000);
}

static void
test_file_is_created_mode_0640_and_appended(void **state)
{
	struct test_dir *t = *state;
	struct ledger *l;
	struct stat st;
	mode_t old = umask(022);

	l = open_ok(t->path);
	write_id(l, 1);
	ledger_close(l);
	l = open_ok(t->path);
	write_id(l, 2);
	ledger_close(l);
	umask(old);
	assert_int_equal(stat(t->path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	check_file_ids(t->path, 1, 2);
}

static void
test_open_fails_with_a_reason(void **state)
{
	char *error = NULL;

	(void)state;
	assert_null(ledger_open("/nonexistent-dir/egress.jsonl", &error));
	assert_non_null(error);
	assert_non_null(strstr(error, "/nonexistent-dir/egress.jsonl"));
	free(error);
	ledger_close(NULL);
}

struct writer_arg {
	struct ledger *l;
	uint64_t first;
};

static void *
write_many(void *arg)
{
	struct writer_arg *w = arg;

	for (uint64_t i = 0; i < TEST_THREAD_RECORDS; i++)
		if (write_id(w->l, w->first + i) != 0)
			return (void *)w;
	return NULL;
}

static void
test_two_threads_lines_are_whole(void **state)
{
	struct test_dir *t = *state;
	struct ledger *l = open_ok(t->path);
	struct writer_arg a = { l, 1 }, b = { l, 1 + TEST_THREAD_RECORDS };
	pthread_t ta, tb;
	void *ra, *rb;

	assert_int_equal(pthread_create(&ta, NULL, write_many, &a), 0);
	assert_int_equal(pthread_create(&tb, NULL, write_many, &b), 0);
	pthread_join(ta, &ra);
	pthread_join(tb, &rb);
	assert_null(ra);
	assert_null(rb);
	ledger_flush(l);
	check_file_ids(t->path, 1, 2 * TEST_THREAD_RECORDS);
	ledger_close(l);
}

static void
test_reopen_puts_earlier_lines_in_old_file_and_later_in_new(void **state)
{
	struct test_dir *t = *state;
	struct ledger *l = open_ok(t->path);

	for (uint64_t id = 1; id <= 3000; id++)
		assert_int_equal(write_id(l, id), 0);
	assert_int_equal(rename(t->path, t->old), 0);
	ledger_reopen(l);
	for (uint64_t id = 3001; id <= 5000; id++)
		assert_int_equal(write_id(l, id), 0);
	ledger_flush(l);
	check_file_ids(t->old, 1, 3000);
	check_file_ids(t->path, 3001, 2000);
	ledger_close(l);
}

static void
test_reopen_with_nothing_queued_starts_a_new_file(void **state)
{
	struct test_dir *t = *state;
	struct ledger *l = open_ok(t->path);

	write_id(l, 1);
	ledger_flush(l);
	assert_int_equal(rename(t->path, t->old), 0);
	ledger_reopen(l);
	ledger_flush(l);
	write_id(l, 2);
	ledger_close(l);
	check_file_ids(t->old, 1, 1);
	check_file_ids(t->path, 2, 1);
}

/* The length of the line write_id() queues. */
static size_t
record_bytes(void)
{
	struct ledger_record rec;
	char line[LEDGER_RECORD_MAX_BYTES];

	fill_deny(&rec);
	return (size_t)format(&rec, line);
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Reads what is in the pipe at FD now; returns the newlines read. */
static size_t
drain_pipe(int fd)
{
	static char chunk[TEST_PIPE_READ_BYTES];
	size_t lines = 0;
	ssize_t n;

	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		for (ssize_t i = 0; i < n; i++)
			lines += chunk[i] == '\n';
	return lines;
}

struct drain_arg {
	int fd;
	atomic_bool stop;
	size_t lines;
};

static void *
drain_until_stopped(void *arg)
{
	struct drain_arg *d = arg;
	struct pollfd pfd = { d->fd, POLLIN, 0 };

	while (!atomic_load(&d->stop)) {
		poll(&pfd, 1, 10);
		d->lines += drain_pipe(d->fd);
	}
	d->lines += drain_pipe(d->fd);
	return NULL;
}

static void
test_full_queue_refuses_then_recovers(void **state)
{
	struct test_dir *t = *state;
	struct drain_arg d = { .lines = 0 };
	struct ledger *l;
	size_t accepted = 0, read_lines = 0;
	pthread_t drainer;
	int waited = 0;

	/* A FIFO nobody reads stalls the writer; the test holds it open for
	 * reading (O_RDWR) so that opening it for writing does not block. */
	assert_int_equal(mkfifo(t->path, 0600), 0);
	d.fd = open(t->path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	assert_true(d.fd >= 0);
	l = open_ok(t->path);
	while (write_id(l, accepted + 1) == 0)
		accepted++;
	/* nearly a whole queue's worth was taken before the refusal (how much
	 * the writer holds in its batch when it stalls depends on timing) */
	assert_true(accepted * record_bytes() > LEDGER_QUEUE_MAX_BYTES - LEDGER_QUEUE_RESERVE_BYTES);
	assert_false(ledger_ok(l));
	assert_int_equal(write_id(l, accepted + 1), -1);
	while (!ledger_ok(l) && waited++ < TEST_WAIT_MAX_MS) {
		read_lines += drain_pipe(d.fd);
		sleep_ms(1);
	}
	assert_true(ledger_ok(l));
	assert_int_equal(write_id(l, accepted + 1), 0);
	accepted++;
	atomic_init(&d.stop, false);
	assert_int_equal(pthread_create(&drainer, NULL, drain_until_stopped, &d), 0);
	ledger_close(l);
	atomic_store(&d.stop, true);
	pthread_join(drainer, NULL);
	assert_int_equal(read_lines + d.lines, accepted);
	close(d.fd);
}

static void
test_write_error_fails_closed_and_recovers_on_reopen(void **state)
{
	struct test_dir *t = *state;
	struct ledger *l;
	int waited = 0;

	/* /dev/full answers every write with ENOSPC. */
	assert_int_equal(symlink("/dev/full", t->path), 0);
	l = open_ok(t->path);
	assert_int_equal(write_id(l, 1), 0);
	ledger_flush(l);
	assert_false(ledger_ok(l));
	assert_int_equal(write_id(l, 2), -1);
	/* the operator makes room and rotates: the kept line goes to the new file */
	assert_int_equal(unlink(t->path), 0);
	ledger_reopen(l);
	while (!ledger_ok(l) && waited++ < TEST_WAIT_MAX_MS)
		sleep_ms(1);
	assert_true(ledger_ok(l));
	assert_int_equal(write_id(l, 2), 0);
	ledger_close(l);
	check_file_ids(t->path, 1, 2);
}

static void
test_reopen_after_a_torn_write_restarts_the_line_in_the_new_file(void **state)
{
	struct test_dir *t = *state;
	struct rlimit old, small;
	struct ledger *l;
	uint64_t accepted = 0;
	int waited = 0;

	/* A file size limit lets the first write through in part (two lines
	 * and a piece of the third), then fails with EFBIG. */
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = old;
	small.rlim_cur = 2 * record_bytes() + record_bytes() / 2;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	l = open_ok(t->path);
	/* The first three are always taken: the writer fails only once it has
	 * the third; it may fail before the fourth and fifth are queued. */
	while (accepted < 5 && write_id(l, accepted + 1) == 0)
		accepted++;
	assert_true(accepted >= 3);
	ledger_flush(l);
	assert_false(ledger_ok(l));
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(rename(t->path, t->old), 0);
	ledger_reopen(l);
	while (!ledger_ok(l) && waited++ < TEST_WAIT_MAX_MS)
		sleep_ms(1);
	ledger_close(l);
	signal(SIGXFSZ, SIG_DFL);
	check_file_ids(t->path, 3, accepted - 2);
}

static void
test_close_while_failing_drops_and_returns(void **state)
{
	struct test_dir *t = *state;
	struct ledger *l;

	assert_int_equal(symlink("/dev/full", t->path), 0);
	l = open_ok(t->path);
	assert_int_equal(write_id(l, 1), 0);
	ledger_flush(l);
	assert_false(ledger_ok(l));
	ledger_close(l);
}

#define DIR_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup_dir, teardown_dir)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_deny_connect_record_is_byte_exact),
		cmocka_unit_test(test_format_close_record_has_bytes_and_duration),
		cmocka_unit_test(test_format_absent_fields_are_null),
		cmocka_unit_test(test_format_unix_refusal),
		cmocka_unit_test(test_format_request_record_has_its_four_fields),
		cmocka_unit_test(test_format_negative_numbers_and_dns_mode),
		cmocka_unit_test(test_format_zero_ts_means_now),
		cmocka_unit_test(test_format_ts_reuses_the_second_and_stays_exact),
		cmocka_unit_test(test_format_escapes_hostile_host),
		cmocka_unit_test(test_format_escapes_every_string_field),
		cmocka_unit_test(test_format_port_is_a_number),
		cmocka_unit_test(test_format_cuts_overlong_plain_host_at_cap),
		cmocka_unit_test(test_format_cut_does_not_split_utf8),
		cmocka_unit_test(test_format_cut_of_escaped_string_ends_on_a_character),
		cmocka_unit_test(test_format_cut_never_splits_an_escape),
		cmocka_unit_test(test_format_every_field_at_worst_fits_one_record),
		cmocka_unit_test(test_format_too_small_buffer_fails),
		cmocka_unit_test(test_next_id_is_unique_nonzero_and_exact_in_a_double),
		DIR_TEST(test_writer_writes_every_record_as_one_line),
		DIR_TEST(test_close_writes_what_is_queued),
		DIR_TEST(test_file_is_created_mode_0640_and_appended),
		cmocka_unit_test(test_open_fails_with_a_reason),
		DIR_TEST(test_two_threads_lines_are_whole),
		DIR_TEST(test_reopen_puts_earlier_lines_in_old_file_and_later_in_new),
		DIR_TEST(test_reopen_with_nothing_queued_starts_a_new_file),
		DIR_TEST(test_full_queue_refuses_then_recovers),
		DIR_TEST(test_write_error_fails_closed_and_recovers_on_reopen),
		DIR_TEST(test_reopen_after_a_torn_write_restarts_the_line_in_the_new_file),
		DIR_TEST(test_close_while_failing_drops_and_returns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
