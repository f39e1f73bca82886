/* Does the host's firewall let the fence work: the ruleset, as
 * libnftables' JSON, read into a small tree, then the fence's flows
 * followed through every base chain on their path (see fwcheck.h).
 *
 * Why JSON rather than nft's text: the JSON schema (libnftables-json(5)) is
 * fixed and says what each expression is (a payload field, a meta key, a
 * set, a prefix), while the text grammar is the whole nft language and
 * changes with every release. There is no JSON library in the tree, and
 * this needs only a reader: objects, arrays, strings (kept raw, escapes
 * unexpanded; nftables' names and values never need them), integers. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <nftables/libnftables.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/monitor/fwcheck.h"

/* The deepest JSON nesting read (nftables' own is about a dozen). */
#define FJ_DEPTH_MAX 64
/* The first allocation of nodes; it doubles as needed. */
#define FJ_NODES_FIRST 1024
/* Jumps followed from a base chain; the kernel's own limit is 16. */
#define FW_JUMP_DEPTH_MAX 16
/* Rules looked at for one judgement, at most (each chain walked scans the
 * rule list): a budget, not a limit of nftables, so an enormous ruleset
 * ends as "unknown" in well under a second rather than slowly. */
#define FW_RULE_STEPS_MAX 50000000UL
/* iptables-legacy's tables, invisible to nftables. */
#define FW_LEGACY_TABLES_PATH "/proc/net/ip_tables_names"
#define FW_LEGACY_NAMES_MAX_BYTES 128
/* Protocol numbers in the flows. */
#define FW_PROTO_TCP 6
#define FW_PROTO_UDP 17
/* The Ethernet type of IPv4, as `meta protocol` may show it. */
#define FW_ETHERTYPE_IPV4 0x0800
/* nfproto's number for IPv4 (NFPROTO_IPV4). */
#define FW_NFPROTO_IPV4 2
/* A family, table or chain name as put in a reason (longer ones are cut),
 * and "table FAMILY TABLE, chain CHAIN". */
#define FW_NAME_MAX_BYTES 64
#define FW_WHERE_MAX_BYTES 160

/* ---- The JSON reader ---- */

enum fj_type { FJ_NULL, FJ_BOOL, FJ_NUMBER, FJ_STRING, FJ_ARRAY, FJ_OBJECT };

/* One value; an object's members are values with a key. Indices, not
 * pointers, since the array grows. */
struct fj_node {
	enum fj_type type;
	int child;              /* first element or member, -1 if none */
	int next;               /* next sibling, -1 if last */
	size_t key_ofs, key_len;  /* member name in the text (raw) */
	size_t ofs, len;        /* string contents in the text (raw) */
	long long num;
};

struct fj_doc {
	const char *text;
	size_t len, pos;
	struct fj_node *n;
	size_t count, cap;
	int depth;
	const char *error;      /* NULL while the text reads well */
};

static int fj_value(struct fj_doc *d);

static void
fj_space(struct fj_doc *d)
{
	while (d->pos < d->len && strchr(" \t\r\n", d->text[d->pos]) != NULL)
		d->pos++;
}

/* A new node of TYPE; -1 when out of memory. */
static int
fj_node_new(struct fj_doc *d, enum fj_type type)
{
	struct fj_node *grown;
	size_t cap;

	if (d->count == d->cap) {
		cap = d->cap == 0 ? FJ_NODES_FIRST : d->cap * 2;
		grown = realloc(d->n, cap * sizeof(*grown));
		if (grown == NULL) {
			d->error = "out of memory";
			return -1;
		}
		d->n = grown;
		d->cap = cap;
	}
	memset(&d->n[d->count], 0, sizeof(d->n[0]));
	d->n[d->count].type = type;
	d->n[d->count].child = d->n[d->count].next = -1;
	return (int)d->count++;
}

/* A string's raw contents after its opening quote, into *OFS and *LEN. */
static int
fj_string_body(struct fj_doc *d, size_t *ofs, size_t *len)
{
	size_t start = ++d->pos;

	while (d->pos < d->len && d->text[d->pos] != '"') {
		if ((unsigned char)d->text[d->pos] < 0x20)
			break;
		d->pos += d->text[d->pos] == '\\' ? 2 : 1;
	}
	if (d->pos >= d->len || d->text[d->pos] != '"') {
		d->error = "a string does not end";
		return -1;
	}
	*ofs = start;
	*len = d->pos++ - start;
	return 0;
}

/* An integer; a fraction or exponent is read and dropped. */
static int
fj_number(struct fj_doc *d)
{
	int i = fj_node_new(d, FJ_NUMBER);
	int neg = 0;
	long long v = 0;

	if (i == -1)
		return -1;
	if (d->text[d->pos] == '-') {
		neg = 1;
		d->pos++;
	}
	if (d->pos >= d->len || d->text[d->pos] < '0' || d->text[d->pos] > '9') {
		d->error = "a number has no digits";
		return -1;
	}
	while (d->pos < d->len && d->text[d->pos] >= '0' && d->text[d->pos] <= '9') {
		if (v < (1LL << 53))
			v = v * 10 + (d->text[d->pos] - '0');
		d->pos++;
	}
	while (d->pos < d->len && strchr(".eE+-0123456789", d->text[d->pos]) != NULL)
		d->pos++;
	d->n[i].num = neg ? -v : v;
	return i;
}

/* The literal WORD (true, false, null) as a node of TYPE. */
static int
fj_word(struct fj_doc *d, const char *word, enum fj_type type)
{
	size_t n = strlen(word);

	if (d->len - d->pos < n || memcmp(d->text + d->pos, word, n) != 0) {
		d->error = "an unknown word";
		return -1;
	}
	d->pos += n;
	return fj_node_new(d, type);
}

/* The elements (or, with KEYED, the members) of a container node I, up to
 * CLOSE. */
static int
fj_items(struct fj_doc *d, int i, char close, int keyed)
{
	int last = -1, v;
	size_t kofs = 0, klen = 0;

	fj_space(d);
	if (d->pos < d->len && d->text[d->pos] == close) {
		d->pos++;
		return i;
	}
	for (;;) {
		fj_space(d);
		if (keyed) {
			if (d->pos >= d->len || d->text[d->pos] != '"' ||
			    fj_string_body(d, &kofs, &klen) == -1)
				break;
			fj_space(d);
			if (d->pos >= d->len || d->text[d->pos++] != ':')
				break;
		}
		v = fj_value(d);
		if (v == -1)
			return -1;
		d->n[v].key_ofs = kofs;
		d->n[v].key_len = klen;
		if (last == -1)
			d->n[i].child = v;
		else
			d->n[last].next = v;
		last = v;
		fj_space(d);
		if (d->pos < d->len && d->text[d->pos] == ',') {
			d->pos++;
			continue;
		}
		if (d->pos < d->len && d->text[d->pos] == close) {
			d->pos++;
			return i;
		}
		break;
	}
	if (d->error == NULL)
		d->error = keyed ? "an object is malformed" : "an array is malformed";
	return -1;
}

/* A container: an array, or an object when KEYED. */
static int
fj_container(struct fj_doc *d, int keyed)
{
	int i, rc;

	if (++d->depth > FJ_DEPTH_MAX) {
		d->error = "nested too deep";
		return -1;
	}
	d->pos++;
	i = fj_node_new(d, keyed ? FJ_OBJECT : FJ_ARRAY);
	rc = i == -1 ? -1 : fj_items(d, i, keyed ? '}' : ']', keyed);
	d->depth--;
	return rc;
}

static int
fj_value(struct fj_doc *d)
{
	int i;

	fj_space(d);
	if (d->pos >= d->len) {
		d->error = "the text ends early";
		return -1;
	}
	switch (d->text[d->pos]) {
	case '{': return fj_container(d, 1);
	case '[': return fj_container(d, 0);
	case 't': return fj_word(d, "true", FJ_BOOL);
	case 'f': return fj_word(d, "false", FJ_BOOL);
	case 'n': return fj_word(d, "null", FJ_NULL);
	case '"':
		i = fj_node_new(d, FJ_STRING);
		if (i == -1 || fj_string_body(d, &d->n[i].ofs, &d->n[i].len) == -1)
			return -1;
		return i;
	default:
		return fj_number(d);
	}
}

/* The member KEY of object node I, or -1. */
static int
fj_get(const struct fj_doc *d, int i, const char *key)
{
	size_t n = strlen(key);
	int c;

	if (i < 0 || d->n[i].type != FJ_OBJECT)
		return -1;
	for (c = d->n[i].child; c != -1; c = d->n[c].next)
		if (d->n[c].key_len == n && memcmp(d->text + d->n[c].key_ofs, key, n) == 0)
			return c;
	return -1;
}

/* 1 when node I is the string S. */
static int
fj_is_str(const struct fj_doc *d, int i, const char *s)
{
	size_t n = strlen(s);

	return i >= 0 && d->n[i].type == FJ_STRING && d->n[i].len == n &&
	    memcmp(d->text + d->n[i].ofs, s, n) == 0;
}

/* 1 when strings nodes A and B hold the same text. */
static int
fj_same_str(const struct fj_doc *d, int a, int b)
{
	return a >= 0 && b >= 0 && d->n[a].type == FJ_STRING && d->n[b].type == FJ_STRING &&
	    d->n[a].len == d->n[b].len &&
	    memcmp(d->text + d->n[a].ofs, d->text + d->n[b].ofs, d->n[a].len) == 0;
}

/* 1 when member I's key is KEY. */
static int
fj_key_is(const struct fj_doc *d, int i, const char *key)
{
	size_t n = strlen(key);

	return d->n[i].key_len == n && memcmp(d->text + d->n[i].key_ofs, key, n) == 0;
}

/* Copies string node I into OUT (cut to SIZE), for reasons. */
static const char *
fj_copy(const struct fj_doc *d, int i, char *out, size_t size)
{
	size_t n;

	if (i < 0 || d->n[i].type != FJ_STRING) {
		snprintf(out, size, "?");
		return out;
	}
	n = d->n[i].len < size - 1 ? d->n[i].len : size - 1;
	memcpy(out, d->text + d->n[i].ofs, n);
	out[n] = '\0';
	return out;
}

/* ---- Flows and matches ---- */

/* Three-valued: does an expression hold for every packet of a flow? */
enum fw_tri { FW_NO, FW_MAYBE, FW_YES };

/* One kind of packet the fence needs to pass. */
struct fw_flow {
	int proto;              /* FW_PROTO_TCP or FW_PROTO_UDP */
	unsigned int dport;     /* 0: any */
	unsigned int sport;     /* 0: any */
	int daddr_pool;         /* daddr is in the pool (else anywhere) */
	int inbound;            /* from a sandbox interface, ct state new (else a
	                         * reply to one, ct state established) */
	char text[FW_NAME_MAX_BYTES];  /* what it is, for reasons */
};

static enum fw_tri
fw_not(enum fw_tri v)
{
	return v == FW_YES ? FW_NO : v == FW_NO ? FW_YES : FW_MAYBE;
}

/* Folds V into an "any of" result. */
static enum fw_tri
fw_any(enum fw_tri acc, enum fw_tri v)
{
	if (acc == FW_YES || v == FW_YES)
		return FW_YES;
	return acc == FW_MAYBE || v == FW_MAYBE ? FW_MAYBE : FW_NO;
}

struct fw_judge;
/* A function that says whether one value (not a set) holds for the flow. */
typedef enum fw_tri (*fw_value_fn)(const struct fw_judge *j, int value);

struct fw_judge {
	const struct fj_doc *d;
	const struct fwcheck_target *t;
	const struct fw_flow *f;
	const int *rule_idx;    /* every rule object, in order */
	size_t n_rules;
	int family, table;      /* string nodes of the base chain being judged */
	int policy_drop;        /* the base chain's policy */
	unsigned long steps;    /* rules looked at so far */
	enum fwcheck_verdict verdict;
	char reason[FWCHECK_REASON_MAX_BYTES];
};

/* Applies FN to VALUE, or to each element when VALUE is a set or a list. */
static enum fw_tri
fw_each(const struct fw_judge *j, int value, fw_value_fn fn)
{
	const struct fj_doc *d = j->d;
	int set = fj_get(d, value, "set"), c, elem;
	enum fw_tri acc = FW_NO;

	if (value < 0)
		return FW_MAYBE;
	if (set >= 0 && d->n[set].type == FJ_ARRAY)
		value = set;
	else if (set >= 0)
		return FW_MAYBE;          /* a named set: "@name" */
	if (d->n[value].type != FJ_ARRAY)
		return fn(j, value);
	for (c = d->n[value].child; c != -1; c = d->n[c].next) {
		/* A set element with a timeout or comment: {"elem": {"val": ...}}. */
		elem = fj_get(d, c, "elem");
		acc = fw_any(acc, elem < 0 ? fn(j, c) : fw_each(j, fj_get(d, elem, "val"), fn));
	}
	return acc;
}

/* A port (number or range) against the flow's port P (0: any). */
static enum fw_tri
fw_port(const struct fj_doc *d, int value, unsigned int p)
{
	int range = fj_get(d, value, "range"), lo, hi;

	if (value >= 0 && d->n[value].type == FJ_NUMBER)
		return p == 0 ? FW_MAYBE : d->n[value].num == (long long)p ? FW_YES : FW_NO;
	if (range < 0 || d->n[range].type != FJ_ARRAY)
		return FW_MAYBE;
	lo = d->n[range].child;
	hi = lo >= 0 ? d->n[lo].next : -1;
	if (hi < 0 || d->n[lo].type != FJ_NUMBER || d->n[hi].type != FJ_NUMBER)
		return FW_MAYBE;
	if (d->n[lo].num <= 0 && d->n[hi].num >= 65535)
		return FW_YES;
	if (p == 0)
		return FW_MAYBE;
	return d->n[lo].num <= (long long)p && (long long)p <= d->n[hi].num ? FW_YES : FW_NO;
}

static enum fw_tri
fw_dport(const struct fw_judge *j, int value)
{
	return fw_port(j->d, value, j->f->dport);
}

static enum fw_tri
fw_sport(const struct fw_judge *j, int value)
{
	return fw_port(j->d, value, j->f->sport);
}

/* An IPv4 prefix from string node I ("a.b.c.d"); -1 if it is not one. */
static int
fw_addr(const struct fj_doc *d, int i, uint32_t *addr)
{
	char text[INET_ADDRSTRLEN];
	struct in_addr a;

	if (i < 0 || d->n[i].type != FJ_STRING || d->n[i].len >= sizeof(text))
		return -1;
	fj_copy(d, i, text, sizeof(text));
	if (inet_pton(AF_INET, text, &a) != 1)
		return -1;
	*addr = ntohl(a.s_addr);
	return 0;
}

static uint32_t
fw_mask(unsigned int len)
{
	return len == 0 ? 0 : len >= 32 ? 0xffffffffU : ~((1U << (32 - len)) - 1);
}

/* Prefix A/ALEN against the flow's addresses, the pool or (ANY) all. */
static enum fw_tri
fw_prefix_vs(const struct fw_judge *j, uint32_t a, unsigned int alen, int any)
{
	unsigned int plen = any ? 0 : j->t->pool_prefix;
	uint32_t p = any ? 0 : j->t->pool_addr;
	unsigned int common = alen < plen ? alen : plen;

	if (((a ^ p) & fw_mask(common)) != 0)
		return FW_NO;                 /* disjoint */
	return alen <= plen ? FW_YES : FW_MAYBE;
}

/* An address, prefix or range against the pool (or, ANY, everything). */
static enum fw_tri
fw_addr_value(const struct fw_judge *j, int value, int any)
{
	const struct fj_doc *d = j->d;
	int prefix = fj_get(d, value, "prefix");
	uint32_t a;

	if (fw_addr(d, value, &a) == 0)
		return fw_prefix_vs(j, a, 32, any);
	if (prefix >= 0 && fw_addr(d, fj_get(d, prefix, "addr"), &a) == 0 &&
	    fj_get(d, prefix, "len") >= 0 && d->n[fj_get(d, prefix, "len")].type == FJ_NUMBER)
		return fw_prefix_vs(j, a, (unsigned int)d->n[fj_get(d, prefix, "len")].num, any);
	return FW_MAYBE;                      /* ranges, IPv6, named sets */
}

static enum fw_tri
fw_saddr(const struct fw_judge *j, int value)
{
	/* Inbound: a sandbox's address; outbound: the gateway's; both in the pool. */
	return fw_addr_value(j, value, 0);
}

static enum fw_tri
fw_daddr(const struct fw_judge *j, int value)
{
	return fw_addr_value(j, value, !j->f->daddr_pool);
}

/* A layer-4 protocol, by name or number. */
static enum fw_tri
fw_l4proto(const struct fw_judge *j, int value)
{
	const struct fj_doc *d = j->d;
	const char *name = j->f->proto == FW_PROTO_TCP ? "tcp" : "udp";

	if (d->n[value].type == FJ_NUMBER)
		return d->n[value].num == j->f->proto ? FW_YES : FW_NO;
	if (d->n[value].type == FJ_STRING)
		return fj_is_str(d, value, name) ? FW_YES : FW_NO;
	return FW_MAYBE;
}

static enum fw_tri
fw_nfproto(const struct fw_judge *j, int value)
{
	const struct fj_doc *d = j->d;

	if (d->n[value].type == FJ_NUMBER)
		return d->n[value].num == FW_NFPROTO_IPV4 ? FW_YES : FW_NO;
	return d->n[value].type == FJ_STRING ? (fj_is_str(d, value, "ipv4") ? FW_YES : FW_NO) :
	    FW_MAYBE;
}

static enum fw_tri
fw_ethertype(const struct fw_judge *j, int value)
{
	const struct fj_doc *d = j->d;

	if (d->n[value].type == FJ_NUMBER)
		return d->n[value].num == FW_ETHERTYPE_IPV4 ? FW_YES : FW_NO;
	return d->n[value].type == FJ_STRING ? (fj_is_str(d, value, "ip") ? FW_YES : FW_NO) :
	    FW_MAYBE;
}

/* A ct state: the flow's first packet is "new", a reply "established". */
static enum fw_tri
fw_ct_state(const struct fw_judge *j, int value)
{
	const struct fj_doc *d = j->d;

	if (d->n[value].type != FJ_STRING)
		return FW_MAYBE;
	return fj_is_str(d, value, j->f->inbound ? "new" : "established") ? FW_YES : FW_NO;
}

/* An interface name (a trailing '*' is a wildcard) against the sandbox
 * interfaces' prefix: "lo" is never one of them. */
static enum fw_tri
fw_ifname(const struct fw_judge *j, int value)
{
	const struct fj_doc *d = j->d;
	const char *ours = j->t->ifname_prefix, *s;
	size_t n, k = ours != NULL ? strlen(ours) : 0;
	int wild;

	if (d->n[value].type != FJ_STRING)
		return FW_MAYBE;
	s = d->text + d->n[value].ofs;
	n = d->n[value].len;
	wild = n > 0 && s[n - 1] == '*';
	if (fj_is_str(d, value, "lo"))
		return FW_NO;
	if (ours == NULL)
		return FW_MAYBE;
	if (wild && n - 1 <= k)              /* "crs*", "c*", "*": all of ours? */
		return memcmp(s, ours, n - 1) == 0 ? FW_YES : FW_NO;
	/* A longer pattern or a name: some of ours at most, when it starts so. */
	return n >= k && memcmp(s, ours, k) == 0 ? FW_MAYBE : FW_NO;
}

static enum fw_tri
fw_ifgroup(const struct fw_judge *j, int value)
{
	const struct fj_doc *d = j->d;

	if (j->t->ifgroup == 0 || d->n[value].type != FJ_NUMBER)
		return FW_MAYBE;
	return d->n[value].num == (long long)j->t->ifgroup ? FW_YES : FW_NO;
}

/* The flow's side of a meta KEY: its value function, or NULL (unknown). */
static fw_value_fn
fw_meta_fn(const struct fw_judge *j, int key)
{
	const struct fj_doc *d = j->d;
	int in = j->f->inbound;

	if (fj_is_str(d, key, "l4proto"))
		return fw_l4proto;
	if (fj_is_str(d, key, "nfproto"))
		return fw_nfproto;
	if (fj_is_str(d, key, "protocol"))
		return fw_ethertype;
	/* The interface on the sandbox's side: iif inbound, oif outbound. */
	if ((in && (fj_is_str(d, key, "iifname") || fj_is_str(d, key, "iif"))) ||
	    (!in && (fj_is_str(d, key, "oifname") || fj_is_str(d, key, "oif"))))
		return fw_ifname;
	if ((in && fj_is_str(d, key, "iifgroup")) || (!in && fj_is_str(d, key, "oifgroup")))
		return fw_ifgroup;
	return NULL;
}

/* A payload field: its value function; *NEVER set when the match itself
 * implies another protocol (an ip6 or icmp field, tcp for a UDP flow). */
static fw_value_fn
fw_payload_fn(const struct fw_judge *j, int payload, int *never)
{
	const struct fj_doc *d = j->d;
	int proto = fj_get(d, payload, "protocol"), field = fj_get(d, payload, "field");
	int l4 = fj_is_str(d, proto, "tcp") || fj_is_str(d, proto, "udp");

	if (fj_is_str(d, proto, "ip")) {
		if (fj_is_str(d, field, "saddr"))
			return fw_saddr;
		if (fj_is_str(d, field, "daddr"))
			return fw_daddr;
		return fj_is_str(d, field, "protocol") ? fw_l4proto : NULL;
	}
	if (l4 && !fj_is_str(d, proto, j->f->proto == FW_PROTO_TCP ? "tcp" : "udp")) {
		*never = 1;
		return NULL;
	}
	if (l4 || fj_is_str(d, proto, "th")) {
		if (fj_is_str(d, field, "dport"))
			return fw_dport;
		return fj_is_str(d, field, "sport") ? fw_sport : NULL;
	}
	*never = fj_is_str(d, proto, "ip6") || fj_is_str(d, proto, "icmp") ||
	    fj_is_str(d, proto, "icmpv6") || fj_is_str(d, proto, "sctp") ||
	    fj_is_str(d, proto, "dccp") || fj_is_str(d, proto, "udplite") ||
	    fj_is_str(d, proto, "esp") || fj_is_str(d, proto, "ah") ||
	    fj_is_str(d, proto, "igmp") || fj_is_str(d, proto, "arp");
	return NULL;
}

/* The value function of a match's left side; NULL (with *NEVER 0) when the
 * left side is not understood. */
static fw_value_fn
fw_left_fn(const struct fw_judge *j, int left, int *never)
{
	const struct fj_doc *d = j->d;
	int meta = fj_get(d, left, "meta"), payload = fj_get(d, left, "payload");
	int ct = fj_get(d, left, "ct");

	*never = 0;
	if (meta >= 0)
		return fw_meta_fn(j, fj_get(d, meta, "key"));
	if (payload >= 0)
		return fw_payload_fn(j, payload, never);
	if (ct >= 0 && fj_is_str(d, fj_get(d, ct, "key"), "state"))
		return fw_ct_state;
	return NULL;
}

/* A {"match": {op, left, right}} against the flow. */
static enum fw_tri
fw_match(const struct fw_judge *j, int m)
{
	const struct fj_doc *d = j->d;
	int op = fj_get(d, m, "op"), never;
	fw_value_fn fn = fw_left_fn(j, fj_get(d, m, "left"), &never);
	int right = fj_get(d, m, "right");
	enum fw_tri v;

	if (never)
		return FW_NO;
	if (fn == NULL || right < 0)
		return FW_MAYBE;
	v = fw_each(j, right, fn);
	if (fj_is_str(d, op, "==") || fj_is_str(d, op, "in"))
		return v;
	return fj_is_str(d, op, "!=") ? fw_not(v) : FW_MAYBE;
}

/* ---- Walking chains ---- */

/* What happens to the flow's packets in a chain, as flags: several hold
 * when a rule's condition holds for some packets only. */
#define FW_OUT_ACCEPTED 0x1u   /* some or all are accepted */
#define FW_OUT_FELL 0x2u       /* some or all leave the chain without a verdict
                                * (return, or its end): the caller goes on */
#define FW_OUT_NEXT 0x4u       /* some or all go on to the chain's next rule */
#define FW_OUT_DROP 0x8u       /* some may be dropped: judge->reason says where */
#define FW_OUT_UNKNOWN 0x10u   /* cannot tell: judge->reason says why */
#define FW_OUT_STOP (FW_OUT_DROP | FW_OUT_UNKNOWN)

/* What a rule does when it matches. */
enum fw_act { FW_ACT_NONE, FW_ACT_ACCEPT, FW_ACT_DROP, FW_ACT_JUMP, FW_ACT_GOTO,
	FW_ACT_RETURN, FW_ACT_OTHER, FW_ACT_VMAP };

static unsigned int fw_walk(struct fw_judge *j, int chain_name, int depth);

/* Sets J's verdict (the first one set stays) and reason. */
static void __attribute__((format(printf, 3, 4)))
fw_note(struct fw_judge *j, enum fwcheck_verdict v, const char *fmt, ...)
{
	va_list ap;

	if (j->verdict != FWCHECK_OK)
		return;
	j->verdict = v;
	va_start(ap, fmt);
	vsnprintf(j->reason, sizeof(j->reason), fmt, ap);
	va_end(ap);
}

/* "table inet filter, chain input" into OUT, for reasons. */
static const char *
fw_where(const struct fw_judge *j, int chain_name, char *out, size_t size)
{
	char fam[FW_NAME_MAX_BYTES], table[FW_NAME_MAX_BYTES], chain[FW_NAME_MAX_BYTES];

	snprintf(out, size, "table %s %s, chain %s", fj_copy(j->d, j->family, fam, sizeof(fam)),
	    fj_copy(j->d, j->table, table, sizeof(table)),
	    fj_copy(j->d, chain_name, chain, sizeof(chain)));
	return out;
}

/* The action of statement S (a member of a rule's expr array element). */
static enum fw_act
fw_stmt_act(const struct fj_doc *d, int s)
{
	static const char *const nat[] = { "dnat", "snat", "masquerade", "redirect", NULL };
	size_t i;

	if (fj_key_is(d, s, "accept"))
		return FW_ACT_ACCEPT;
	if (fj_key_is(d, s, "drop") || fj_key_is(d, s, "reject"))
		return FW_ACT_DROP;
	if (fj_key_is(d, s, "jump"))
		return FW_ACT_JUMP;
	if (fj_key_is(d, s, "goto"))
		return FW_ACT_GOTO;
	if (fj_key_is(d, s, "return"))
		return FW_ACT_RETURN;
	if (fj_key_is(d, s, "vmap"))
		return FW_ACT_VMAP;
	if (fj_key_is(d, s, "queue"))
		return FW_ACT_OTHER;
	/* A nat statement ends the chain's evaluation, as an accept does. */
	for (i = 0; nat[i] != NULL; i++)
		if (fj_key_is(d, s, nat[i]))
			return FW_ACT_ACCEPT;
	/* An iptables-nft target: REJECT and DROP drop. */
	if (fj_key_is(d, s, "xt") && fj_is_str(d, fj_get(d, s, "type"), "target") &&
	    (fj_is_str(d, fj_get(d, s, "name"), "REJECT") ||
	    fj_is_str(d, fj_get(d, s, "name"), "DROP")))
		return FW_ACT_DROP;
	return FW_ACT_NONE;
}

/* Whether statement S, which acts on nothing, is a condition: matches,
 * and limits, quotas and iptables-nft matches (taken as "may hold"). */
static enum fw_tri
fw_stmt_cond(const struct fw_judge *j, int s)
{
	const struct fj_doc *d = j->d;

	if (fj_key_is(d, s, "match"))
		return fw_match(j, s);
	if (fj_key_is(d, s, "limit") || fj_key_is(d, s, "quota") ||
	    fj_key_is(d, s, "xt") || fj_key_is(d, s, "meter"))
		return FW_MAYBE;
	return FW_YES;   /* counter, log, mangle, notrack, ...: no condition */
}

/* A rule's condition (all its matches) and its acting statement (*ACT_STMT,
 * -1 for none). */
static enum fw_tri
fw_rule_scan(const struct fw_judge *j, int expr, int *act_stmt, enum fw_act *act)
{
	const struct fj_doc *d = j->d;
	enum fw_tri cond = FW_YES, c;
	int e, s;

	*act_stmt = -1;
	*act = FW_ACT_NONE;
	for (e = expr >= 0 ? d->n[expr].child : -1; e != -1; e = d->n[e].next) {
		s = d->n[e].child;           /* the element's one member */
		if (s < 0)
			continue;
		*act = fw_stmt_act(d, s);
		if (*act != FW_ACT_NONE) {
			*act_stmt = s;
			break;
		}
		c = fw_stmt_cond(j, s);
		if (c == FW_NO)
			return FW_NO;
		if (c == FW_MAYBE)
			cond = FW_MAYBE;
	}
	return cond;
}

/* A drop the flow reaches (all of it when SURE). */
static unsigned int
fw_drop(struct fw_judge *j, int chain_name, int handle, int sure)
{
	char where[FW_WHERE_MAX_BYTES];

	fw_note(j, FWCHECK_AT_RISK, "%s: rule (handle %lld) %s the sandboxes' %s",
	    fw_where(j, chain_name, where, sizeof(where)),
	    handle >= 0 && j->d->n[handle].type == FJ_NUMBER ? j->d->n[handle].num : -1LL,
	    sure ? "drops" : "may drop", j->f->text);
	return FW_OUT_DROP;
}

/* The outcome in the calling chain of a jump (IS_GOTO 0) or goto to the
 * chain named by STMT's target, made by rule HANDLE of CHAIN at DEPTH. */
static unsigned int
fw_follow(struct fw_judge *j, int chain, int handle, int stmt, int depth, int is_goto)
{
	char where[FW_WHERE_MAX_BYTES], target_name[FW_NAME_MAX_BYTES];
	int target = fj_get(j->d, stmt, "target");
	unsigned int out;

	if (depth >= FW_JUMP_DEPTH_MAX) {
		fw_note(j, FWCHECK_UNKNOWN, "%s: jumps nest deeper than %d",
		    fw_where(j, target, where, sizeof(where)), FW_JUMP_DEPTH_MAX);
		return FW_OUT_UNKNOWN;
	}
	out = fw_walk(j, target, depth + 1);
	if ((out & FW_OUT_STOP) || !(out & FW_OUT_FELL))
		return out;
	out &= ~FW_OUT_FELL;
	/* After a jump, what falls off the target goes on here. */
	if (!is_goto)
		return out | FW_OUT_NEXT;
	/* After a goto it never comes back: it leaves this chain too, and in a
	 * base chain meets the policy. */
	if (depth > 0)
		return out | FW_OUT_FELL;
	if (!j->policy_drop)
		return out | FW_OUT_ACCEPTED;
	fw_note(j, FWCHECK_AT_RISK, "%s: rule (handle %lld) goes to chain %s, which does "
	    "not accept all the sandboxes' %s, and the policy drops the rest",
	    fw_where(j, chain, where, sizeof(where)),
	    handle >= 0 ? j->d->n[handle].num : -1LL,
	    fj_copy(j->d, target, target_name, sizeof(target_name)), j->f->text);
	return FW_OUT_DROP;
}

/* The outcome of rule RULE of CHAIN, whose acting statement is STMT (ACT),
 * when its condition is COND (FW_MAYBE: for some packets; the others go on
 * to the next rule). */
static unsigned int
fw_act_on(struct fw_judge *j, int chain, int rule, int stmt, enum fw_act act,
    enum fw_tri cond, int depth)
{
	int handle = fj_get(j->d, rule, "handle");
	unsigned int out;
	char where[FW_WHERE_MAX_BYTES];

	switch (act) {
	case FW_ACT_NONE:
		return FW_OUT_NEXT;
	case FW_ACT_ACCEPT:
		out = FW_OUT_ACCEPTED;
		break;
	case FW_ACT_DROP:
		return fw_drop(j, chain, handle, cond == FW_YES);
	case FW_ACT_RETURN:
		out = FW_OUT_FELL;
		break;
	case FW_ACT_JUMP:
	case FW_ACT_GOTO:
		out = fw_follow(j, chain, handle, stmt, depth, act == FW_ACT_GOTO);
		break;
	default:
		fw_note(j, FWCHECK_UNKNOWN, "%s: rule (handle %lld) sends the sandboxes' %s "
		    "where fwcheck cannot follow (queue or a verdict map)",
		    fw_where(j, chain, where, sizeof(where)),
		    handle >= 0 ? j->d->n[handle].num : -1LL, j->f->text);
		return FW_OUT_UNKNOWN;
	}
	return cond == FW_YES || (out & FW_OUT_STOP) ? out : out | FW_OUT_NEXT;
}

/* 1 when rule object R belongs to the chain named CHAIN of the table
 * being judged. */
static int
fw_rule_in(const struct fw_judge *j, int r, int chain)
{
	const struct fj_doc *d = j->d;

	return fj_same_str(d, fj_get(d, r, "chain"), chain) &&
	    fj_same_str(d, fj_get(d, r, "table"), j->table) &&
	    fj_same_str(d, fj_get(d, r, "family"), j->family);
}

/* 1 when the table being judged has a chain named NAME. */
static int
fw_chain_exists(const struct fw_judge *j, int name)
{
	const struct fj_doc *d = j->d;
	int c, chain;

	for (c = d->n[fj_get(d, 0, "nftables")].child; c != -1; c = d->n[c].next) {
		chain = fj_get(d, c, "chain");
		if (chain >= 0 && fj_same_str(d, fj_get(d, chain, "name"), name) &&
		    fj_same_str(d, fj_get(d, chain, "table"), j->table) &&
		    fj_same_str(d, fj_get(d, chain, "family"), j->family))
			return 1;
	}
	return 0;
}

/* Walks the chain named CHAIN (DEPTH jumps below the base chain): what
 * happens to the flow there, FW_OUT_* flags without FW_OUT_NEXT. */
static unsigned int
fw_walk(struct fw_judge *j, int chain, int depth)
{
	char where[FW_WHERE_MAX_BYTES];
	unsigned int seen = 0, out;
	int r, stmt;
	enum fw_tri cond;
	enum fw_act act;
	size_t i;

	j->steps += j->n_rules + 1;
	if (j->steps > FW_RULE_STEPS_MAX || !fw_chain_exists(j, chain)) {
		fw_note(j, FWCHECK_UNKNOWN, "%s: %s", fw_where(j, chain, where, sizeof(where)),
		    j->steps > FW_RULE_STEPS_MAX ? "the ruleset is too large to follow" :
		    "a jump to a chain that does not exist");
		return FW_OUT_UNKNOWN;
	}
	for (i = 0; i < j->n_rules; i++) {
		r = j->rule_idx[i];
		if (!fw_rule_in(j, r, chain))
			continue;
		cond = fw_rule_scan(j, fj_get(j->d, r, "expr"), &stmt, &act);
		if (cond == FW_NO)
			continue;
		out = fw_act_on(j, chain, r, stmt, act, cond, depth);
		if (out & FW_OUT_STOP)
			return out & FW_OUT_STOP;
		seen |= out & (FW_OUT_ACCEPTED | FW_OUT_FELL);
		if (!(out & FW_OUT_NEXT))
			return seen;
	}
	return seen | FW_OUT_FELL;   /* the end of the chain */
}

/* ---- Base chains and the verdict ---- */

/* 1 when CHAIN (a chain object) is a base chain the flow crosses: family
 * ip or inet (IPv4), a hook on the flow's way, and not corral's own. */
static int
fw_on_path(const struct fw_judge *j, int chain)
{
	const struct fj_doc *d = j->d;
	int fam = fj_get(d, chain, "family"), hook = fj_get(d, chain, "hook");
	int in = j->f->inbound;

	if (!fj_is_str(d, fam, "ip") && !fj_is_str(d, fam, "inet"))
		return 0;
	if (fj_is_str(d, fam, "inet") && j->t->own_table != NULL &&
	    fj_is_str(d, fj_get(d, chain, "table"), j->t->own_table))
		return 0;
	if (in)
		return fj_is_str(d, hook, "prerouting") ||
		    (j->f->daddr_pool && fj_is_str(d, hook, "input"));
	return fj_is_str(d, hook, "output") || fj_is_str(d, hook, "postrouting");
}

/* Judges one base chain for the flow. */
static void
fw_base(struct fw_judge *j, int chain)
{
	const struct fj_doc *d = j->d;
	char where[FW_WHERE_MAX_BYTES];
	unsigned int out;

	j->family = fj_get(d, chain, "family");
	j->table = fj_get(d, chain, "table");
	j->policy_drop = fj_is_str(d, fj_get(d, chain, "policy"), "drop");
	out = fw_walk(j, fj_get(d, chain, "name"), 0);
	if (!(out & FW_OUT_STOP) && (out & FW_OUT_FELL) && j->policy_drop)
		fw_note(j, FWCHECK_AT_RISK, "%s: policy drop, and no rule accepts all the "
		    "sandboxes' %s", fw_where(j, fj_get(d, chain, "name"), where, sizeof(where)),
		    j->f->text);
}

/* Judges every base chain on the flow's path. */
static void
fw_flow(struct fw_judge *j)
{
	const struct fj_doc *d = j->d;
	int list = fj_get(d, 0, "nftables"), c, chain;

	for (c = d->n[list].child; c != -1 && j->verdict == FWCHECK_OK; c = d->n[c].next) {
		chain = fj_get(d, c, "chain");
		if (chain >= 0 && fj_get(d, chain, "hook") >= 0 && fw_on_path(j, chain))
			fw_base(j, chain);
	}
}

/* Runs J over every flow of its target. */
static void
fw_flows(struct fw_judge *j)
{
	const struct fwcheck_target *t = j->t;
	struct fw_flow f;
	size_t i;
	int out;

	for (out = 0; out < 2; out++) {
		for (i = 0; i < t->n_tcp_ports + t->n_udp_ports; i++) {
			memset(&f, 0, sizeof(f));
			f.proto = i < t->n_tcp_ports ? FW_PROTO_TCP : FW_PROTO_UDP;
			f.inbound = !out;
			f.daddr_pool = 1;
			if (out)
				f.sport = i < t->n_tcp_ports ? t->tcp_ports[i] : t->udp_ports[i - t->n_tcp_ports];
			else
				f.dport = i < t->n_tcp_ports ? t->tcp_ports[i] : t->udp_ports[i - t->n_tcp_ports];
			snprintf(f.text, sizeof(f.text), "%s %s the gateway's port %u",
			    f.proto == FW_PROTO_TCP ? "tcp" : "udp", out ? "replies from" : "to",
			    out ? f.sport : f.dport);
			j->f = &f;
			fw_flow(j);
		}
	}
	/* The transparent path: TCP to anywhere, before its redirect. */
	memset(&f, 0, sizeof(f));
	f.proto = FW_PROTO_TCP;
	f.inbound = 1;
	snprintf(f.text, sizeof(f.text), "tcp to other addresses (the transparent path)");
	j->f = &f;
	fw_flow(j);
	j->f = NULL;
}

/* Every rule object of the document, in order, into *OUT. */
static int
fw_index_rules(const struct fj_doc *d, int list, int **out, size_t *n)
{
	size_t cap = 0;
	int c, *idx = NULL, *grown;

	*n = 0;
	for (c = d->n[list].child; c != -1; c = d->n[c].next) {
		if (fj_get(d, c, "rule") < 0)
			continue;
		if (*n == cap) {
			cap = cap == 0 ? FJ_NODES_FIRST : cap * 2;
			grown = realloc(idx, cap * sizeof(*idx));
			if (grown == NULL) {
				free(idx);
				return -1;
			}
			idx = grown;
		}
		idx[(*n)++] = fj_get(d, c, "rule");
	}
	*out = idx;
	return 0;
}

static void
fw_result(struct fwcheck_result *r, enum fwcheck_verdict v, const char *reason)
{
	r->verdict = v;
	snprintf(r->reason, sizeof(r->reason), "%s", reason);
}

/* Judges a parsed document D. */
static void
fw_judge_doc(const struct fj_doc *d, const struct fwcheck_target *t, struct fwcheck_result *r)
{
	struct fw_judge j;
	int list = fj_get(d, 0, "nftables");
	int *rules = NULL;

	if (list < 0 || d->n[list].type != FJ_ARRAY) {
		fw_result(r, FWCHECK_UNKNOWN, "the ruleset's JSON has no \"nftables\" array");
		return;
	}
	memset(&j, 0, sizeof(j));
	j.d = d;
	j.t = t;
	j.verdict = FWCHECK_OK;
	if (fw_index_rules(d, list, &rules, &j.n_rules) == -1) {
		fw_result(r, FWCHECK_UNKNOWN, "out of memory while judging the ruleset");
		return;
	}
	j.rule_idx = rules;
	fw_flows(&j);
	fw_result(r, j.verdict, j.verdict == FWCHECK_OK ? "" : j.reason);
	free(rules);
}

void
fwcheck_judge_json(const char *json, size_t len, const struct fwcheck_target *t,
    struct fwcheck_result *r)
{
	struct fj_doc d = { .text = json, .len = len };
	char why[FWCHECK_REASON_MAX_BYTES];

	if (len > FWCHECK_RULESET_MAX_BYTES) {
		fw_result(r, FWCHECK_UNKNOWN, "the ruleset is larger than fwcheck reads");
		return;
	}
	if (fj_value(&d) == 0 && (fj_space(&d), d.pos == d.len) &&
	    d.n[0].type == FJ_OBJECT) {
		fw_judge_doc(&d, t, r);
	} else {
		snprintf(why, sizeof(why), "nftables' JSON does not read: %s at byte %zu",
		    d.error != NULL ? d.error : "not one object", d.pos);
		fw_result(r, FWCHECK_UNKNOWN, why);
	}
	free(d.n);
}

/* iptables-legacy's tables (their names, one a line), which nftables
 * cannot see; empty when there are none. */
static void
fw_legacy_tables(char *out, size_t size)
{
	FILE *f = fopen(FW_LEGACY_TABLES_PATH, "re");
	size_t n = 0;
	int c;

	out[0] = '\0';
	if (f == NULL)
		return;
	while ((c = fgetc(f)) != EOF && n + 1 < size)
		out[n++] = c == '\n' ? ' ' : (char)c;
	out[n] = '\0';
	while (n > 0 && out[n - 1] == ' ')
		out[--n] = '\0';
	fclose(f);
}

/* Lists the ruleset as JSON through NFT into *R on failure; its text. */
static const char *
fw_list(struct nft_ctx *nft, struct fwcheck_result *r)
{
	char why[FWCHECK_REASON_MAX_BYTES];
	const char *err;
	size_t n;

	nft_ctx_output_set_flags(nft, NFT_CTX_OUTPUT_JSON | NFT_CTX_OUTPUT_HANDLE);
	if (nft_run_cmd_from_buffer(nft, "list ruleset") == 0)
		return nft_ctx_get_output_buffer(nft);
	err = nft_ctx_get_error_buffer(nft);
	snprintf(why, sizeof(why), "nftables could not list the ruleset: %s",
	    err != NULL && *err != '\0' ? err : strerror(errno));
	n = strcspn(why, "\n");
	why[n] = '\0';
	fw_result(r, FWCHECK_UNKNOWN, why);
	return NULL;
}

void
fwcheck_ruleset(const struct fwcheck_target *t, struct fwcheck_result *r)
{
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	const char *json;

	if (nft == NULL || nft_ctx_buffer_output(nft) != 0 || nft_ctx_buffer_error(nft) != 0) {
		fw_result(r, FWCHECK_UNKNOWN, "libnftables could not start");
		goto out;
	}
	json = fw_list(nft, r);
	if (json != NULL)
		fwcheck_judge_json(json, strlen(json), t, r);
out:
	if (nft != NULL)
		nft_ctx_free(nft);
}

void
fwcheck_legacy(struct fwcheck_result *r)
{
	char legacy[FW_LEGACY_NAMES_MAX_BYTES], why[FWCHECK_REASON_MAX_BYTES];

	fw_legacy_tables(legacy, sizeof(legacy));
	if (r->verdict == FWCHECK_OK && legacy[0] != '\0') {
		snprintf(why, sizeof(why), "iptables-legacy tables (%s) are loaded, and nftables "
		    "cannot see their rules", legacy);
		fw_result(r, FWCHECK_UNKNOWN, why);
	}
}

void
fwcheck_run(const struct fwcheck_target *t, struct fwcheck_result *r)
{
	fwcheck_ruleset(t, r);
	fwcheck_legacy(r);
}

int
fwcheck_watch_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_NETFILTER);
	struct sockaddr_nl local = { .nl_family = AF_NETLINK };
	int group = NFNLGRP_NFTABLES;

	if (fd == -1)
		return -1;
	/* Unbound, the socket is in no group whatever it joins. */
	if (bind(fd, (struct sockaddr *)&local, sizeof(local)) == -1 ||
	    setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

bool
fwcheck_watch_changed(int fd)
{
	bool changed = fd == -1;
	char byte;
	ssize_t n;

	/* Each notification is read and dropped whole (MSG_TRUNC): only that
	 * one came matters. ENOBUFS: some were lost, so something changed. */
	while (fd != -1 && ((n = recv(fd, &byte, 1, MSG_DONTWAIT | MSG_TRUNC)) >= 0 ||
	    errno == ENOBUFS || errno == EINTR))
		changed = true;
	if (fd != -1 && errno != EAGAIN && errno != EWOULDBLOCK)
		changed = true;         /* a broken watch trusts nothing */
	return changed;
}

const char *
fwcheck_verdict_name(enum fwcheck_verdict v)
{
	switch (v) {
	case FWCHECK_OK: return "ok";
	case FWCHECK_AT_RISK: return "at risk";
	default: return "unknown";
	}
}
