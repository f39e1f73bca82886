/* A sandbox's certificate authority and its leaves (tlsca.h). */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "common/reason.h"
#include "egress-proxy/tlsca.h"

#define TLSCA_SERIAL_BITS 127           /* positive, and as RFC 5280 asks, at most 20 bytes */
#define TLSCA_CN_MAX_BYTES 64           /* X.520's upper bound on a common name */

struct tlsca_leaf {
	char host[TLSCA_HOST_MAX_BYTES + 1];
	X509 *cert;
	time_t expires;
	uint64_t used;                  /* the ask count when last asked for */
};

struct tlsca {
	EVP_PKEY *ca_key, *leaf_key;
	X509 *ca_cert;
	struct tlsca_leaf leaves[TLSCA_CACHE_MAX];
	size_t nleaves;
	uint64_t asks, minted, hits;
};

/* OpenSSL's first queued error, cleared, in *ERR after WHAT. */
static int
tlsca_fail(char **err, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[256];

	ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return reason_set(err, "%s: %s", what, e != 0 ? buf : "failed");
}

static EVP_PKEY *
tlsca_key(void)
{
	return EVP_EC_gen("P-256");
}

/* A random positive serial, validity from an hour ago for DAYS, version 3. */
static int
tlsca_frame(X509 *x, long days)
{
	BIGNUM *bn = BN_new();
	int ok = bn != NULL && BN_rand(bn, TLSCA_SERIAL_BITS, BN_RAND_TOP_ANY,
	    BN_RAND_BOTTOM_ANY) == 1 && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL &&
	    X509_set_version(x, X509_VERSION_3) == 1 &&
	    X509_gmtime_adj(X509_getm_notBefore(x), -TLSCA_BACKDATE_S) != NULL &&
	    X509_time_adj_ex(X509_getm_notAfter(x), (int)days, 0, NULL) != NULL;

	BN_free(bn);
	return ok ? 0 : -1;
}

/* Adds extension NID with VALUE (a fixed text of ours, never a host). */
static int
tlsca_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	if ((ext = X509V3_EXT_nconf_nid(NULL, &ctx, nid, value)) == NULL)
		return -1;
	ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return ok == 1 ? 0 : -1;
}

static int
tlsca_name(X509_NAME *name, const char *cn)
{
	return X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
	    (const unsigned char *)"corral", -1, -1, 0) == 1 && (cn == NULL ||
	    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1,
	    -1, 0) == 1) ? 0 : -1;
}

/* The CA's self-signed certificate. */
static X509 *
tlsca_make_ca(EVP_PKEY *key, const char *sandbox)
{
	char cn[TLSCA_CN_MAX_BYTES + 1];
	X509 *x = X509_new();

	snprintf(cn, sizeof(cn), "corral sandbox %.40s", sandbox);
	if (x == NULL || tlsca_frame(x, TLSCA_CA_DAYS) == -1 ||
	    tlsca_name(X509_get_subject_name(x), cn) == -1 ||
	    X509_set_issuer_name(x, X509_get_subject_name(x)) != 1 || X509_set_pubkey(x, key) != 1 ||
	    tlsca_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") == -1 ||
	    tlsca_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") == -1 ||
	    tlsca_ext(x, x, NID_subject_key_identifier, "hash") == -1 ||
	    X509_sign(x, key, EVP_sha256()) == 0) {
		X509_free(x);
		return NULL;
	}
	return x;
}

struct tlsca *
tlsca_new(const char *sandbox, char **err)
{
	struct tlsca *ca = calloc(1, sizeof(*ca));

	if (ca == NULL) {
		reason_set(err, "out of memory");
		return NULL;
	}
	if ((ca->ca_key = tlsca_key()) == NULL || (ca->leaf_key = tlsca_key()) == NULL) {
		tlsca_fail(err, "making the sandbox's CA keys");
		tlsca_free(ca);
		return NULL;
	}
	if ((ca->ca_cert = tlsca_make_ca(ca->ca_key, sandbox)) == NULL) {
		tlsca_fail(err, "making the sandbox's CA certificate");
		tlsca_free(ca);
		return NULL;
	}
	return ca;
}

void
tlsca_free(struct tlsca *ca)
{
	if (ca == NULL)
		return;
	for (size_t i = 0; i < ca->nleaves; i++)
		X509_free(ca->leaves[i].cert);
	/* EVP_PKEY_free clears the private parts as it frees them. */
	EVP_PKEY_free(ca->ca_key);
	EVP_PKEY_free(ca->leaf_key);
	X509_free(ca->ca_cert);
	free(ca);
}

char *
tlsca_cert_pem(const struct tlsca *ca)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data, *pem = NULL;
	long n;

	if (b != NULL && PEM_write_bio_X509(b, ca->ca_cert) == 1 &&
	    (n = BIO_get_mem_data(b, &data)) > 0 && (pem = malloc((size_t)n + 1)) != NULL) {
		memcpy(pem, data, (size_t)n);
		pem[n] = '\0';
	}
	BIO_free(b);
	return pem;
}

X509 *
tlsca_cert(const struct tlsca *ca)
{
	return ca->ca_cert;
}

EVP_PKEY *
tlsca_leaf_key(const struct tlsca *ca)
{
	return ca->leaf_key;
}

uint64_t
tlsca_minted(const struct tlsca *ca)
{
	return ca->minted;
}

uint64_t
tlsca_hits(const struct tlsca *ca)
{
	return ca->hits;
}

/* A DNS name as a certificate may carry it: letters, digits, '-', '_' and
 * dots, no empty label, no wildcard; or any text a2i_IPADDRESS takes. */
static bool
tlsca_dns_name_ok(const char *host, size_t n)
{
	if (n == 0 || n > TLSCA_HOST_MAX_BYTES || host[0] == '.' || host[n - 1] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = host[i];

		if (c == '.' ? host[i + 1] == '.' : !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
	}
	return true;
}

/* The subjectAltName of HOST, built as values, never parsed from text. */
static int
tlsca_san(X509 *x, const char *host)
{
	GENERAL_NAMES *names = sk_GENERAL_NAME_new_null();
	GENERAL_NAME *gn = GENERAL_NAME_new();
	ASN1_OCTET_STRING *ip = a2i_IPADDRESS(host);
	ASN1_IA5STRING *dns = NULL;
	int ok = 0;

	if (names == NULL || gn == NULL)
		goto out;
	if (ip != NULL) {
		GENERAL_NAME_set0_value(gn, GEN_IPADD, ip);
		ip = NULL;
	} else if ((dns = ASN1_IA5STRING_new()) != NULL &&
	    ASN1_STRING_set(dns, host, (int)strlen(host)) == 1) {
		GENERAL_NAME_set0_value(gn, GEN_DNS, dns);
		dns = NULL;
	} else {
		goto out;
	}
	if (sk_GENERAL_NAME_push(names, gn) == 0)
		goto out;
	gn = NULL;
	ok = X509_add1_ext_i2d(x, NID_subject_alt_name, names, 0, X509V3_ADD_DEFAULT) == 1;
out:
	ASN1_OCTET_STRING_free(ip);
	ASN1_IA5STRING_free(dns);
	GENERAL_NAME_free(gn);
	sk_GENERAL_NAME_pop_free(names, GENERAL_NAME_free);
	return ok ? 0 : -1;
}

/* A leaf for HOST; an address (IS_IP) is named in the SAN only, never in
 * a common name that a client could match as a DNS name. */
static X509 *
tlsca_mint(struct tlsca *ca, const char *host, bool is_ip)
{
	const char *cn = !is_ip && strlen(host) <= TLSCA_CN_MAX_BYTES ? host : NULL;
	X509 *x = X509_new();

	if (x == NULL || tlsca_frame(x, TLSCA_LEAF_DAYS) == -1 ||
	    tlsca_name(X509_get_subject_name(x), cn) == -1 ||
	    X509_set_issuer_name(x, X509_get_subject_name(ca->ca_cert)) != 1 ||
	    X509_set_pubkey(x, ca->leaf_key) != 1 || tlsca_san(x, host) == -1 ||
	    tlsca_ext(x, ca->ca_cert, NID_basic_constraints, "critical,CA:FALSE") == -1 ||
	    tlsca_ext(x, ca->ca_cert, NID_key_usage, "critical,digitalSignature") == -1 ||
	    tlsca_ext(x, ca->ca_cert, NID_ext_key_usage, "serverAuth") == -1 ||
	    tlsca_ext(x, ca->ca_cert, NID_authority_key_identifier, "keyid:always") == -1 ||
	    X509_sign(x, ca->ca_key, EVP_sha256()) == 0) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* The cache's slot for a new leaf: a free one, else the least recently used. */
static struct tlsca_leaf *
tlsca_slot(struct tlsca *ca)
{
	struct tlsca_leaf *lru;

	if (ca->nleaves < TLSCA_CACHE_MAX)
		return &ca->leaves[ca->nleaves++];
	lru = &ca->leaves[0];
	for (size_t i = 1; i < ca->nleaves; i++)
		if (ca->leaves[i].used < lru->used)
			lru = &ca->leaves[i];
	X509_free(lru->cert);
	lru->cert = NULL;
	return lru;
}

X509 *
tlsca_leaf(struct tlsca *ca, const char *host, char **err)
{
	time_t now = time(NULL);
	struct tlsca_leaf *l = NULL;
	ASN1_OCTET_STRING *ip;
	size_t n = strlen(host);
	bool is_ip;

	ca->asks++;
	for (size_t i = 0; i < ca->nleaves; i++)
		if (strcasecmp(ca->leaves[i].host, host) == 0) {
			l = &ca->leaves[i];
			break;
		}
	/* A leaf a day from its end is minted again. */
	if (l != NULL && l->expires - now > 86400) {
		l->used = ca->asks;
		ca->hits++;
		return l->cert;
	}
	if ((is_ip = (ip = a2i_IPADDRESS(host)) != NULL))
		ASN1_OCTET_STRING_free(ip);
	else if (!tlsca_dns_name_ok(host, n)) {
		ERR_clear_error();
		reason_set(err, "no certificate can name that host");
		return NULL;
	}
	if (l == NULL)
		l = tlsca_slot(ca);
	else
		X509_free(l->cert);
	if ((l->cert = tlsca_mint(ca, host, is_ip)) == NULL) {
		l->host[0] = '\0';
		l->used = 0;
		return tlsca_fail(err, "minting a certificate"), NULL;
	}
	snprintf(l->host, sizeof(l->host), "%s", host);
	l->expires = now + (time_t)TLSCA_LEAF_DAYS * 86400 - TLSCA_BACKDATE_S;
	l->used = ca->asks;
	ca->minted++;
	return l->cert;
}
