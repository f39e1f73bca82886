/* Unit tests for egress-proxy/secretsub (secrets swapped in at the
 * proxy): placeholders of the value's shape; the swap toward the secret's
 * hosts in its headers only, Basic credentials included; misuse anywhere
 * else; heads it will not read; the rest of a head byte for byte. */
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
#include <openssl/evp.h>

#include "common/buf.h"
#include "egress-proxy/secretsub.h"

#define GH_VALUE "gho_16C7e42F292c6912E7710c838347Ae178B4a"
#define NPM_VALUE "npm_abcdefghijklmnopqrstuvwxyz0123456789"

static const char *const gh_hosts[] = { "api.github.com", "github.com" };
static const char *const npm_hosts[] = { "registry.npmjs.org" };
static const char *const auth[] = { "Authorization" };
static const char *const npm_query[] = { "token" };
static char gh_ph[SECRETSUB_PLACEHOLDER_MAX_BYTES], npm_ph[SECRETSUB_PLACEHOLDER_MAX_BYTES];
static struct secretsub_secret secrets[2];

static int
setup(void **state)
{
	(void)state;
	assert_int_equal(secretsub_placeholder(GH_VALUE, gh_ph, sizeof(gh_ph)), 0);
	assert_int_equal(secretsub_placeholder(NPM_VALUE, npm_ph, sizeof(npm_ph)), 0);
	secrets[0] = (struct secretsub_secret){ "gh", GH_VALUE, gh_ph, gh_hosts, 2, auth, 1 };
	secrets[1] = (struct secretsub_secret){ "npm", NPM_VALUE, npm_ph, npm_hosts, 1, auth, 1,
		.query = npm_query, .nquery = 1 };
	return 0;
}

/* TEMPLATE with its one "%s" replaced by PH (not a printf format: the
 * tests' templates are data). */
static char *
head_of(const char *template, const char *ph)
{
	const char *at = strstr(template, "%s");
	char *h;

	assert_non_null(at);
	assert_true(asprintf(&h, "%.*s%s%s", (int)(at - template), template, ph, at + 2) > 0);
	return h;
}

struct swap {
	enum secretsub_result rc;
	const char *which;
	uint32_t used;
	char *out;
};

static struct swap
swap(const char *host, const char *head)
{
	struct buf *out = buf_new(SECRETSUB_HEAD_MAX_BYTES);
	struct swap s;

	s.rc = secretsub_head(secrets, 2, host, head, strlen(head), out, &s.which, &s.used);
	s.out = strdup(buf_data(out));
	buf_free(out);
	return s;
}

static void
test_a_placeholder_has_the_values_shape(void **state)
{
	char again[SECRETSUB_PLACEHOLDER_MAX_BYTES];

	(void)state;
	assert_int_equal(strlen(gh_ph), strlen(GH_VALUE));
	assert_true(strncmp(gh_ph, "gho_", 4) == 0);
	assert_string_not_equal(gh_ph, GH_VALUE);
	for (size_t i = 4; i < strlen(GH_VALUE); i++) {
		char v = GH_VALUE[i], p = gh_ph[i];

		assert_true((v >= '0' && v <= '9') == (p >= '0' && p <= '9'));
		assert_true((v >= 'a' && v <= 'z') == (p >= 'a' && p <= 'z'));
		assert_true((v >= 'A' && v <= 'Z') == (p >= 'A' && p <= 'Z'));
	}
	assert_int_equal(secretsub_placeholder(GH_VALUE, again, sizeof(again)), 0);
	assert_string_not_equal(again, gh_ph);
	assert_int_equal(secretsub_placeholder("github_pat_11ABCDEFG0123456789abcdefghij_xyz",
	    again, sizeof(again)), 0);
	assert_true(strncmp(again, "github_pat_", 11) == 0);
	assert_int_equal(secretsub_placeholder("pypi-AgEIcHlwaS5vcmcCJGE0", again, sizeof(again)), 0);
	assert_true(strncmp(again, "pypi-", 5) == 0);
	/* A value's own leading words are no prefix: nothing of them is kept. */
	assert_int_equal(secretsub_placeholder("correct-horse-battery-staple", again,
	    sizeof(again)), 0);
	assert_true(strncmp(again, "correct", 7) != 0 && strstr(again, "horse") == NULL);
}

static void
test_a_short_value_gets_enough_randomness(void **state)
{
	char ph[SECRETSUB_PLACEHOLDER_MAX_BYTES];

	(void)state;
	assert_int_equal(secretsub_placeholder("abc", ph, sizeof(ph)), 0);
	assert_true(strlen(ph) >= SECRETSUB_RANDOM_MIN);
	assert_int_equal(secretsub_placeholder("x-y.z", ph, sizeof(ph)), 0);
	assert_true(strlen(ph) >= SECRETSUB_RANDOM_MIN + 2);
}

/* A value's symbols tell nothing: each becomes a random symbol; only the
 * separators of token formats stay. */
static void
test_symbols_are_drawn_anew(void **state)
{
	static const char value[] = "}{[]!@#$%^&*()-+=~<>?/|:;,.";
	char ph[SECRETSUB_PLACEHOLDER_MAX_BYTES];
	size_t same = 0;

	(void)state;
	assert_int_equal(secretsub_placeholder(value, ph, sizeof(ph)), 0);
	for (size_t i = 0; i < sizeof(value) - 1; i++) {
		assert_true(strchr("!#$%&*+=?@^~-_.", ph[i]) != NULL);
		if (value[i] == '-' || value[i] == '.')
			assert_int_equal(ph[i], value[i]);
		else
			same += ph[i] == value[i];
	}
	/* Twelve symbols to draw from: a few match by chance, never most. */
	assert_true(same < 12);
	assert_null(strstr(ph, "}{[]"));
}

static void
test_values_that_cannot_be_headers_are_refused(void **state)
{
	char ph[SECRETSUB_PLACEHOLDER_MAX_BYTES], *big = malloc(SECRETSUB_VALUE_MAX_BYTES + 2);

	(void)state;
	assert_int_equal(secretsub_placeholder("", ph, sizeof(ph)), -1);
	assert_int_equal(secretsub_placeholder("a b", ph, sizeof(ph)), -1);
	assert_int_equal(secretsub_placeholder("tok\r\nX: y", ph, sizeof(ph)), -1);
	assert_int_equal(secretsub_placeholder("t\xc3\xa9", ph, sizeof(ph)), -1);
	assert_int_equal(secretsub_placeholder(GH_VALUE, ph, 8), -1);
	memset(big, 'a', SECRETSUB_VALUE_MAX_BYTES + 1);
	big[SECRETSUB_VALUE_MAX_BYTES + 1] = '\0';
	assert_int_equal(secretsub_placeholder(big, ph, sizeof(ph)), -1);
	free(big);
}

static void
test_the_value_goes_in_its_header_toward_its_host(void **state)
{
	char *head = head_of("GET /user HTTP/1.1\r\nHost: api.github.com\r\n"
	    "Authorization: Bearer %s\r\nAccept: */*\r\n\r\n", gh_ph);
	struct swap s = swap("api.github.com", head);

	(void)state;
	assert_int_equal(s.rc, SECRETSUB_OK);
	assert_int_equal(s.used, 1u);
	assert_string_equal(s.out, "GET /user HTTP/1.1\r\nHost: api.github.com\r\n"
	    "Authorization: Bearer " GH_VALUE "\r\nAccept: */*\r\n\r\n");
	free(s.out);
	free(head);
	head = head_of("GET / HTTP/1.1\nhost: github.com\nauthorization: token %s\n\n", gh_ph);
	s = swap("GitHub.com", head);
	assert_int_equal(s.rc, SECRETSUB_OK);
	assert_string_equal(s.out, "GET / HTTP/1.1\nhost: github.com\nauthorization: token "
	    GH_VALUE "\n\n");
	free(s.out);
	free(head);
}

static void
test_a_head_without_placeholders_is_unchanged(void **state)
{
	static const char head[] = "POST /x?a=b HTTP/1.1\r\nHost: evil.example\r\n"
	    "Authorization: Basic dXNlcjpwYXNz\r\nContent-Length: 3\r\n\r\n";
	struct swap s = swap("evil.example", head);

	(void)state;
	assert_int_equal(s.rc, SECRETSUB_OK);
	assert_int_equal(s.used, 0);
	assert_string_equal(s.out, head);
	free(s.out);
}

/* HEAD with the placeholder PH, toward HOST, is misuse of NAME. */
static void
assert_misuse(const char *host, const char *template, const char *ph, const char *name)
{
	char *head = head_of(template, ph);
	struct swap s = swap(host, head);

	assert_int_equal(s.rc, SECRETSUB_MISUSE);
	assert_non_null(s.which);
	assert_string_equal(s.which, name);
	assert_null(strstr(s.out, GH_VALUE));
	assert_null(strstr(s.out, NPM_VALUE));
	free(s.out);
	free(head);
}

static void
test_a_placeholder_anywhere_else_is_misuse(void **state)
{
	(void)state;
	assert_misuse("evil.example", "GET / HTTP/1.1\r\nAuthorization: Bearer %s\r\n\r\n", gh_ph,
	    "gh");
	assert_misuse("api.github.com", "GET / HTTP/1.1\r\nX-Token: %s\r\n\r\n", gh_ph, "gh");
	assert_misuse("api.github.com", "GET /?t=%s HTTP/1.1\r\nHost: x\r\n\r\n", gh_ph, "gh");
	assert_misuse("api.github.com", "GET / HTTP/1.1\r\n%s: x\r\n\r\n", gh_ph, "gh");
	assert_misuse("api.github.com", "GET / HTTP/1.1\r\nAuthorization: Bearer %s\r\n\r\n",
	    npm_ph, "npm");
}

static void
test_two_secrets_one_allowed_is_still_misuse(void **state)
{
	char *head;
	struct swap s;

	(void)state;
	assert_true(asprintf(&head, "GET / HTTP/1.1\r\nAuthorization: %s %s\r\n\r\n", gh_ph,
	    npm_ph) > 0);
	s = swap("api.github.com", head);
	assert_int_equal(s.rc, SECRETSUB_MISUSE);
	assert_string_equal(s.which, "npm");
	free(s.out);
	free(head);
}

/* The Basic credential of TEXT with PH in its %s. */
static char *
basic_of(const char *text, const char *ph)
{
	char *plain = head_of(text, ph), *head;
	unsigned char enc[512];

	EVP_EncodeBlock(enc, (const unsigned char *)plain, (int)strlen(plain));
	assert_true(asprintf(&head, "GET /repo.git/info/refs HTTP/1.1\r\nHost: github.com\r\n"
	    "Authorization: Basic %s\r\n\r\n", enc) > 0);
	free(plain);
	return head;
}

static void
test_a_basic_credential_is_swapped_inside(void **state)
{
	char *head = basic_of("x-access-token:%s", gh_ph), *b64, *colon;
	unsigned char dec[512];
	struct swap s = swap("github.com", head);
	int n;

	(void)state;
	assert_int_equal(s.rc, SECRETSUB_OK);
	assert_int_equal(s.used, 1u);
	b64 = strstr(s.out, "Authorization: Basic ");
	assert_non_null(b64);
	b64 += strlen("Authorization: Basic ");
	*strstr(b64, "\r\n") = '\0';
	n = EVP_DecodeBlock(dec, (const unsigned char *)b64, (int)strlen(b64));
	assert_true(n > 0);
	dec[n] = '\0';
	colon = strchr((char *)dec, ':');
	assert_non_null(colon);
	assert_true(strncmp(colon + 1, GH_VALUE, strlen(GH_VALUE)) == 0);
	assert_true(strncmp((char *)dec, "x-access-token:", 15) == 0);
	free(s.out);
	free(head);
}

static void
test_a_basic_credential_elsewhere_is_misuse(void **state)
{
	char *head = basic_of("x-access-token:%s", gh_ph);
	struct swap s = swap("gitlab.example", head);

	(void)state;
	assert_int_equal(s.rc, SECRETSUB_MISUSE);
	assert_string_equal(s.which, "gh");
	free(s.out);
	free(head);
}

static void
test_heads_it_will_not_read(void **state)
{
	static const char *const bad[] = {
		"GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n",
		"GET / HTTP/1.1\r\nX: a\rb\r\n\r\n",
		"GET / HTTP/1.1\r\nno colon here\r\n\r\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct swap s = swap("api.github.com", bad[i]);

		assert_int_equal(s.rc, SECRETSUB_MALFORMED);
		free(s.out);
	}
}

static void
test_a_head_too_big_once_swapped(void **state)
{
	char *head = head_of("GET / HTTP/1.1\r\nAuthorization: Bearer %s\r\n\r\n", gh_ph);
	struct buf *out = buf_new(strlen(head) - 4);
	const char *which;
	uint32_t used;

	(void)state;
	assert_int_equal(secretsub_head(secrets, 2, "api.github.com", head, strlen(head), out,
	    &which, &used), SECRETSUB_TOO_BIG);
	buf_free(out);
	free(head);
}

static void
test_find_names_the_secret_in_bytes(void **state)
{
	char data[SECRETSUB_PLACEHOLDER_MAX_BYTES + 64];

	(void)state;
	snprintf(data, sizeof(data), "\x16\x03\x01 binary %s more", npm_ph);
	assert_string_equal(secretsub_find(secrets, 2, data, strlen(data)), "npm");
	assert_null(secretsub_find(secrets, 2, "nothing here", 12));
}

static void
test_a_named_query_parameter_takes_the_value(void **state)
{
	char *head = head_of("GET /pkg?a=1&token=%s&b=2 HTTP/1.1\r\nHost: x\r\n\r\n", npm_ph);
	char encoded[3 * SECRETSUB_PLACEHOLDER_MAX_BYTES + 1];
	struct swap sw = swap("registry.npmjs.org", head);

	(void)state;
	assert_int_equal(sw.rc, SECRETSUB_OK);
	assert_int_equal(sw.used, 2);
	assert_true(strncmp(sw.out, "GET /pkg?a=1&token=" NPM_VALUE "&b=2 HTTP/1.1\r\n", 47) == 0);
	free(sw.out);
	free(head);
	/* Percent-encoded as a client may send it: the same. */
	for (size_t i = 0; npm_ph[i] != '\0'; i++)
		sprintf(encoded + 3 * i, "%%%02X", (unsigned char)npm_ph[i]);
	head = head_of("GET /pkg?token=%s HTTP/1.1\r\n\r\n", encoded);
	sw = swap("registry.npmjs.org", head);
	assert_int_equal(sw.rc, SECRETSUB_OK);
	assert_string_equal(sw.out, "GET /pkg?token=" NPM_VALUE " HTTP/1.1\r\n\r\n");
	free(sw.out);
	free(head);
}

static void
test_a_query_placeholder_anywhere_else_is_misuse(void **state)
{
	(void)state;
	/* Toward another host, in another parameter, in the path, as a
	 * parameter's name, or part of a value: the request line keeps none. */
	assert_misuse("api.github.com", "GET /?token=%s HTTP/1.1\r\n\r\n", npm_ph, "npm");
	assert_misuse("registry.npmjs.org", "GET /?t=%s HTTP/1.1\r\n\r\n", npm_ph, "npm");
	assert_misuse("registry.npmjs.org", "GET /%s?token=x HTTP/1.1\r\n\r\n", npm_ph, "npm");
	assert_misuse("registry.npmjs.org", "GET /?%s=1 HTTP/1.1\r\n\r\n", npm_ph, "npm");
	assert_misuse("registry.npmjs.org", "GET /?token=ab%s HTTP/1.1\r\n\r\n", npm_ph, "npm");
	/* gh names no parameter: never in a query, even toward its host. */
	assert_misuse("api.github.com", "GET /?token=%s HTTP/1.1\r\n\r\n", gh_ph, "gh");
}

static void
test_a_value_in_a_query_is_percent_encoded(void **state)
{
	static const char *const q[] = { "key" };
	char ph[SECRETSUB_PLACEHOLDER_MAX_BYTES];
	struct secretsub_secret sym = { "sym", "a&b+c/d=e#f", ph, npm_hosts, 1, auth, 1,
		.query = q, .nquery = 1 };
	struct buf *out = buf_new(SECRETSUB_HEAD_MAX_BYTES);
	char encoded[3 * SECRETSUB_PLACEHOLDER_MAX_BYTES + 1], *head;
	const char *which;
	uint32_t used;

	(void)state;
	assert_int_equal(secretsub_placeholder(sym.value, ph, sizeof(ph)), 0);
	for (size_t i = 0; ph[i] != '\0'; i++)
		sprintf(encoded + 3 * i, "%%%02X", (unsigned char)ph[i]);
	head = head_of("GET /?key=%s HTTP/1.1\r\n\r\n", encoded);
	assert_int_equal(secretsub_head(&sym, 1, "registry.npmjs.org", head, strlen(head), out,
	    &which, &used), SECRETSUB_OK);
	assert_string_equal(buf_data(out), "GET /?key=a%26b%2Bc%2Fd%3De%23f HTTP/1.1\r\n\r\n");
	buf_free(out);
	free(head);
}

static void
test_a_value_s_echo_forms(void **state)
{
	static const char sym[] = "ab+c/d=e&f";
	char out[SECRETSUB_ECHO_FORM_BYTES(64)];

	(void)state;
	assert_int_equal(secretsub_echo_form(sym, 0, out, sizeof(out)), strlen(sym));
	assert_string_equal(out, sym);
	/* base64 of "ab+c/d=e&" from its first byte, whole groups only */
	assert_int_equal(secretsub_echo_form(sym, 1, out, sizeof(out)), 12);
	assert_string_equal(out, "YWIrYy9kPWUm");
	/* As it goes into a query, and as an upstream echoing it sends it back. */
	assert_int_equal(secretsub_echo_form(sym, 4, out, sizeof(out)),
	    strlen("ab%2Bc%2Fd%3De%26f"));
	assert_string_equal(out, "ab%2Bc%2Fd%3De%26f");
	assert_true(secretsub_echo_form(sym, 5, out, sizeof(out)) > 0);
	assert_string_equal(out, "ab%2bc%2fd%3de%26f");
	/* Escaped in JSON as reflecting hosts write it: no change for a JSON
	 * string here, Go's \u0026, PHP's \/. */
	assert_int_equal(secretsub_echo_form(sym, 6, out, sizeof(out)), 0);
	assert_true(secretsub_echo_form(sym, 7, out, sizeof(out)) > 0);
	assert_string_equal(out, "ab+c/d=e\\u0026f");
	assert_true(secretsub_echo_form(sym, 8, out, sizeof(out)) > 0);
	assert_string_equal(out, "ab+c\\/d=e&f");
	assert_true(secretsub_echo_form("a\"quote\"d-value", 6, out, sizeof(out)) > 0);
	assert_string_equal(out, "a\\\"quote\\\"d-value");
	/* A value of unreserved characters alone is its own escape: no form. */
	for (unsigned f = 4; f < SECRETSUB_ECHO_FORMS; f++)
		assert_int_equal(secretsub_echo_form(GH_VALUE, f, out, sizeof(out)), 0);
}

/* Feeds TEXT to SC in pieces of STEP bytes: the secret found, or NULL,
 * and in *AT the piece's end where it was. */
static const char *
scan_in_pieces(struct secretsub_scan *sc, const char *text, size_t step, size_t *at)
{
	size_t len = strlen(text);
	const char *which = NULL;

	for (*at = 0; *at < len && which == NULL; *at += step) {
		size_t n = len - *at < step ? len - *at : step;

		which = secretsub_scan_next(sc, secrets, 2, text + *at, n);
	}
	return which;
}

static void
test_a_stream_s_placeholder_is_found_across_pieces(void **state)
{
	struct secretsub_scan *sc = secretsub_scan_new(secrets, 2);
	char body[SECRETSUB_PLACEHOLDER_MAX_BYTES + 64];
	size_t at, end;

	(void)state;
	assert_non_null(sc);
	snprintf(body, sizeof(body), "payload=%s&more", npm_ph);
	end = strlen("payload=") + strlen(npm_ph);
	/* Whole in one piece, cut in two, and cut in many (one byte each). */
	for (size_t step = 1; step <= strlen(body); step++) {
		secretsub_scan_reset(sc);
		assert_string_equal(scan_in_pieces(sc, body, step, &at), "npm");
		/* Found in the piece that holds its last byte, never later. */
		assert_true(at < end + step);
	}
	secretsub_scan_free(sc);
}

static void
test_a_stream_without_placeholders_passes(void **state)
{
	struct secretsub_scan *sc = secretsub_scan_new(secrets, 2);
	char half[64];
	size_t at;

	(void)state;
	assert_non_null(sc);
	/* Nearly a placeholder: its start, then something else. */
	snprintf(half, sizeof(half), "%.10s-%.10s", gh_ph, gh_ph);
	for (size_t step = 1; step < 8; step++) {
		secretsub_scan_reset(sc);
		assert_null(scan_in_pieces(sc, half, step, &at));
	}
	/* A reset forgets: a placeholder's halves in two streams are none. */
	secretsub_scan_reset(sc);
	assert_null(secretsub_scan_next(sc, secrets, 2, gh_ph, 10));
	secretsub_scan_reset(sc);
	assert_null(secretsub_scan_next(sc, secrets, 2, gh_ph + 10, strlen(gh_ph) - 10));
	/* Without one the same halves are one. */
	secretsub_scan_reset(sc);
	assert_null(secretsub_scan_next(sc, secrets, 2, gh_ph, 10));
	assert_string_equal(secretsub_scan_next(sc, secrets, 2, gh_ph + 10, strlen(gh_ph) - 10),
	    "gh");
	secretsub_scan_free(sc);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_placeholder_has_the_values_shape),
		cmocka_unit_test(test_symbols_are_drawn_anew),
		cmocka_unit_test(test_a_short_value_gets_enough_randomness),
		cmocka_unit_test(test_values_that_cannot_be_headers_are_refused),
		cmocka_unit_test(test_the_value_goes_in_its_header_toward_its_host),
		cmocka_unit_test(test_a_head_without_placeholders_is_unchanged),
		cmocka_unit_test(test_a_placeholder_anywhere_else_is_misuse),
		cmocka_unit_test(test_two_secrets_one_allowed_is_still_misuse),
		cmocka_unit_test(test_a_basic_credential_is_swapped_inside),
		cmocka_unit_test(test_a_basic_credential_elsewhere_is_misuse),
		cmocka_unit_test(test_heads_it_will_not_read),
		cmocka_unit_test(test_a_head_too_big_once_swapped),
		cmocka_unit_test(test_find_names_the_secret_in_bytes),
		cmocka_unit_test(test_a_value_s_echo_forms),
		cmocka_unit_test(test_a_named_query_parameter_takes_the_value),
		cmocka_unit_test(test_a_query_placeholder_anywhere_else_is_misuse),
		cmocka_unit_test(test_a_value_in_a_query_is_percent_encoded),
		cmocka_unit_test(test_a_stream_s_placeholder_is_found_across_pieces),
		cmocka_unit_test(test_a_stream_without_placeholders_passes),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
