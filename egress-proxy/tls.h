/* TLS ClientHello reader: finds the server name (SNI) in the first bytes a
 * client sends, so the proxy can decide on a connection before any byte
 * goes upstream. Pure: no I/O, no logging, no recursion; memory held is at
 * most one handshake message, never more than TLS_HELLO_MAX_BYTES.
 *
 * The hello may arrive in any number of TLS records (down to one byte per
 * record) and TCP segments: feed the bytes as they come, the reader keeps
 * its place and looks at each byte once. */
#ifndef CORRAL_TLS_H
#define CORRAL_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest ClientHello handshake message accepted, header included.
 * Post-quantum key shares (X25519MLKEM768: 1,216 bytes) already push real
 * hellos past one packet; 64 KiB leaves room and still bounds memory. */
#define TLS_HELLO_MAX_BYTES (64 * 1024)
/* Most raw bytes (record headers included) read while looking for the end
 * of the hello; past this the client is refused. Bounds hellos cut into
 * absurdly small records. */
#define TLS_INPUT_MAX_BYTES (2 * TLS_HELLO_MAX_BYTES)
/* Largest TLS plaintext record payload (RFC 8446 section 5.1: 2^14). */
#define TLS_RECORD_PAYLOAD_MAX_BYTES 16384
/* Longest host name accepted in SNI, without the trailing dot. */
#define TLS_SNI_NAME_MAX_BYTES 253
/* Longest label of that name. */
#define TLS_SNI_LABEL_MAX_BYTES 63

/* What the reader concluded so far. Every status but NEED_MORE is final. */
enum tls_status {
	TLS_NEED_MORE,	/* a ClientHello so far; feed more bytes */
	TLS_FOUND,	/* a valid hello with one valid host name: see name */
	TLS_NO_SNI,	/* a valid hello without a server_name extension */
	TLS_NOT_TLS,	/* the first byte cannot start TLS (e.g. an HTTP request) */
	TLS_ERROR,	/* TLS-like but refused: see error */
};

/* Why a hello was refused; each has its own text in tls_strerror(). */
enum tls_error {
	TLS_ERR_NONE,
	TLS_ERR_SSLV2_HELLO,
	TLS_ERR_RECORD_TYPE,
	TLS_ERR_RECORD_VERSION,
	TLS_ERR_RECORD_LENGTH,
	TLS_ERR_HANDSHAKE_TYPE,
	TLS_ERR_HELLO_TOO_LARGE,
	TLS_ERR_INPUT_TOO_LARGE,
	TLS_ERR_HELLO_VERSION,
	TLS_ERR_LENGTH_OVERFLOW,
	TLS_ERR_TRAILING_BYTES,
	TLS_ERR_FIELD_INVALID,
	TLS_ERR_DUPLICATE_EXTENSION,
	TLS_ERR_SNI_MALFORMED,
	TLS_ERR_SNI_NAME_TYPE,
	TLS_ERR_SNI_TWO_NAMES,
	TLS_ERR_SNI_EMPTY,
	TLS_ERR_SNI_NUL,
	TLS_ERR_SNI_BAD_BYTE,
	TLS_ERR_SNI_TOO_LONG,
	TLS_ERR_SNI_BAD_LABEL,
	TLS_ERR_SNI_IP_LITERAL,
	TLS_ERR_NOMEM,
};

/* The outcome of reading a hello. */
struct tls_hello_info {
	enum tls_error error;		/* TLS_ERR_NONE unless status is TLS_ERROR */
	bool ech_present;		/* encrypted_client_hello (0xfe0d) was offered */
	bool alpn_h2;			/* its ALPN offers h2 */
	size_t name_len;		/* bytes in name, 0 unless TLS_FOUND */
	char name[TLS_SNI_NAME_MAX_BYTES + 1];	/* lower case, no trailing dot, NUL-terminated */
};

struct tls_reader;

/* A reader at the start of a connection; NULL if out of memory. */
struct tls_reader *tls_reader_new(void);
/* Frees R and the hello bytes it holds (NULL is fine). */
void tls_reader_free(struct tls_reader *r);
/* Reads the next LEN bytes the client sent (only the new ones) and fills
 * INFO. Once the status is final, later calls return it again unchanged and
 * ignore their bytes; the reader then holds no hello bytes. */
enum tls_status tls_reader_feed(struct tls_reader *r, const uint8_t *data, size_t len,
    struct tls_hello_info *info);

/* Reads a whole buffer at once with a fresh reader (NEED_MORE: it ends early). */
enum tls_status tls_parse_hello(const uint8_t *data, size_t len, struct tls_hello_info *info);
/* From the first byte alone: NEED_MORE (may be TLS), NOT_TLS, or ERROR
 * (SSLv2-style hello or a TLS record that is not a handshake). */
enum tls_status tls_classify_first_byte(uint8_t first, enum tls_error *error);

/* A short English description of E, for logs and denials. */
const char *tls_strerror(enum tls_error e);
/* The status as a word, for logs and tests. */
const char *tls_status_name(enum tls_status s);

#endif
