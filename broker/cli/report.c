/* What the ledger says each sandbox did; see report.h. */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "broker/cli/report.h"
#include "common/json.h"
#include "common/ledgerrec.h"
#include "common/timeutil.h"
#include "common/visible.h"
#include "common/xmalloc.h"

#define REPORT_NO_PORT (-1)
#define REPORT_OTHER SIZE_MAX           /* the index of what came past a cap */
/* The longest value kept whole: a binary, LEDGER_BINARY_MAX_BYTES escaped. */
#define REPORT_VALUE_MAX_BYTES 2049
#define REPORT_WORD_MAX_BYTES 32        /* event, decision */
#define REPORT_OPEN_SLOT_BITS 17                        /* slots: twice REPORT_OPEN_MAX */
#define REPORT_OPEN_SLOTS ((size_t)1 << REPORT_OPEN_SLOT_BITS)
#define REPORT_FNV_OFFSET 14695981039346656037ULL
#define REPORT_FNV_PRIME 1099511628211ULL
#define REPORT_ID_MULTIPLIER 0x9e3779b97f4a7c15ULL      /* Fibonacci hashing */
#define REPORT_TEXT_BYTES (REPORT_VALUE_MAX_BYTES * VISIBLE_EXPANSION + 1)

/* One key of a table and what was counted for it. */
struct report_entry {
	char *name;                     /* NULL: none (host mode, a refusal without a host) */
	int64_t port;                   /* REPORT_NO_PORT: none */
	uint64_t count;                 /* connections, refusals, records */
	uint64_t bytes_up, bytes_down;  /* hosts: from their close records */
	uint64_t closes;                /* hosts: close records counted */
};

/* At most MAX distinct keys, found by hash (open addressing); what comes
 * past MAX is counted in OTHER. */
struct report_table {
	struct report_entry *entries;
	size_t n, alloc, max;
	size_t *slots;                  /* an entry's index + 1; 0: free */
	size_t nslots;                  /* a power of two, twice MAX at least */
	struct report_entry other;
};

/* One sandbox (or host mode). */
struct report_box {
	struct report_table hosts;      /* reached: allowed connects, by host and port */
	struct report_table reasons;    /* refusals by reason */
	struct report_table refused;    /* refusals by host and port */
	struct report_table binaries;   /* connect and unix records by binary */
	uint64_t records, connections, refusals, closes, closes_unmatched, unidentified;
};

/* An allowed connection waiting for its close record. */
struct report_open {
	uint64_t id;                    /* 0: a free slot */
	size_t box, host;               /* host: REPORT_OTHER past the cap */
};

_Static_assert(REPORT_OPEN_SLOTS == 2 * REPORT_OPEN_MAX, "the open table is half full at most");

struct report {
	struct report_table sandboxes;  /* entry I is boxes[I]; count: its records */
	struct report_box *boxes;
	struct report_open *open;       /* REPORT_OPEN_SLOTS, made at the first connect */
	size_t nopen;
	uint64_t untracked;             /* allowed connects not tracked: too many open */
	uint64_t records, unreadable;
};

enum report_field {
	REPORT_F_EVENT, REPORT_F_SANDBOX, REPORT_F_DECISION, REPORT_F_HOST, REPORT_F_PORT,
	REPORT_F_BINARY, REPORT_F_REASON, REPORT_F_ID, REPORT_F_UP, REPORT_F_DOWN,
	REPORT_FIELDS
};

/* The fields of a record the report reads. */
struct report_record {
	char event[REPORT_WORD_MAX_BYTES], decision[REPORT_WORD_MAX_BYTES];
	char sandbox[REPORT_VALUE_MAX_BYTES], host[REPORT_VALUE_MAX_BYTES];
	char binary[REPORT_VALUE_MAX_BYTES], reason[REPORT_VALUE_MAX_BYTES];
	char port[LEDGERREC_NUMBER_MAX_BYTES], id[LEDGERREC_NUMBER_MAX_BYTES];
	char up[LEDGERREC_NUMBER_MAX_BYTES], down[LEDGERREC_NUMBER_MAX_BYTES];
	struct ledgerrec_field f[REPORT_FIELDS];
};

static void
report_table_init(struct report_table *t, size_t max)
{
	memset(t, 0, sizeof(*t));
	t->max = max;
	t->other.port = REPORT_NO_PORT;
	for (t->nslots = 1; t->nslots < 2 * max; t->nslots *= 2)
		;
}

static void
report_table_clear(struct report_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->entries[i].name);
	free(t->entries);
	free(t->slots);
}

static uint64_t
report_hash(const char *name, int64_t port)
{
	uint64_t h = REPORT_FNV_OFFSET ^ (uint64_t)port;

	for (const unsigned char *p = (const unsigned char *)(name != NULL ? name : ""); *p; p++)
		h = (h ^ *p) * REPORT_FNV_PRIME;
	return (h ^ (name == NULL)) * REPORT_FNV_PRIME;
}

static bool
report_entry_is(const struct report_entry *e, const char *name, int64_t port)
{
	if (e->port != port || (e->name == NULL) != (name == NULL))
		return false;
	return name == NULL || strcmp(e->name, name) == 0;
}

/* The index of the key (NAME, PORT), added when missing; REPORT_OTHER
 * when the table is full. */
static size_t
report_table_index(struct report_table *t, const char *name, int64_t port)
{
	size_t mask = t->nslots - 1, i;

	if (t->slots == NULL)
		t->slots = xcalloc(t->nslots, sizeof(*t->slots));
	for (i = report_hash(name, port) & mask; t->slots[i] != 0; i = (i + 1) & mask)
		if (report_entry_is(&t->entries[t->slots[i] - 1], name, port))
			return t->slots[i] - 1;
	if (t->n == t->max)
		return REPORT_OTHER;
	if (t->n == t->alloc) {
		t->alloc = t->alloc == 0 ? 8 : t->alloc * 2;
		t->entries = xreallocarray(t->entries, t->alloc, sizeof(*t->entries));
	}
	memset(&t->entries[t->n], 0, sizeof(t->entries[t->n]));
	t->entries[t->n].name = name != NULL ? xstrdup(name) : NULL;
	t->entries[t->n].port = port;
	t->slots[i] = ++t->n;
	return t->n - 1;
}

static struct report_entry *
report_table_at(struct report_table *t, size_t index)
{
	return index == REPORT_OTHER ? &t->other : &t->entries[index];
}

/* Counts one more of the key (NAME, PORT). */
static size_t
report_table_count(struct report_table *t, const char *name, int64_t port)
{
	size_t index = report_table_index(t, name, port);

	report_table_at(t, index)->count++;
	return index;
}

struct report *
report_new(void)
{
	struct report *r = xcalloc(1, sizeof(*r));

	report_table_init(&r->sandboxes, REPORT_SANDBOXES_MAX);
	r->boxes = xcalloc(REPORT_SANDBOXES_MAX, sizeof(*r->boxes));
	return r;
}

void
report_free(struct report *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->sandboxes.n; i++) {
		report_table_clear(&r->boxes[i].hosts);
		report_table_clear(&r->boxes[i].reasons);
		report_table_clear(&r->boxes[i].refused);
		report_table_clear(&r->boxes[i].binaries);
	}
	report_table_clear(&r->sandboxes);
	free(r->boxes);
	free(r->open);
	free(r);
}

/* The sandbox NAME's box (NULL: host mode), made when missing; NULL past the cap. */
static struct report_box *
report_box_of(struct report *r, const char *name, size_t *index)
{
	size_t before = r->sandboxes.n;
	struct report_box *b;

	*index = report_table_count(&r->sandboxes, name, REPORT_NO_PORT);
	if (*index == REPORT_OTHER)
		return NULL;
	b = &r->boxes[*index];
	if (r->sandboxes.n > before) {
		report_table_init(&b->hosts, REPORT_HOSTS_MAX);
		report_table_init(&b->reasons, REPORT_REASONS_MAX);
		report_table_init(&b->refused, REPORT_HOSTS_MAX);
		report_table_init(&b->binaries, REPORT_BINARIES_MAX);
	}
	return b;
}

static size_t
report_open_home(uint64_t id)
{
	return (size_t)((id * REPORT_ID_MULTIPLIER) >> (64 - REPORT_OPEN_SLOT_BITS));
}

/* Remembers connection ID as BOX's HOST until its close. */
static void
report_open_add(struct report *r, uint64_t id, size_t box, size_t host)
{
	size_t i;

	if (r->open == NULL)
		r->open = xcalloc(REPORT_OPEN_SLOTS, sizeof(*r->open));
	for (i = report_open_home(id); r->open[i].id != 0 && r->open[i].id != id;
	    i = (i + 1) & (REPORT_OPEN_SLOTS - 1))
		;
	if (r->open[i].id == 0 && r->nopen == REPORT_OPEN_MAX) {
		r->untracked++;
		return;
	}
	r->nopen += r->open[i].id == 0;
	r->open[i] = (struct report_open){ id, box, host };
}

/* Empties slot I, moving up the entries that probed past it (linear
 * probing's deletion: no tombstones, so the table never silts up). */
static void
report_open_remove(struct report *r, size_t i)
{
	size_t mask = REPORT_OPEN_SLOTS - 1, j = i, home;

	r->open[i].id = 0;
	r->nopen--;
	for (;;) {
		j = (j + 1) & mask;
		if (r->open[j].id == 0)
			return;
		home = report_open_home(r->open[j].id);
		/* Stays when its home lies cyclically in (i, j]. */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		r->open[i] = r->open[j];
		r->open[j].id = 0;
		i = j;
	}
}

/* The connection ID's open entry, taken out; false when unknown. */
static bool
report_open_take(struct report *r, uint64_t id, struct report_open *found)
{
	if (r->open == NULL)
		return false;
	for (size_t i = report_open_home(id); r->open[i].id != 0; i = (i + 1) & (REPORT_OPEN_SLOTS - 1))
		if (r->open[i].id == id) {
			*found = r->open[i];
			report_open_remove(r, i);
			return true;
		}
	return false;
}

static void
report_record_init(struct report_record *rec)
{
	static const char *const keys[] = { "event", "sandbox", "decision", "host", "port",
	    "binary", "reason", "id", "bytes_up", "bytes_down" };
	char *outs[] = { rec->event, rec->sandbox, rec->decision, rec->host, rec->port,
	    rec->binary, rec->reason, rec->id, rec->up, rec->down };
	size_t sizes[] = { sizeof(rec->event), sizeof(rec->sandbox), sizeof(rec->decision),
	    sizeof(rec->host), sizeof(rec->port), sizeof(rec->binary), sizeof(rec->reason),
	    sizeof(rec->id), sizeof(rec->up), sizeof(rec->down) };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		rec->f[i] = (struct ledgerrec_field){ keys[i], outs[i], sizes[i], LEDGERREC_ABSENT };
}

/* FIELD's text, or NULL when it is not a string (null, absent). */
static const char *
report_string(const struct report_record *rec, enum report_field field)
{
	enum ledgerrec_kind kind = rec->f[field].kind;

	return kind == LEDGERREC_STRING || kind == LEDGERREC_TOO_LONG ? rec->f[field].out : NULL;
}

/* FIELD as a non-negative integer; FALLBACK when it is not one. */
static int64_t
report_int(const struct report_record *rec, enum report_field field, int64_t fallback)
{
	int64_t v;

	return ledgerrec_number_int(rec->f[field].out, rec->f[field].kind, &v) && v >= 0 ? v :
	    fallback;
}

static bool
report_is(const struct report_record *rec, enum report_field field, const char *word)
{
	const char *s = report_string(rec, field);

	return s != NULL && strcmp(s, word) == 0;
}

/* A refusal: counted by reason and by host. */
static void
report_add_refusal(struct report_box *b, const struct report_record *rec)
{
	b->refusals++;
	report_table_count(&b->reasons, report_string(rec, REPORT_F_REASON), REPORT_NO_PORT);
	report_table_count(&b->refused, report_string(rec, REPORT_F_HOST),
	    report_int(rec, REPORT_F_PORT, REPORT_NO_PORT));
}

/* An allowed connect: a connection to its host, kept until its close. */
static void
report_add_connect(struct report *r, size_t box, const struct report_record *rec)
{
	struct report_box *b = &r->boxes[box];
	size_t host = report_table_count(&b->hosts, report_string(rec, REPORT_F_HOST),
	    report_int(rec, REPORT_F_PORT, REPORT_NO_PORT));
	int64_t id = report_int(rec, REPORT_F_ID, 0);

	b->connections++;
	if (id > 0)
		report_open_add(r, (uint64_t)id, box, host);
}

/* A close: its bytes go to the host of its connect, matched by id; a
 * close whose connect is not in the window goes by its own host. */
static void
report_add_close(struct report *r, size_t box, const struct report_record *rec)
{
	struct report_box *b = &r->boxes[box];
	int64_t id = report_int(rec, REPORT_F_ID, 0);
	struct report_open open;
	struct report_entry *e;

	b->closes++;
	if (id > 0 && report_open_take(r, (uint64_t)id, &open)) {
		e = report_table_at(&r->boxes[open.box].hosts, open.host);
	} else {
		b->closes_unmatched++;
		e = report_table_at(&b->hosts, report_table_index(&b->hosts,
		    report_string(rec, REPORT_F_HOST), report_int(rec, REPORT_F_PORT, REPORT_NO_PORT)));
	}
	e->closes++;
	e->bytes_up += (uint64_t)report_int(rec, REPORT_F_UP, 0);
	e->bytes_down += (uint64_t)report_int(rec, REPORT_F_DOWN, 0);
}

/* The process of a connect or unix record: counted by binary. */
static void
report_add_binary(struct report_box *b, const struct report_record *rec)
{
	const char *binary = report_string(rec, REPORT_F_BINARY);

	if (binary == NULL)
		b->unidentified++;
	else
		report_table_count(&b->binaries, binary, REPORT_NO_PORT);
}

void
report_add(struct report *r, const char *line, size_t len)
{
	struct report_record rec;
	struct report_box *b;
	enum ledgerrec_kind sandbox;
	size_t box;

	report_record_init(&rec);
	r->records++;
	(void)ledgerrec_scan(line, len, rec.f, REPORT_FIELDS);
	sandbox = rec.f[REPORT_F_SANDBOX].kind;
	if (report_string(&rec, REPORT_F_EVENT) == NULL ||
	    (sandbox != LEDGERREC_STRING && sandbox != LEDGERREC_NULL)) {
		r->unreadable++;
		return;
	}
	if ((b = report_box_of(r, report_string(&rec, REPORT_F_SANDBOX), &box)) == NULL)
		return;         /* past the cap of sandboxes: counted there only */
	b->records++;
	if (report_is(&rec, REPORT_F_EVENT, "inbound"))
		return;         /* the host's way in (corral forward), not the sandbox's egress */
	if (report_is(&rec, REPORT_F_DECISION, "deny"))
		report_add_refusal(b, &rec);
	else if (report_is(&rec, REPORT_F_EVENT, "connect") &&
	    report_is(&rec, REPORT_F_DECISION, "allow"))
		report_add_connect(r, box, &rec);
	if (report_is(&rec, REPORT_F_EVENT, "close"))
		report_add_close(r, box, &rec);
	if (report_is(&rec, REPORT_F_EVENT, "connect") || report_is(&rec, REPORT_F_EVENT, "unix"))
		report_add_binary(b, &rec);
}

/* --- Writing ---------------------------------------------------------- */

/* Most first (count, then bytes), then by name: the order of every list. */
static int
report_entry_cmp(const void *pa, const void *pb)
{
	const struct report_entry *a = *(const struct report_entry *const *)pa;
	const struct report_entry *b = *(const struct report_entry *const *)pb;
	uint64_t ab = a->bytes_up + a->bytes_down, bb = b->bytes_up + b->bytes_down;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	if (ab != bb)
		return ab > bb ? -1 : 1;
	if (a->name == NULL || b->name == NULL)
		return (a->name == NULL) - (b->name == NULL);
	if (strcmp(a->name, b->name) != 0)
		return strcmp(a->name, b->name);
	return a->port < b->port ? -1 : a->port > b->port;
}

/* T's entries in report order, and OTHER last when something came past
 * the cap; free() the array. */
static const struct report_entry **
report_sorted(const struct report_table *t, size_t *n)
{
	const struct report_entry **v = xcalloc(t->n + 1, sizeof(*v));
	bool other = t->other.count > 0 || t->other.closes > 0;

	for (size_t i = 0; i < t->n; i++)
		v[i] = &t->entries[i];
	qsort(v, t->n, sizeof(*v), report_entry_cmp);
	if (other)
		v[t->n] = &t->other;
	*n = t->n + other;
	return v;
}

/* E's host and port for people: "name:port", "[v6]:port", "name", "-". */
static const char *
report_host_text(const struct report_table *t, const struct report_entry *e, char *out,
    size_t size)
{
	char safe[REPORT_TEXT_BYTES];

	if (e == &t->other)
		return "(other)";
	visible_copy(e->name != NULL ? e->name : "-", safe, sizeof(safe));
	if (e->port == REPORT_NO_PORT)
		snprintf(out, size, "%s", safe);
	else if (strchr(safe, ':') != NULL)
		snprintf(out, size, "[%s]:%lld", safe, (long long)e->port);
	else
		snprintf(out, size, "%s:%lld", safe, (long long)e->port);
	return out;
}

static const char *
report_name_text(const struct report_table *t, const struct report_entry *e, char *out,
    size_t size)
{
	if (e == &t->other)
		return "(other)";
	return visible_copy(e->name != NULL ? e->name : "-", out, size);
}

static const char *
report_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* The note under a list that reached its cap. */
static void
report_text_capped(const struct report_table *t, const char *what, FILE *out)
{
	if (t->other.count > 0 || t->other.closes > 0)
		fprintf(out, "    (only %zu distinct %s are kept: the rest are counted as (other))\n",
		    t->max, what);
}

static void
report_text_hosts(const struct report_box *b, FILE *out)
{
	char host[REPORT_TEXT_BYTES + 32];
	const struct report_entry **v;
	size_t n;

	fprintf(out, "  hosts reached: %zu, in %llu %s\n", b->hosts.n,
	    (unsigned long long)b->connections,
	    report_plural(b->connections, "connection", "connections"));
	v = report_sorted(&b->hosts, &n);
	if (n > 0)
		fprintf(out, "    %11s %14s %14s  %s\n", "CONNECTIONS", "BYTES_UP", "BYTES_DOWN",
		    "HOST");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "    %11llu %14llu %14llu  %s\n", (unsigned long long)v[i]->count,
		    (unsigned long long)v[i]->bytes_up, (unsigned long long)v[i]->bytes_down,
		    report_host_text(&b->hosts, v[i], host, sizeof(host)));
	free(v);
	report_text_capped(&b->hosts, "hosts", out);
	if (b->closes_unmatched > 0)
		fprintf(out, "    (%llu close records whose connect came before the window: their "
		    "bytes are counted, not their connections)\n",
		    (unsigned long long)b->closes_unmatched);
}

/* One list of counts: COLUMN its heading (also when only EXTRA rows
 * follow); HOSTS says the keys are hosts. */
static void
report_text_counts(const struct report_table *t, const char *column, bool hosts,
    const char *what, uint64_t extra, FILE *out)
{
	char text[REPORT_TEXT_BYTES + 32];
	const struct report_entry **v;
	size_t n;

	v = report_sorted(t, &n);
	if (n > 0 || extra > 0)
		fprintf(out, "    %7s  %s\n", "COUNT", column);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "    %7llu  %s\n", (unsigned long long)v[i]->count, hosts ?
		    report_host_text(t, v[i], text, sizeof(text)) :
		    report_name_text(t, v[i], text, sizeof(text)));
	free(v);
	report_text_capped(t, what, out);
}

static void
report_text_box(const struct report_table *sandboxes, const struct report_entry *e,
    const struct report_box *b, FILE *out)
{
	char name[REPORT_TEXT_BYTES];

	if (e->name == NULL)
		fputs("host mode", out);
	else
		fprintf(out, "sandbox %s", report_name_text(sandboxes, e, name, sizeof(name)));
	fprintf(out, ": %llu %s\n", (unsigned long long)b->records,
	    report_plural(b->records, "record", "records"));
	report_text_hosts(b, out);
	fprintf(out, "  refusals: %llu\n", (unsigned long long)b->refusals);
	report_text_counts(&b->reasons, "REASON", false, "reasons", 0, out);
	report_text_counts(&b->refused, "HOST", true, "hosts", 0, out);
	fprintf(out, "  binaries: %zu\n", b->binaries.n);
	report_text_counts(&b->binaries, "BINARY", false, "binaries", b->unidentified, out);
	if (b->unidentified > 0)
		fprintf(out, "    %7llu  - (not identified: no entry that matched was scoped to "
		    "binaries)\n", (unsigned long long)b->unidentified);
}

/* "from T" / "until T" for the header. */
static void
report_text_window(const struct report_window *w, FILE *out)
{
	char ts[RFC3339_US_BYTES];

	fputs("report", out);
	if (w->since_us > 0) {
		time_format_rfc3339_us(w->since_us, ts);
		fprintf(out, " from %s", ts);
	}
	if (w->until_us > 0) {
		time_format_rfc3339_us(w->until_us, ts);
		fprintf(out, " until %s", ts);
	}
}

int
report_write_text(const struct report *r, const struct report_window *w, FILE *out)
{
	report_text_window(w, out);
	fprintf(out, ": %llu %s, %zu %s\n", (unsigned long long)r->records,
	    report_plural(r->records, "record", "records"), r->sandboxes.n,
	    report_plural(r->sandboxes.n, "sandbox", "sandboxes"));
	for (size_t i = 0; i < r->sandboxes.n; i++) {
		fputc('\n', out);
		report_text_box(&r->sandboxes, &r->sandboxes.entries[i], &r->boxes[i], out);
	}
	if (r->sandboxes.other.count > 0)
		fprintf(out, "\n(only %d sandboxes are reported: %llu records of others are left "
		    "out)\n", REPORT_SANDBOXES_MAX, (unsigned long long)r->sandboxes.other.count);
	if (r->untracked > 0)
		fprintf(out, "\n(%llu connections were open at once past the %d tracked: their bytes "
		    "are counted by their close's own host)\n", (unsigned long long)r->untracked,
		    REPORT_OPEN_MAX);
	if (r->unreadable > 0)
		fprintf(out, "\n(%llu records could not be read)\n", (unsigned long long)r->unreadable);
	fflush(out);
	return ferror(out) ? -1 : 0;
}

/* --- JSON ------------------------------------------------------------- */

static void
report_json_host(struct json *j, const struct report_entry *e, bool other)
{
	if (other)
		json_kv_bool(j, "other", true);
	json_kv_string(j, "host", other ? NULL : e->name);
	if (e->port == REPORT_NO_PORT || other)
		json_kv_null(j, "port");
	else
		json_kv_int(j, "port", e->port);
}

static void
report_json_hosts(struct json *j, const struct report_table *t)
{
	const struct report_entry **v;
	size_t n;

	v = report_sorted(t, &n);
	json_key(j, "hosts");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(j);
		report_json_host(j, v[i], v[i] == &t->other);
		json_kv_uint(j, "connections", v[i]->count);
		json_kv_uint(j, "closes", v[i]->closes);
		json_kv_uint(j, "bytes_up", v[i]->bytes_up);
		json_kv_uint(j, "bytes_down", v[i]->bytes_down);
		json_object_end(j);
	}
	json_array_end(j);
	free(v);
}

/* KEY: [{NAME_KEY (or host and port): ..., count}], the other entry marked. */
static void
report_json_counts(struct json *j, const char *key, const struct report_table *t,
    const char *name_key)
{
	const struct report_entry **v;
	size_t n;

	v = report_sorted(t, &n);
	json_key(j, key);
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		bool other = v[i] == &t->other;

		json_object_begin(j);
		if (name_key == NULL) {
			report_json_host(j, v[i], other);
		} else {
			if (other)
				json_kv_bool(j, "other", true);
			json_kv_string(j, name_key, other ? NULL : v[i]->name);
		}
		json_kv_uint(j, "count", v[i]->count);
		json_object_end(j);
	}
	json_array_end(j);
	free(v);
}

/* The names of B's lists that reached their caps. */
static void
report_json_capped(struct json *j, const struct report_box *b)
{
	const struct { const char *name; const struct report_table *t; } lists[] = {
		{ "hosts", &b->hosts }, { "refusals_by_reason", &b->reasons },
		{ "refusals_by_host", &b->refused }, { "binaries", &b->binaries },
	};

	json_key(j, "capped");
	json_array_begin(j);
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		if (lists[i].t->other.count > 0 || lists[i].t->other.closes > 0)
			json_str(j, lists[i].name);
	json_array_end(j);
}

/* One sandbox's object, written to OUT; -1 when it does not fit. */
static int
report_json_box(const struct report_entry *e, const struct report_box *b, FILE *out)
{
	struct json *j = json_new(REPORT_JSON_SANDBOX_MAX_BYTES);
	const char *text;
	size_t len;
	int rc = -1;

	json_object_begin(j);
	json_kv_string(j, "sandbox", e->name);
	json_kv_uint(j, "records", b->records);
	json_kv_uint(j, "connections", b->connections);
	json_kv_uint(j, "closes", b->closes);
	json_kv_uint(j, "closes_unmatched", b->closes_unmatched);
	report_json_hosts(j, &b->hosts);
	json_kv_uint(j, "refusals", b->refusals);
	report_json_counts(j, "refusals_by_reason", &b->reasons, "reason");
	report_json_counts(j, "refusals_by_host", &b->refused, NULL);
	report_json_counts(j, "binaries", &b->binaries, "binary");
	json_kv_uint(j, "unidentified", b->unidentified);
	report_json_capped(j, b);
	json_object_end(j);
	if ((text = json_text(j, &len)) != NULL)
		rc = visible_json_write(text, len, out);
	json_free(j);
	return rc;
}

static void
report_json_time(FILE *out, const char *key, int64_t us)
{
	char ts[RFC3339_US_BYTES];

	if (us <= 0) {
		fprintf(out, "\"%s\":null,", key);
		return;
	}
	time_format_rfc3339_us(us, ts);
	fprintf(out, "\"%s\":\"%s\",", key, ts);
}

int
report_write_json(const struct report *r, const struct report_window *w, FILE *out)
{
	int rc = 0;

	/* Streamed a sandbox at a time, so that only one is ever held as text. */
	fputc('{', out);
	report_json_time(out, "since", w->since_us);
	report_json_time(out, "until", w->until_us);
	fprintf(out, "\"records\":%llu,\"unreadable\":%llu,\"untracked_connections\":%llu,"
	    "\"sandboxes_left_out_records\":%llu,\"sandboxes\":[",
	    (unsigned long long)r->records, (unsigned long long)r->unreadable,
	    (unsigned long long)r->untracked, (unsigned long long)r->sandboxes.other.count);
	for (size_t i = 0; i < r->sandboxes.n && rc == 0; i++) {
		if (i > 0)
			fputc(',', out);
		rc = report_json_box(&r->sandboxes.entries[i], &r->boxes[i], out);
	}
	fputs("]}\n", out);
	fflush(out);
	return rc == 0 && !ferror(out) ? 0 : -1;
}
