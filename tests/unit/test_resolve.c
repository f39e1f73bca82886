/* Unit tests for egress-proxy/resolve: c-ares in the libevent loop, the TTL
 * cache, coalescing and cancellation, against a tiny DNS server on a
 * loopback UDP socket that this file serves from the same loop. No test
 * leaves the machine: the resolver is only ever pointed at that server. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "common/timeutil.h"
#include "egress-proxy/resolve.h"
#include "tests/unit/dns-test-server.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

#define WAIT_MAX_MS 5000                /* a test waiting longer has failed */
#define LOOP_SLICE_MS 5
#define QUIET_MS 100                    /* how long "nothing more happens" is watched */
#define SHORT_TIMEOUT_MS 200
#define LRU_BATCH 64                    /* lookups in flight at once while filling */
#define NS_PER_S INT64_C(1000000000)
#define FAKE_START_NS (1000 * NS_PER_S)

static const struct dns_test_zone zones[] = {
	{ "multi.test", DNS_TEST_ANSWER, 120, 90,
	  { "198.18.0.1", "198.18.0.2", "198.18.0.3" }, { "2001:db8::1" } },
	{ "v6only.test", DNS_TEST_ANSWER, 0, 60, { NULL }, { "2001:db8::6" } },
	{ "short.test", DNS_TEST_ANSWER, 1, 0, { "198.18.1.1" }, { NULL } },
	{ "long.test", DNS_TEST_ANSWER, 86400, 0, { "198.18.1.2" }, { NULL } },
	{ "many.test", DNS_TEST_ANSWER, 60, 0,
	  { "198.18.3.1", "198.18.3.2", "198.18.3.3", "198.18.3.4", "198.18.3.5",
	    "198.18.3.6", "198.18.3.7", "198.18.3.8", "198.18.3.9", "198.18.3.10" },
	  { NULL } },
	{ "slow.test", DNS_TEST_SILENT, 0, 0, { NULL }, { NULL } },
	{ "fail.test", DNS_TEST_SERVFAIL, 0, 0, { NULL }, { NULL } },
	/* Any "<label>.lru.test" has this one address. */
	{ "*.lru.test", DNS_TEST_ANSWER, 300, 0, { "198.18.2.1" }, { NULL } },
};

struct fixture {
	struct event_base *base;
	struct dns_test_server dns;
	struct resolver *r;
	int64_t now_ns;                 /* the resolver's clock */
	int done;                       /* callbacks run */
};

/* What one query's callback saw. */
struct outcome {
	struct fixture *f;
	int calls;
	enum resolve_status status;
	struct resolve_result res;
};

/* ---- fixture and loop helpers ---- */

static int64_t
fake_clock(void *arg)
{
	return ((const struct fixture *)arg)->now_ns;
}

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *servers[1];
	char *err = NULL;

	if (f == NULL || (f->base = event_base_new()) == NULL ||
	    dns_test_server_init(&f->dns, f->base, zones, NELEM(zones)) < 0)
		return -1;
	servers[0] = f->dns.address;
	if ((f->r = resolver_new(f->base, servers, 1, &err)) == NULL) {
		fprintf(stderr, "resolver_new: %s\n", err != NULL ? err : "?");
		free(err);
		return -1;
	}
	f->now_ns = FAKE_START_NS;
	resolver_set_clock(f->r, fake_clock, f);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	resolver_free(f->r);
	dns_test_server_clear(&f->dns);
	event_base_free(f->base);
	free(f);
	return 0;
}

static void
run_for_ms(struct fixture *f, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(f->base, &tv);
	event_base_dispatch(f->base);
}

/* Runs the loop until *COUNTER reaches WANT; fails after WAIT_MAX_MS. */
static void
run_until(struct fixture *f, const int *counter, int want)
{
	int64_t deadline = time_mono_ns() + (int64_t)WAIT_MAX_MS * 1000000;

	while (*counter < want && time_mono_ns() < deadline)
		run_for_ms(f, LOOP_SLICE_MS);
	assert_int_equal(*counter, want);
}

static void
outcome_record(enum resolve_status status, const struct resolve_result *res, void *arg)
{
	struct outcome *o = arg;

	assert_non_null(res);
	o->calls++;
	o->status = status;
	o->res = *res;
	o->f->done++;
}

static struct resolve_query *
lookup(struct fixture *f, const char *name, int family, struct outcome *o)
{
	struct resolve_query *q;

	memset(o, 0, sizeof(*o));
	o->f = f;
	q = resolver_lookup(f->r, name, family, outcome_record, o);
	assert_non_null(q);
	return q;
}

/* Looks NAME up and waits for its one callback. */
static void
resolve(struct fixture *f, const char *name, int family, struct outcome *o)
{
	int want = f->done + 1;

	lookup(f, name, family, o);
	run_until(f, &f->done, want);
	assert_int_equal(o->calls, 1);
}

/* SS is TEXT's address, port 0. */
static void
assert_addr(const struct sockaddr_storage *ss, const char *text)
{
	char buf[INET6_ADDRSTRLEN];
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET) {
		assert_int_equal(sin->sin_port, 0);
		assert_non_null(inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof(buf)));
	} else {
		assert_int_equal(ss->ss_family, AF_INET6);
		assert_int_equal(sin6->sin6_port, 0);
		assert_non_null(inet_ntop(AF_INET6, &sin6->sin6_addr, buf, sizeof(buf)));
	}
	assert_string_equal(buf, text);
}

/* ---- answers ---- */

static void
test_a_answer_has_every_address_and_its_ttl(void **state)
{
	struct fixture *f = *state;
	struct outcome o;

	resolve(f, "multi.test", AF_INET, &o);
	assert_int_equal(o.status, RESOLVE_OK);
	assert_int_equal(o.res.naddrs, 3);
	assert_addr(&o.res.addrs[0], "198.18.0.1");
	assert_addr(&o.res.addrs[1], "198.18.0.2");
	assert_addr(&o.res.addrs[2], "198.18.0.3");
	assert_int_equal(o.res.ttl_s, 120);
	assert_int_equal(f->dns.queries, 1);
}

static void
test_aaaa_answer_has_the_ipv6_address(void **state)
{
	struct fixture *f = *state;
	struct outcome o;

	resolve(f, "multi.test", AF_INET6, &o);
	assert_int_equal(o.status, RESOLVE_OK);
	assert_int_equal(o.res.naddrs, 1);
	assert_addr(&o.res.addrs[0], "2001:db8::1");
	assert_int_equal(o.res.ttl_s, 90);
}

static void
test_unspec_asks_both_puts_ipv4_first_and_keeps_the_smaller_ttl(void **state)
{
	struct fixture *f = *state;
	struct outcome o;

	resolve(f, "multi.test", AF_UNSPEC, &o);
	assert_int_equal(o.status, RESOLVE_OK);
	assert_int_equal(o.res.naddrs, 4);
	assert_addr(&o.res.addrs[0], "198.18.0.1");
	assert_addr(&o.res.addrs[2], "198.18.0.3");
	assert_addr(&o.res.addrs[3], "2001:db8::1");
	assert_int_equal(o.res.ttl_s, 90);
	assert_int_equal(f->dns.queries, 2);
}

static void
test_answer_keeps_at_most_addrs_max(void **state)
{
	struct fixture *f = *state;
	struct outcome o;

	resolve(f, "many.test", AF_INET, &o);
	assert_int_equal(o.status, RESOLVE_OK);
	assert_int_equal(o.res.naddrs, RESOLVE_ADDRS_MAX);
	assert_addr(&o.res.addrs[RESOLVE_ADDRS_MAX - 1], "198.18.3.8");
}

static void
test_short_ttl_is_raised_to_the_minimum(void **state)
{
	struct fixture *f = *state;
	struct outcome o;

	resolve(f, "short.test", AF_INET, &o);
	assert_int_equal(o.status, RESOLVE_OK);
	assert_int_equal(o.res.ttl_s, RESOLVE_TTL_MIN_S);
}

static void
test_long_ttl_is_cut_to_the_maximum(void **state)
{
	struct fixture *f = *state;
	struct outcome o;

	resolve(f, "long.test", AF_INET, &o);
	assert_int_equal(o.status, RESOLVE_OK);
	assert_int_equal(o.res.ttl_s, RESOLVE_TTL_MAX_S);
}

/* ---- failures ---- */

static void
test_unknown_name_is_nxdomain(void **state)
{
	struct fixture *f = *state;
	struct outcome o;

	resolve(f, "nowhere.test", AF_INET, &o);
	assert_int_equal(o.status, RESOLVE_ERR_NXDOMAIN);
	assert_int_equal(o.res.naddrs, 0);
}

static void
test_name_without_addresses_of_the_family_is_nodata(void **state)
{
	struct fixture *f = *state;
	struct outcome o;

	resolve(f, "v6only.test", AF_INET, &o);
	assert_int_equal(o.status, RESOLVE_ERR_NODATA);
	assert_int_equal(o.res.naddrs, 0);
}

static void
test_silent_server_times_out_and_is_not_cached(void **state)
{
	struct fixture *f = *state;
	struct resolve_result res;
	struct outcome o;
	int64_t start = time_mono_ns();

	assert_int_equal(resolver_set_timeouts(f->r, SHORT_TIMEOUT_MS, 1), 0);
	resolve(f, "slow.test", AF_INET, &o);
	assert_int_equal(o.status, RESOLVE_ERR_TIMEOUT);
	assert_int_equal(o.res.ttl_s, 0);
	assert_true(time_mono_ns() - start < 10 * (int64_t)SHORT_TIMEOUT_MS * 1000000);
	assert_int_equal(resolver_cached(f->r, "slow.test", AF_INET, &res), -1);
}

static void
test_servfail_is_reported_and_not_cached(void **state)
{
	struct fixture *f = *state;
	struct outcome o;
	int first;

	resolve(f, "fail.test", AF_INET, &o);
	assert_int_equal(o.status, RESOLVE_ERR_SERVFAIL);
	first = f->dns.queries;
	assert_true(first >= 1);
	resolve(f, "fail.test", AF_INET, &o);
	assert_int_equal(o.status, RESOLVE_ERR_SERVFAIL);
	assert_true(f->dns.queries > first);
}

static void
test_invalid_name_fails_without_a_query(void **state)
{
	static const char *const bad[] = { "bad..name", ".lead.test", "sp ace.test",
		"back\\slash.test", "", "." };
	struct fixture *f = *state;
	struct outcome o;

	for (size_t i = 0; i < NELEM(bad); i++) {
		resolve(f, bad[i], AF_INET, &o);
		assert_int_equal(o.status, RESOLVE_ERR_OTHER);
	}
	resolve(f, "multi.test", AF_UNIX, &o);
	assert_int_equal(o.status, RESOLVE_ERR_OTHER);
	assert_int_equal(f->dns.queries, 0);
}

/* ---- the cache ---- */

static void
test_cached_answer_needs_no_second_query(void **state)
{
	struct fixture *f = *state;
	struct resolve_result res;
	struct outcome o;

	resolve(f, "multi.test", AF_INET, &o);
	f->now_ns += 20 * NS_PER_S;
	resolve(f, "multi.test", AF_INET, &o);
	assert_int_equal(o.status, RESOLVE_OK);
	assert_int_equal(o.res.naddrs, 3);
	assert_int_equal(o.res.ttl_s, 100);
	assert_int_equal(resolver_cached(f->r, "multi.test", AF_INET, &res), RESOLVE_OK);
	assert_int_equal(res.naddrs, 3);
	assert_addr(&res.addrs[1], "198.18.0.2");
	assert_int_equal(f->dns.queries, 1);
}

static void
test_name_case_and_final_dot_share_the_cache(void **state)
{
	struct fixture *f = *state;
	struct outcome o;

	resolve(f, "multi.test", AF_INET, &o);
	resolve(f, "MULTI.Test.", AF_INET, &o);
	assert_int_equal(o.status, RESOLVE_OK);
	assert_int_equal(f->dns.queries, 1);
}

static void
test_families_are_cached_apart(void **state)
{
	struct fixture *f = *state;
	struct resolve_result res;
	struct outcome o;

	resolve(f, "multi.test", AF_INET, &o);
	assert_int_equal(resolver_cached(f->r, "multi.test", AF_INET6, &res), -1);
	resolve(f, "multi.test", AF_INET6, &o);
	assert_int_equal(f->dns.queries, 2);
}

static void
test_expired_answer_is_asked_again(void **state)
{
	struct fixture *f = *state;
	struct resolve_result res;
	struct outcome o;

	resolve(f, "multi.test", AF_INET, &o);
	f->now_ns += 119 * NS_PER_S;
	assert_int_equal(resolver_cached(f->r, "multi.test", AF_INET, &res), RESOLVE_OK);
	assert_int_equal(res.ttl_s, 1);
	f->now_ns += NS_PER_S;
	assert_int_equal(resolver_cached(f->r, "multi.test", AF_INET, &res), -1);
	resolve(f, "multi.test", AF_INET, &o);
	assert_int_equal(o.status, RESOLVE_OK);
	assert_int_equal(o.res.ttl_s, 120);
	assert_int_equal(f->dns.queries, 2);
}

static void
test_negative_answer_is_cached_for_the_negative_ttl(void **state)
{
	struct fixture *f = *state;
	struct resolve_result res;
	struct outcome o;

	resolve(f, "nowhere.test", AF_INET, &o);
	assert_int_equal(o.res.ttl_s, RESOLVE_NEGATIVE_TTL_S);
	resolve(f, "nowhere.test", AF_INET, &o);
	assert_int_equal(o.status, RESOLVE_ERR_NXDOMAIN);
	assert_int_equal(f->dns.queries, 1);
	assert_int_equal(resolver_cached(f->r, "nowhere.test", AF_INET, &res),
	    RESOLVE_ERR_NXDOMAIN);
	assert_int_equal(res.naddrs, 0);
	f->now_ns += RESOLVE_NEGATIVE_TTL_S * NS_PER_S;
	resolve(f, "nowhere.test", AF_INET, &o);
	assert_int_equal(o.status, RESOLVE_ERR_NXDOMAIN);
	assert_int_equal(f->dns.queries, 2);
}

static void
test_nodata_is_cached_too(void **state)
{
	struct fixture *f = *state;
	struct resolve_result res;
	struct outcome o;

	resolve(f, "v6only.test", AF_INET, &o);
	assert_int_equal(resolver_cached(f->r, "v6only.test", AF_INET, &res),
	    RESOLVE_ERR_NODATA);
	resolve(f, "v6only.test", AF_INET, &o);
	assert_int_equal(o.status, RESOLVE_ERR_NODATA);
	assert_int_equal(f->dns.queries, 1);
}

static void
test_flush_drops_cached_answers(void **state)
{
	struct fixture *f = *state;
	struct resolve_result res;
	struct outcome o;

	resolve(f, "multi.test", AF_INET, &o);
	resolver_flush(f->r);
	assert_int_equal(resolver_cached(f->r, "multi.test", AF_INET, &res), -1);
	resolve(f, "multi.test", AF_INET, &o);
	assert_int_equal(f->dns.queries, 2);
}

/* Resolves "n<I>.lru.test" for I in [FROM, TO), LRU_BATCH at a time. */
static void
lru_fill(struct fixture *f, unsigned from, unsigned to, struct outcome *o)
{
	char name[64];

	for (unsigned i = from; i < to; i += LRU_BATCH) {
		unsigned n = to - i < LRU_BATCH ? to - i : LRU_BATCH;
		int want = f->done + (int)n;

		for (unsigned j = 0; j < n; j++) {
			snprintf(name, sizeof(name), "n%u.lru.test", i + j);
			lookup(f, name, AF_INET, &o[j]);
		}
		run_until(f, &f->done, want);
		for (unsigned j = 0; j < n; j++)
			assert_int_equal(o[j].status, RESOLVE_OK);
	}
}

static void
test_cache_keeps_at_most_max_entries_dropping_least_recent(void **state)
{
	struct fixture *f = *state;
	struct outcome o[LRU_BATCH];
	struct resolve_result res;
	char name[64];

	lru_fill(f, 0, 1, o);
	lru_fill(f, 1, 2, o);
	lru_fill(f, 2, RESOLVE_CACHE_MAX_ENTRIES, o);
	/* n0 is used again, so n1 is now the least recently used. */
	assert_int_equal(resolver_cached(f->r, "n0.lru.test", AF_INET, &res), RESOLVE_OK);
	lru_fill(f, RESOLVE_CACHE_MAX_ENTRIES, RESOLVE_CACHE_MAX_ENTRIES + 1, o);
	assert_int_equal(f->dns.queries, RESOLVE_CACHE_MAX_ENTRIES + 1);
	assert_int_equal(resolver_cached(f->r, "n1.lru.test", AF_INET, &res), -1);
	for (unsigned i = 0; i <= RESOLVE_CACHE_MAX_ENTRIES; i++) {
		snprintf(name, sizeof(name), "n%u.lru.test", i);
		if (i != 1)
			assert_int_equal(resolver_cached(f->r, name, AF_INET, &res), RESOLVE_OK);
	}
}

/* ---- coalescing, cancellation, freeing ---- */

static void
test_concurrent_lookups_share_one_query(void **state)
{
	struct fixture *f = *state;
	struct outcome o[10];

	for (size_t i = 0; i < NELEM(o); i++)
		lookup(f, "multi.test", AF_INET, &o[i]);
	run_until(f, &f->done, (int)NELEM(o));
	assert_int_equal(f->dns.queries, 1);
	for (size_t i = 0; i < NELEM(o); i++) {
		assert_int_equal(o[i].calls, 1);
		assert_int_equal(o[i].status, RESOLVE_OK);
		assert_int_equal(o[i].res.naddrs, 3);
	}
}

static void
test_cancelled_query_never_calls_back_but_fills_the_cache(void **state)
{
	struct fixture *f = *state;
	struct resolve_result res;
	struct outcome o, other;

	resolve_query_cancel(lookup(f, "multi.test", AF_INET, &o));
	lookup(f, "long.test", AF_INET, &other);
	run_until(f, &f->done, 1);
	run_for_ms(f, QUIET_MS);
	assert_int_equal(o.calls, 0);
	assert_int_equal(f->dns.queries, 2);
	assert_int_equal(resolver_cached(f->r, "multi.test", AF_INET, &res), RESOLVE_OK);
}

static void
test_cancelled_cache_hit_never_calls_back(void **state)
{
	struct fixture *f = *state;
	struct outcome o;

	resolve(f, "multi.test", AF_INET, &o);
	resolve_query_cancel(lookup(f, "multi.test", AF_INET, &o));
	run_for_ms(f, QUIET_MS);
	assert_int_equal(o.calls, 0);
}

/* Cancels the query in ARG's slot, then records the call. */
struct canceller {
	struct outcome o;
	struct resolve_query *victim;
};

static void
cancel_victim(enum resolve_status status, const struct resolve_result *res, void *arg)
{
	struct canceller *c = arg;

	resolve_query_cancel(c->victim);
	outcome_record(status, res, &c->o);
}

static void
test_cancel_from_inside_another_callback(void **state)
{
	struct fixture *f = *state;
	struct canceller c;
	struct outcome victim;

	memset(&c, 0, sizeof(c));
	c.o.f = f;
	/* Both wait on one lookup, so both are answered in the same round:
	 * the victim is cancelled while its own delivery is already due. */
	assert_non_null(resolver_lookup(f->r, "multi.test", AF_INET, cancel_victim, &c));
	c.victim = lookup(f, "multi.test", AF_INET, &victim);
	run_until(f, &f->done, 1);
	run_for_ms(f, QUIET_MS);
	assert_int_equal(c.o.calls, 1);
	assert_int_equal(c.o.status, RESOLVE_OK);
	assert_int_equal(victim.calls, 0);
}

static void
test_callback_never_runs_inside_lookup(void **state)
{
	struct fixture *f = *state;
	struct outcome cached, literal, invalid;

	resolve(f, "multi.test", AF_INET, &cached);
	lookup(f, "multi.test", AF_INET, &cached);
	lookup(f, "198.18.9.9", AF_INET, &literal);     /* c-ares answers at once */
	lookup(f, "bad..name", AF_INET, &invalid);
	assert_int_equal(cached.calls + literal.calls + invalid.calls, 0);
	run_until(f, &f->done, 4);
	assert_int_equal(cached.status, RESOLVE_OK);
	assert_int_equal(literal.status, RESOLVE_OK);
	assert_int_equal(literal.res.naddrs, 1);
	assert_addr(&literal.res.addrs[0], "198.18.9.9");
	assert_int_equal(invalid.status, RESOLVE_ERR_OTHER);
	assert_int_equal(f->dns.queries, 1);
}

static void
test_free_with_pending_queries_calls_nothing(void **state)
{
	struct fixture *f = *state;
	struct outcome warm, in_flight, joined, ready;

	resolve(f, "multi.test", AF_INET, &warm);
	lookup(f, "slow.test", AF_INET, &in_flight);
	lookup(f, "slow.test", AF_INET, &joined);
	run_until(f, &f->dns.queries, 2);
	lookup(f, "multi.test", AF_INET, &ready);       /* answered, not yet delivered */
	resolver_free(f->r);
	f->r = NULL;
	run_for_ms(f, QUIET_MS);
	assert_int_equal(in_flight.calls + joined.calls + ready.calls, 0);
}

struct freer {
	struct outcome o;
	struct fixture *f;
};

static void
free_resolver(enum resolve_status status, const struct resolve_result *res, void *arg)
{
	struct freer *fr = arg;

	outcome_record(status, res, &fr->o);
	resolver_free(fr->f->r);
	fr->f->r = NULL;
}

static void
test_free_from_inside_a_callback(void **state)
{
	struct fixture *f = *state;
	struct freer fr;
	struct outcome later, slow;

	memset(&fr, 0, sizeof(fr));
	fr.o.f = f;
	fr.f = f;
	assert_non_null(resolver_lookup(f->r, "multi.test", AF_INET, free_resolver, &fr));
	lookup(f, "multi.test", AF_INET, &later);
	lookup(f, "slow.test", AF_INET, &slow);
	run_until(f, &f->done, 1);
	run_for_ms(f, QUIET_MS);
	assert_null(f->r);
	assert_int_equal(fr.o.calls, 1);
	assert_int_equal(later.calls + slow.calls, 0);
}

/* ---- construction and settings ---- */

static void
test_new_rejects_malformed_servers(void **state)
{
	static const char *const bad[] = { "nonsense", "198.18.0.53:0", "198.18.0.53:65536",
		"198.18.0.53:", "198.18.0.53:x", "[::1", "[::1]x", "[198.18.0.53]", "::1]:53",
		"198.18.0.256" };
	struct fixture *f = *state;

	for (size_t i = 0; i < NELEM(bad); i++) {
		const char *servers[] = { "127.0.0.1", bad[i] };
		char *err = NULL;

		assert_null(resolver_new(f->base, servers, NELEM(servers), &err));
		assert_non_null(err);
		assert_non_null(strstr(err, bad[i]));
		free(err);
	}
}

static void
test_new_accepts_ipv4_and_ipv6_servers(void **state)
{
	static const char *const servers[] = { "198.18.0.53", "198.18.0.53:5353", "::1",
		"[::1]", "[2001:db8::53]:5353" };
	struct fixture *f = *state;
	char *err = NULL;
	struct resolver *r = resolver_new(f->base, servers, NELEM(servers), &err);

	assert_non_null(r);
	assert_null(err);
	resolver_free(r);
}

static void
test_set_timeouts_refused_while_a_lookup_is_in_flight(void **state)
{
	struct fixture *f = *state;
	struct outcome o;

	lookup(f, "slow.test", AF_INET, &o);
	assert_int_equal(resolver_set_timeouts(f->r, SHORT_TIMEOUT_MS, 1), -1);
	assert_int_equal(resolver_set_timeouts(f->r, 0, 1), -1);
}

static void
test_strerror_names_every_status(void **state)
{
	(void)state;
	for (int s = RESOLVE_OK; s <= RESOLVE_ERR_OTHER; s++)
		assert_true(strlen(resolve_strerror((enum resolve_status)s)) > 0);
	assert_string_equal(resolve_strerror(RESOLVE_ERR_NXDOMAIN), "no such name");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(test_a_answer_has_every_address_and_its_ttl),
		T(test_aaaa_answer_has_the_ipv6_address),
		T(test_unspec_asks_both_puts_ipv4_first_and_keeps_the_smaller_ttl),
		T(test_answer_keeps_at_most_addrs_max),
		T(test_short_ttl_is_raised_to_the_minimum),
		T(test_long_ttl_is_cut_to_the_maximum),
		T(test_unknown_name_is_nxdomain),
		T(test_name_without_addresses_of_the_family_is_nodata),
		T(test_silent_server_times_out_and_is_not_cached),
		T(test_servfail_is_reported_and_not_cached),
		T(test_invalid_name_fails_without_a_query),
		T(test_cached_answer_needs_no_second_query),
		T(test_name_case_and_final_dot_share_the_cache),
		T(test_families_are_cached_apart),
		T(test_expired_answer_is_asked_again),
		T(test_negative_answer_is_cached_for_the_negative_ttl),
		T(test_nodata_is_cached_too),
		T(test_flush_drops_cached_answers),
		T(test_cache_keeps_at_most_max_entries_dropping_least_recent),
		T(test_concurrent_lookups_share_one_query),
		T(test_cancelled_query_never_calls_back_but_fills_the_cache),
		T(test_cancelled_cache_hit_never_calls_back),
		T(test_cancel_from_inside_another_callback),
		T(test_callback_never_runs_inside_lookup),
		T(test_free_with_pending_queries_calls_nothing),
		T(test_free_from_inside_a_callback),
		T(test_new_rejects_malformed_servers),
		T(test_new_accepts_ipv4_and_ipv6_servers),
		T(test_set_timeouts_refused_while_a_lookup_is_in_flight),
		T(test_strerror_names_every_status),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
