/* A sandbox's own certificate authority, for the endpoints whose TLS the
 * proxy terminates (corral-policy(5), "tls: terminate"): a key and a
 * self-signed certificate made when the sandbox is, held in the broker's
 * memory only, and leaf certificates minted from it per host on first use
 * and cached. The sandbox trusts the CA's certificate (its bundle holds
 * it); nothing else ever sees the key.
 *
 * Keys are EC P-256: a leaf costs one signature (tens of microseconds),
 * and every leaf of a sandbox shares one key, made with the CA, so that a
 * new host costs no key generation. Library-like: nothing here logs. */
#ifndef CORRAL_TLSCA_H
#define CORRAL_TLSCA_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#define TLSCA_CACHE_MAX 256             /* leaves kept, least recently used out */
#define TLSCA_CA_DAYS 365               /* the CA's validity (a sandbox outlives none) */
#define TLSCA_LEAF_DAYS 30              /* a leaf's, within the CA's; minted again after */
#define TLSCA_BACKDATE_S 3600           /* both start an hour early: clocks differ */
#define TLSCA_HOST_MAX_BYTES 253        /* a DNS name, or an address's text */

struct tlsca;

/* A new CA named after SANDBOX ("corral sandbox NAME"). NULL with a
 * one-line reason in *ERR. */
struct tlsca *tlsca_new(const char *sandbox, char **err);
/* Wipes the keys and frees everything; NULL is fine. */
void tlsca_free(struct tlsca *ca);

/* The CA's certificate as PEM text (malloc'd, NUL-ended), for the
 * sandbox's trust bundle; NULL when out of memory. */
char *tlsca_cert_pem(const struct tlsca *ca);
/* The CA's certificate (borrowed). */
X509 *tlsca_cert(const struct tlsca *ca);

/* The leaf for HOST (a DNS name, or an IPv4 or IPv6 address's text), from
 * the cache or minted now; borrowed: valid until TLSCA_CACHE_MAX other
 * hosts were asked for since, or tlsca_free. NULL with *ERR for a host
 * that is no name or address, or when minting fails. */
X509 *tlsca_leaf(struct tlsca *ca, const char *host, char **err);
/* The key of every leaf (borrowed). */
EVP_PKEY *tlsca_leaf_key(const struct tlsca *ca);

/* Counts since tlsca_new: leaves minted, and asked for from the cache. */
uint64_t tlsca_minted(const struct tlsca *ca);
uint64_t tlsca_hits(const struct tlsca *ca);

#endif
