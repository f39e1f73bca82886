/* Unit tests for egress-proxy/tlsca (a sandbox's CA): leaves that verify
 * under their CA only, for their host only; the cache and its bound; hosts
 * no certificate may name; the CA's PEM. */
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
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "egress-proxy/tlsca.h"

/* Whether LEAF verifies as a TLS server's certificate under CA alone. */
static bool
verifies(X509 *ca, X509 *leaf)
{
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	bool ok;

	assert_non_null(store);
	assert_non_null(ctx);
	assert_int_equal(X509_STORE_add_cert(store, ca), 1);
	assert_int_equal(X509_STORE_CTX_init(ctx, store, leaf, NULL), 1);
	X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
	ok = X509_verify_cert(ctx) == 1;
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	return ok;
}

static struct tlsca *
new_ca(const char *name)
{
	char *err = NULL;
	struct tlsca *ca = tlsca_new(name, &err);

	if (ca == NULL)
		fail_msg("tlsca_new: %s", err);
	return ca;
}

static void
test_a_leaf_verifies_for_its_host_only(void **state)
{
	struct tlsca *ca = new_ca("web");
	char *err = NULL;
	X509 *leaf = tlsca_leaf(ca, "api.github.com", &err);

	(void)state;
	assert_non_null(leaf);
	assert_true(verifies(tlsca_cert(ca), leaf));
	assert_int_equal(X509_check_host(leaf, "api.github.com", 0, 0, NULL), 1);
	assert_int_not_equal(X509_check_host(leaf, "github.com", 0, 0, NULL), 1);
	assert_int_not_equal(X509_check_host(leaf, "evil.api.github.com", 0, 0, NULL), 1);
	assert_int_equal(X509_check_private_key(leaf, tlsca_leaf_key(ca)), 1);
	/* A leaf is no CA: nothing it signed would verify. */
	assert_int_equal(X509_check_ca(leaf), 0);
	assert_int_not_equal(X509_check_ca(tlsca_cert(ca)), 0);
	tlsca_free(ca);
}

static void
test_another_sandboxs_ca_does_not_vouch_for_it(void **state)
{
	struct tlsca *a = new_ca("a"), *b = new_ca("b");
	char *err = NULL;

	(void)state;
	assert_false(verifies(tlsca_cert(b), tlsca_leaf(a, "pypi.org", &err)));
	assert_true(verifies(tlsca_cert(a), tlsca_leaf(a, "pypi.org", &err)));
	tlsca_free(a);
	tlsca_free(b);
}

static void
test_an_address_gets_an_ip_name(void **state)
{
	struct tlsca *ca = new_ca("web");
	char *err = NULL;
	X509 *v4 = tlsca_leaf(ca, "198.18.0.10", &err), *v6;

	(void)state;
	assert_non_null(v4);
	assert_int_equal(X509_check_ip_asc(v4, "198.18.0.10", 0), 1);
	assert_int_not_equal(X509_check_host(v4, "198.18.0.10", 0, 0, NULL), 1);
	v6 = tlsca_leaf(ca, "2001:db8::1", &err);
	assert_non_null(v6);
	assert_int_equal(X509_check_ip_asc(v6, "2001:db8::1", 0), 1);
	assert_true(verifies(tlsca_cert(ca), v6));
	tlsca_free(ca);
}

static void
test_the_cache_mints_a_host_once(void **state)
{
	struct tlsca *ca = new_ca("web");
	char *err = NULL;
	X509 *first = tlsca_leaf(ca, "pypi.org", &err);

	(void)state;
	assert_ptr_equal(tlsca_leaf(ca, "pypi.org", &err), first);
	assert_ptr_equal(tlsca_leaf(ca, "PyPI.org", &err), first);
	assert_int_equal(tlsca_minted(ca), 1);
	assert_int_equal(tlsca_hits(ca), 2);
	tlsca_free(ca);
}

static void
test_the_cache_is_bounded_least_recently_used_out(void **state)
{
	struct tlsca *ca = new_ca("web");
	char host[64], *err = NULL;

	(void)state;
	assert_non_null(tlsca_leaf(ca, "kept.example", &err));
	assert_non_null(tlsca_leaf(ca, "dropped.example", &err));
	for (int i = 0; i < TLSCA_CACHE_MAX - 1; i++) {
		snprintf(host, sizeof(host), "h%d.example", i);
		assert_non_null(tlsca_leaf(ca, host, &err));
		/* kept.example stays the most recently used of the first two. */
		if (i % 16 == 0)
			assert_non_null(tlsca_leaf(ca, "kept.example", &err));
	}
	assert_int_equal(tlsca_minted(ca), TLSCA_CACHE_MAX + 1);
	assert_non_null(tlsca_leaf(ca, "kept.example", &err));
	assert_int_equal(tlsca_minted(ca), TLSCA_CACHE_MAX + 1);
	assert_non_null(tlsca_leaf(ca, "dropped.example", &err));
	assert_int_equal(tlsca_minted(ca), TLSCA_CACHE_MAX + 2);
	tlsca_free(ca);
}

static void
test_hosts_no_certificate_may_name_are_refused(void **state)
{
	static const char *const bad[] = {
		"", ".", "a..b", ".a.b", "a.b.", "*.github.com", "a.com,DNS:evil.com",
		"a.com\nb", "a com", "a/b", "xn--\xc3\xa9.com",
	};
	struct tlsca *ca = new_ca("web");
	char long_name[300], *err = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (tlsca_leaf(ca, bad[i], &err) != NULL)
			fail_msg("a leaf for \"%s\"", bad[i]);
		assert_non_null(err);
		free(err);
		err = NULL;
	}
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_null(tlsca_leaf(ca, long_name, &err));
	free(err);
	assert_int_equal(tlsca_minted(ca), 0);
	tlsca_free(ca);
}

static void
test_the_pem_is_the_ca_certificate(void **state)
{
	struct tlsca *ca = new_ca("web");
	char *pem = tlsca_cert_pem(ca);
	BIO *b;
	X509 *back;
	X509_NAME *name;
	char cn[128];

	(void)state;
	assert_non_null(pem);
	assert_true(strncmp(pem, "-----BEGIN CERTIFICATE-----\n", 28) == 0);
	b = BIO_new_mem_buf(pem, -1);
	back = PEM_read_bio_X509(b, NULL, NULL, NULL);
	assert_non_null(back);
	assert_int_equal(X509_cmp(back, tlsca_cert(ca)), 0);
	name = X509_get_subject_name(back);
	assert_true(X509_NAME_get_text_by_NID(name, NID_commonName, cn, sizeof(cn)) > 0);
	assert_string_equal(cn, "corral sandbox web");
	X509_free(back);
	BIO_free(b);
	free(pem);
	tlsca_free(ca);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_leaf_verifies_for_its_host_only),
		cmocka_unit_test(test_another_sandboxs_ca_does_not_vouch_for_it),
		cmocka_unit_test(test_an_address_gets_an_ip_name),
		cmocka_unit_test(test_the_cache_mints_a_host_once),
		cmocka_unit_test(test_the_cache_is_bounded_least_recently_used_out),
		cmocka_unit_test(test_hosts_no_certificate_may_name_are_refused),
		cmocka_unit_test(test_the_pem_is_the_ca_certificate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
