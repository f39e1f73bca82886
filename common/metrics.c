/* A process's metrics in the Prometheus text format. See metrics.h. */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/metrics.h"

#define METRICS_LABELS_MAX 2
#define METRICS_HELP_MAX_BYTES 256

enum metric_kind {
	METRIC_COUNTER,
	METRIC_GAUGE,
	METRIC_HISTOGRAM,
};

struct metric_series {
	const struct metric_family *family;
	char values[METRICS_LABELS_MAX][METRICS_LABEL_MAX_BYTES];
	uint64_t count;                 /* a counter's value, a histogram's count */
	double gauge;                   /* a gauge's value, a histogram's sum */
	uint64_t buckets[METRICS_BUCKETS_MAX + 1];      /* per bucket, not cumulative; +Inf last */
};

struct metric_family {
	enum metric_kind kind;
	char name[METRICS_NAME_MAX_BYTES];
	char help[METRICS_HELP_MAX_BYTES];
	char labels[METRICS_LABELS_MAX][METRICS_NAME_MAX_BYTES];
	size_t nlabels;
	double bounds[METRICS_BUCKETS_MAX];
	size_t nbounds;
	struct metric_series **series;
	size_t nseries;
};

struct metrics {
	struct metric_family **families;
	size_t nfamilies;
	void (*on_render)(void *arg);
	void *on_render_arg;
};

struct metrics *
metrics_new(void)
{
	return calloc(1, sizeof(struct metrics));
}

void
metrics_free(struct metrics *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->nfamilies; i++) {
		for (size_t j = 0; j < m->families[i]->nseries; j++)
			free(m->families[i]->series[j]);
		free(m->families[i]->series);
		free(m->families[i]);
	}
	free(m->families);
	free(m);
}

/* True when S is a metric or label name: [a-z_][a-z0-9_]*, short enough. */
static bool
metrics_name_ok(const char *s, size_t len)
{
	if (len == 0 || len >= METRICS_NAME_MAX_BYTES || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* Splits LABELS ("a,b") into F's label names; false when one is bad. */
static bool
metrics_parse_labels(struct metric_family *f, const char *labels)
{
	const char *p = labels;

	while (p != NULL && *p != '\0') {
		size_t len = strcspn(p, ",");

		if (f->nlabels == METRICS_LABELS_MAX || !metrics_name_ok(p, len) ||
		    (len == 2 && strncmp(p, "le", 2) == 0))
			return false;
		memcpy(f->labels[f->nlabels], p, len);
		f->labels[f->nlabels++][len] = '\0';
		p += len;
		if (*p == ',')
			p++;
	}
	return true;
}

static struct metric_family *
metrics_family(struct metrics *m, enum metric_kind kind, const char *name, const char *help,
    const char *labels)
{
	struct metric_family *f, **grown;

	if (!metrics_name_ok(name, strlen(name)) || (f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	f->kind = kind;
	strcpy(f->name, name);
	snprintf(f->help, sizeof(f->help), "%s", help);
	if (!metrics_parse_labels(f, labels) ||
	    (grown = realloc(m->families, (m->nfamilies + 1) * sizeof(*grown))) == NULL) {
		free(f);
		return NULL;
	}
	m->families = grown;
	m->families[m->nfamilies++] = f;
	return f;
}

struct metric_family *
metrics_counter(struct metrics *m, const char *name, const char *help, const char *labels)
{
	return metrics_family(m, METRIC_COUNTER, name, help, labels);
}

struct metric_family *
metrics_gauge(struct metrics *m, const char *name, const char *help, const char *labels)
{
	return metrics_family(m, METRIC_GAUGE, name, help, labels);
}

struct metric_family *
metrics_histogram(struct metrics *m, const char *name, const char *help, const char *labels,
    const double *bounds, size_t nbounds)
{
	struct metric_family *f;

	if (nbounds == 0 || nbounds > METRICS_BUCKETS_MAX)
		return NULL;
	for (size_t i = 1; i < nbounds; i++)
		if (!(bounds[i] > bounds[i - 1]))
			return NULL;
	if ((f = metrics_family(m, METRIC_HISTOGRAM, name, help, labels)) == NULL)
		return NULL;
	memcpy(f->bounds, bounds, nbounds * sizeof(*bounds));
	f->nbounds = nbounds;
	return f;
}

/* Copies V into OUT, cut to fit (NULL: ""). */
static void
metrics_copy_value(char out[METRICS_LABEL_MAX_BYTES], const char *v)
{
	snprintf(out, METRICS_LABEL_MAX_BYTES, "%s", v != NULL ? v : "");
}

struct metric_series *
metric_series(struct metric_family *f, const char *v1, const char *v2)
{
	char values[METRICS_LABELS_MAX][METRICS_LABEL_MAX_BYTES] = { { 0 } };
	struct metric_series *s, **grown;

	if (f == NULL)
		return NULL;
	metrics_copy_value(values[0], f->nlabels > 0 ? v1 : NULL);
	metrics_copy_value(values[1], f->nlabels > 1 ? v2 : NULL);
	for (size_t i = 0; i < f->nseries; i++)
		if (memcmp(f->series[i]->values, values, sizeof(values)) == 0)
			return f->series[i];
	if (f->nseries == METRICS_SERIES_MAX || (s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	if ((grown = realloc(f->series, (f->nseries + 1) * sizeof(*grown))) == NULL) {
		free(s);
		return NULL;
	}
	s->family = f;
	memcpy(s->values, values, sizeof(values));
	f->series = grown;
	f->series[f->nseries++] = s;
	return s;
}

void
metric_add(struct metric_series *s, uint64_t n)
{
	if (s != NULL && s->family->kind == METRIC_COUNTER)
		s->count += n;
}

void
metric_set(struct metric_series *s, double v)
{
	if (s != NULL && s->family->kind == METRIC_GAUGE)
		s->gauge = v;
}

void
metric_move(struct metric_series *s, double d)
{
	if (s != NULL && s->family->kind == METRIC_GAUGE)
		s->gauge += d;
}

void
metric_observe(struct metric_series *s, double x)
{
	size_t b = 0;

	if (s == NULL || s->family->kind != METRIC_HISTOGRAM)
		return;
	while (b < s->family->nbounds && x > s->family->bounds[b])
		b++;
	s->buckets[b]++;
	s->count++;
	s->gauge += x;
}

double
metric_value(const struct metric_series *s)
{
	if (s == NULL)
		return 0;
	return s->family->kind == METRIC_GAUGE ? s->gauge : (double)s->count;
}

void
metrics_on_render(struct metrics *m, void (*fn)(void *arg), void *arg)
{
	m->on_render = fn;
	m->on_render_arg = arg;
}

/* Appends V as a label value: backslash, quote and newline escaped. */
static int
metrics_put_value(struct buf *out, const char *v)
{
	int rc = 0;

	for (; *v != '\0' && rc == 0; v++) {
		if (*v == '\\' || *v == '"')
			rc = buf_printf(out, "\\%c", *v);
		else if (*v == '\n')
			rc = buf_append_str(out, "\\n");
		else
			rc = buf_append(out, v, 1);
	}
	return rc;
}

/* Appends S's name, SUFFIX and labels ("{a=\"x\",le=\"0.5\"}"); LE may be NULL. */
static int
metrics_put_name(struct buf *out, const struct metric_series *s, const char *suffix,
    const char *le)
{
	const struct metric_family *f = s->family;
	int rc = buf_printf(out, "%s%s", f->name, suffix);

	if (rc == 0 && (f->nlabels > 0 || le != NULL))
		rc = buf_append_str(out, "{");
	for (size_t i = 0; rc == 0 && i < f->nlabels; i++) {
		rc = buf_printf(out, "%s%s=\"", i > 0 ? "," : "", f->labels[i]);
		if (rc == 0)
			rc = metrics_put_value(out, s->values[i]);
		if (rc == 0)
			rc = buf_append_str(out, "\"");
	}
	if (rc == 0 && le != NULL)
		rc = buf_printf(out, "%sle=\"%s\"", f->nlabels > 0 ? "," : "", le);
	if (rc == 0 && (f->nlabels > 0 || le != NULL))
		rc = buf_append_str(out, "}");
	return rc;
}

/* A histogram series: its cumulative buckets, +Inf, sum and count. */
static int
metrics_put_histogram(struct buf *out, const struct metric_series *s)
{
	const struct metric_family *f = s->family;
	uint64_t cumulative = 0;
	char le[32];
	int rc = 0;

	for (size_t b = 0; rc == 0 && b <= f->nbounds; b++) {
		cumulative += s->buckets[b];
		if (b < f->nbounds)
			snprintf(le, sizeof(le), "%g", f->bounds[b]);
		else
			strcpy(le, "+Inf");
		rc = metrics_put_name(out, s, "_bucket", le);
		if (rc == 0)
			rc = buf_printf(out, " %llu\n", (unsigned long long)cumulative);
	}
	if (rc == 0)
		rc = metrics_put_name(out, s, "_sum", NULL);
	if (rc == 0)
		rc = buf_printf(out, " %.9g\n", s->gauge);
	if (rc == 0)
		rc = metrics_put_name(out, s, "_count", NULL);
	if (rc == 0)
		rc = buf_printf(out, " %llu\n", (unsigned long long)s->count);
	return rc;
}

static int
metrics_put_series(struct buf *out, const struct metric_series *s)
{
	int rc;

	if (s->family->kind == METRIC_HISTOGRAM)
		return metrics_put_histogram(out, s);
	if ((rc = metrics_put_name(out, s, "", NULL)) != 0)
		return rc;
	if (s->family->kind == METRIC_COUNTER)
		return buf_printf(out, " %llu\n", (unsigned long long)s->count);
	return buf_printf(out, " %.17g\n", s->gauge);
}

int
metrics_render(struct metrics *m, struct buf *out)
{
	static const char *const types[] = { "counter", "gauge", "histogram" };

	if (m->on_render != NULL)
		m->on_render(m->on_render_arg);
	for (size_t i = 0; i < m->nfamilies; i++) {
		const struct metric_family *f = m->families[i];

		if (buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name,
		    types[f->kind]) != 0)
			return -1;
		for (size_t j = 0; j < f->nseries; j++)
			if (metrics_put_series(out, f->series[j]) != 0)
				return -1;
	}
	return 0;
}
