#include "controller/metrics/metrics.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLLECTORS 8

struct tj_series {
	const struct tj_metric *family;
	uint64_t hash;       /* of the label values, for the family's index */
	char **values;       /* owned array of owned strings, one per label */
	double value;        /* counters and gauges */
	double sum;          /* histograms */
	double count;        /* histograms; a double as in the Go client's output */
	double *bucket_hits; /* owned; histograms: observations per bucket, not cumulative */
};

struct tj_metric {
	char *name; /* owned */
	char *help; /* owned */
	enum tj_metric_type type;
	char **labels; /* owned array of owned strings */
	size_t n_labels;
	size_t order[TJ_METRIC_MAX_LABELS]; /* label indexes sorted by label name */
	double *buckets;                    /* owned */
	size_t n_buckets;
	size_t max_series;
	struct tj_series **series; /* owned array of owned series */
	size_t n_series;
	size_t series_cap;
	/* Open-addressing hash index over series (owned array, borrowed entries), so that a
	 * lookup stays quick with many series: index_cap is a power of two, at least twice
	 * n_series. */
	struct tj_series **index;
	size_t index_cap;
};

struct collector {
	tj_metrics_collect_fn fn;
	tj_metrics_collector_free_fn free; /* may be NULL */
	void *userdata;                    /* owned when free is not NULL */
};

struct tj_metrics {
	struct tj_metric **metrics; /* owned array of owned families */
	size_t n_metrics;
	struct collector collectors[MAX_COLLECTORS];
	size_t n_collectors;
};

static void series_free(struct tj_series *s, size_t n_labels)
{
	if (!s)
		return;
	for (size_t i = 0; i < n_labels; i++)
		free(s->values[i]);
	free(s->values);
	free(s->bucket_hits);
	free(s);
}

static void metric_free(struct tj_metric *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_series; i++)
		series_free(m->series[i], m->n_labels);
	free(m->series);
	free(m->index);
	for (size_t i = 0; i < m->n_labels; i++)
		free(m->labels[i]);
	free(m->labels);
	free(m->buckets);
	free(m->help);
	free(m->name);
	free(m);
}

int tj_metrics_new(struct tj_metrics **ret)
{
	struct tj_metrics *reg = calloc(1, sizeof(*reg));

	if (!reg)
		return -ENOMEM;
	*ret = reg;
	return 0;
}

struct tj_metrics *tj_metrics_free(struct tj_metrics *reg)
{
	if (!reg)
		return NULL;
	for (size_t i = 0; i < reg->n_metrics; i++)
		metric_free(reg->metrics[i]);
	free(reg->metrics);
	for (size_t i = 0; i < reg->n_collectors; i++)
		if (reg->collectors[i].free)
			reg->collectors[i].free(reg->collectors[i].userdata);
	free(reg);
	return NULL;
}

static bool valid_name(const char *s, bool colons)
{
	if (!s || !*s)
		return false;
	for (size_t i = 0; s[i]; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
		          (colons && c == ':') || (i > 0 && c >= '0' && c <= '9');

		if (!ok)
			return false;
	}
	return true;
}

static int check_desc(const struct tj_metric_desc *d, size_t *ret_n_labels)
{
	size_t n = 0;

	if (!valid_name(d->name, true) || !d->help)
		return -EINVAL;
	for (; d->labels && d->labels[n]; n++) {
		const char *l = d->labels[n];

		if (n >= TJ_METRIC_MAX_LABELS || !valid_name(l, false) || strncmp(l, "__", 2) == 0)
			return -EINVAL;
		if (d->type == TJ_METRIC_HISTOGRAM && strcmp(l, "le") == 0)
			return -EINVAL;
		for (size_t j = 0; j < n; j++)
			if (strcmp(d->labels[j], l) == 0)
				return -EINVAL;
	}
	if (d->type == TJ_METRIC_HISTOGRAM) {
		if (d->n_buckets == 0 || d->n_buckets > TJ_METRIC_MAX_BUCKETS || !d->buckets)
			return -EINVAL;
		for (size_t i = 0; i < d->n_buckets; i++)
			if (isnan(d->buckets[i]) || isinf(d->buckets[i]) ||
			    (i > 0 && d->buckets[i] <= d->buckets[i - 1]))
				return -EINVAL;
	} else if (d->n_buckets != 0) {
		return -EINVAL;
	}
	*ret_n_labels = n;
	return 0;
}

static void sort_label_order(struct tj_metric *m)
{
	for (size_t i = 0; i < m->n_labels; i++)
		m->order[i] = i;
	for (size_t i = 1; i < m->n_labels; i++)
		for (size_t j = i;
		     j > 0 && strcmp(m->labels[m->order[j - 1]], m->labels[m->order[j]]) > 0; j--) {
			size_t t = m->order[j];

			m->order[j] = m->order[j - 1];
			m->order[j - 1] = t;
		}
}

int tj_metrics_register(struct tj_metrics *reg, const struct tj_metric_desc *desc,
                        struct tj_metric **ret)
{
	struct tj_metric *m, **grown;
	size_t n_labels;
	int r;

	r = check_desc(desc, &n_labels);
	if (r < 0)
		return r;
	for (size_t i = 0; i < reg->n_metrics; i++)
		if (strcmp(reg->metrics[i]->name, desc->name) == 0)
			return -EEXIST;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->type = desc->type;
	m->max_series = desc->max_series ? desc->max_series : TJ_METRIC_MAX_SERIES_DEFAULT;
	m->name = strdup(desc->name);
	m->help = strdup(desc->help);
	m->labels = calloc(n_labels ? n_labels : 1, sizeof(*m->labels));
	if (!m->name || !m->help || !m->labels)
		goto fail_metric;
	for (; m->n_labels < n_labels; m->n_labels++) {
		m->labels[m->n_labels] = strdup(desc->labels[m->n_labels]);
		if (!m->labels[m->n_labels])
			goto fail_metric;
	}
	sort_label_order(m);
	if (desc->n_buckets) {
		m->buckets = malloc(desc->n_buckets * sizeof(*m->buckets));
		if (!m->buckets)
			goto fail_metric;
		memcpy(m->buckets, desc->buckets, desc->n_buckets * sizeof(*m->buckets));
		m->n_buckets = desc->n_buckets;
	}
	grown = realloc(reg->metrics, (reg->n_metrics + 1) * sizeof(*reg->metrics));
	if (!grown)
		goto fail_metric;
	reg->metrics = grown;
	if (n_labels == 0) {
		struct tj_series *only;

		r = tj_metric_series(m, NULL, &only);
		if (r < 0) {
			metric_free(m);
			return r;
		}
	}
	reg->metrics[reg->n_metrics++] = m;
	*ret = m;
	return 0;

fail_metric:
	metric_free(m);
	return -ENOMEM;
}

/* FNV-1a over the values, each followed by a byte that no UTF-8 text holds. */
static uint64_t hash_values(const char *const *values, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		for (const unsigned char *c = (const unsigned char *)values[i]; *c; c++)
			h = (h ^ *c) * 0x100000001b3ULL;
		h = (h ^ 0xff) * 0x100000001b3ULL;
	}
	return h;
}

static bool same_values(const struct tj_series *s, const char *const *values, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s->values[i], values[i]) != 0)
			return false;
	return true;
}

static void index_insert(struct tj_series **index, size_t cap, struct tj_series *s)
{
	size_t at = (size_t)s->hash & (cap - 1);

	while (index[at])
		at = (at + 1) & (cap - 1);
	index[at] = s;
}

static int index_grow(struct tj_metric *m)
{
	size_t cap = m->index_cap ? m->index_cap * 2 : 8;
	struct tj_series **index = calloc(cap, sizeof(*index));

	if (!index)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_series; i++)
		index_insert(index, cap, m->series[i]);
	free(m->index);
	m->index = index;
	m->index_cap = cap;
	return 0;
}

int tj_metric_series(struct tj_metric *m, const char *const *values, struct tj_series **ret)
{
	struct tj_series *s, **grown;
	uint64_t hash;

	if (m->n_labels > 0 && !values)
		return -EINVAL;
	for (size_t i = 0; i < m->n_labels; i++)
		if (!values[i])
			return -EINVAL;
	hash = hash_values(values, m->n_labels);
	if (m->index_cap > 0) {
		size_t mask = m->index_cap - 1;

		for (size_t at = (size_t)hash & mask; m->index[at]; at = (at + 1) & mask) {
			s = m->index[at];
			if (s->hash == hash && same_values(s, values, m->n_labels)) {
				*ret = s;
				return 0;
			}
		}
	}
	if (m->n_series >= m->max_series)
		return -E2BIG;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->family = m;
	s->values = calloc(m->n_labels ? m->n_labels : 1, sizeof(*s->values));
	if (!s->values)
		goto fail_series;
	for (size_t i = 0; i < m->n_labels; i++) {
		s->values[i] = strdup(values[i]);
		if (!s->values[i])
			goto fail_series;
	}
	if (m->type == TJ_METRIC_HISTOGRAM) {
		s->bucket_hits = calloc(m->n_buckets, sizeof(*s->bucket_hits));
		if (!s->bucket_hits)
			goto fail_series;
	}
	if (2 * (m->n_series + 1) > m->index_cap && index_grow(m) < 0)
		goto fail_series;
	if (m->n_series == m->series_cap) {
		size_t cap = m->series_cap ? 2 * m->series_cap : 4;

		grown = realloc(m->series, cap * sizeof(*m->series));
		if (!grown)
			goto fail_series;
		m->series = grown;
		m->series_cap = cap;
	}
	m->series[m->n_series++] = s;
	s->hash = hash;
	index_insert(m->index, m->index_cap, s);
	*ret = s;
	return 0;

fail_series:
	series_free(s, m->n_labels);
	return -ENOMEM;
}

void tj_series_add(struct tj_series *s, double amount)
{
	if (s->family->type == TJ_METRIC_HISTOGRAM)
		return;
	if (s->family->type == TJ_METRIC_COUNTER && !(amount >= 0))
		return;
	s->value += amount;
}

void tj_series_set(struct tj_series *s, double value)
{
	if (s->family->type == TJ_METRIC_GAUGE)
		s->value = value;
}

void tj_series_set_total(struct tj_series *s, double total)
{
	if (s->family->type == TJ_METRIC_COUNTER)
		s->value = total;
}

void tj_series_observe(struct tj_series *s, double value)
{
	const struct tj_metric *m = s->family;
	size_t b = 0;

	if (m->type != TJ_METRIC_HISTOGRAM || isnan(value))
		return;
	/* Buckets are few (at most 64) and most observations are small: a scan from the
	 * bottom is as quick as a binary search here. */
	while (b < m->n_buckets && value > m->buckets[b])
		b++;
	if (b < m->n_buckets)
		s->bucket_hits[b]++;
	s->sum += value;
	s->count++;
}

static int change(struct tj_metric *m, const char *const *values, enum tj_metric_type want,
                  struct tj_series **ret)
{
	bool ok = m->type == want || (want == TJ_METRIC_COUNTER && m->type == TJ_METRIC_GAUGE);

	if (!ok)
		return -EINVAL;
	return tj_metric_series(m, values, ret);
}

int tj_metric_add(struct tj_metric *m, const char *const *values, double amount)
{
	struct tj_series *s;
	int r = change(m, values, TJ_METRIC_COUNTER, &s);

	if (r < 0)
		return r;
	tj_series_add(s, amount);
	return 0;
}

int tj_metric_set(struct tj_metric *m, const char *const *values, double value)
{
	struct tj_series *s;
	int r = change(m, values, TJ_METRIC_GAUGE, &s);

	if (r < 0)
		return r;
	tj_series_set(s, value);
	return 0;
}

int tj_metric_observe(struct tj_metric *m, const char *const *values, double value)
{
	struct tj_series *s;
	int r = change(m, values, TJ_METRIC_HISTOGRAM, &s);

	if (r < 0)
		return r;
	tj_series_observe(s, value);
	return 0;
}

size_t tj_metric_remove_series(struct tj_metric *m, tj_metric_keep_fn keep, void *ctx)
{
	size_t kept = 0, removed;

	if (m->n_labels == 0)
		return 0;
	for (size_t i = 0; i < m->n_series; i++) {
		struct tj_series *s = m->series[i];

		if (keep && keep((const char *const *)s->values, ctx))
			m->series[kept++] = s;
		else
			series_free(s, m->n_labels);
	}
	removed = m->n_series - kept;
	m->n_series = kept;
	/* Open addressing cannot drop an entry in place (it would cut the probe chains of
	 * the others): the index is built again from what is left, at the size it has. */
	if (removed > 0 && m->index_cap > 0) {
		memset(m->index, 0, m->index_cap * sizeof(*m->index));
		for (size_t i = 0; i < m->n_series; i++)
			index_insert(m->index, m->index_cap, m->series[i]);
	}
	return removed;
}

int tj_metrics_add_collector(struct tj_metrics *reg, tj_metrics_collect_fn fn,
                             tj_metrics_collector_free_fn free_fn, void *userdata)
{
	if (reg->n_collectors >= MAX_COLLECTORS)
		return -E2BIG;
	reg->collectors[reg->n_collectors++] = (struct collector){ fn, free_fn, userdata };
	return 0;
}

/* ---- rendering ---- */

struct text {
	char *buf; /* owned */
	size_t len;
	size_t cap;
	int error;
};

static void text_put(struct text *t, const char *s, size_t n)
{
	if (t->error)
		return;
	if (n >= t->cap - t->len) {
		size_t want = t->cap ? t->cap : 4096;
		char *grown;

		while (n >= want - t->len)
			want *= 2;
		if (want > TJ_METRICS_TEXT_MAX) {
			t->error = -E2BIG;
			return;
		}
		grown = realloc(t->buf, want);
		if (!grown) {
			t->error = -ENOMEM;
			return;
		}
		t->buf = grown;
		t->cap = want;
	}
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

static void text_puts(struct text *t, const char *s)
{
	text_put(t, s, strlen(s));
}

/* HELP text escapes backslash and newline; label values also escape the double quote. */
static void text_escaped(struct text *t, const char *s, bool quote)
{
	for (const char *run = s;; s++) {
		const char *esc = NULL;

		if (*s == '\\')
			esc = "\\\\";
		else if (*s == '\n')
			esc = "\\n";
		else if (*s == '"' && quote)
			esc = "\\\"";
		if (!esc && *s)
			continue;
		text_put(t, run, (size_t)(s - run));
		if (!*s)
			return;
		text_puts(t, esc);
		run = s + 1;
	}
}

/* A number as Go's strconv.FormatFloat(v, 'g', -1, 64) writes it, which is what the Go
 * client puts in the exposition: the shortest digits that read back exactly, in exponent
 * form when the exponent is below -4 or at least 6 (two exponent digits at least). */
static void format_value(double v, char out[static 40])
{
	char sci[40], digits[24];
	size_t nd = 0;
	int exp, prec;
	char *p = out;

	if (isnan(v)) {
		strcpy(out, "NaN");
		return;
	}
	if (isinf(v)) {
		strcpy(out, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	if (v == 0) {
		strcpy(out, "0");
		return;
	}
	for (prec = 0; prec < 17; prec++) {
		snprintf(sci, sizeof(sci), "%.*e", prec, v);
		if (strtod(sci, NULL) == v)
			break;
	}
	/* sci is [-]d[.ddd]e[+-]xx */
	for (const char *c = sci; *c && *c != 'e'; c++)
		if (*c >= '0' && *c <= '9')
			digits[nd++] = *c;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	exp = atoi(strchr(sci, 'e') + 1);
	if (v < 0)
		*p++ = '-';
	if (exp < -4 || exp >= 6) {
		*p++ = digits[0];
		if (nd > 1) {
			*p++ = '.';
			memcpy(p, digits + 1, nd - 1);
			p += nd - 1;
		}
		sprintf(p, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
		return;
	}
	if (exp < 0) {
		*p++ = '0';
		*p++ = '.';
		for (int z = -1; z > exp; z--)
			*p++ = '0';
		memcpy(p, digits, nd);
		p += nd;
	} else {
		for (int i = 0; i <= exp; i++)
			*p++ = (size_t)i < nd ? digits[i] : '0';
		if (nd > (size_t)exp + 1) {
			*p++ = '.';
			memcpy(p, digits + exp + 1, nd - (size_t)exp - 1);
			p += nd - (size_t)exp - 1;
		}
	}
	*p = '\0';
}

static void text_value(struct text *t, double v)
{
	char num[40];

	format_value(v, num);
	text_puts(t, num);
}

/* name{labels[,le="x"]} value\n */
static void text_sample(struct text *t, const struct tj_metric *m, const struct tj_series *s,
                        const char *suffix, const char *le, double v)
{
	bool any = m->n_labels > 0 || le;

	text_puts(t, m->name);
	text_puts(t, suffix);
	if (any)
		text_puts(t, "{");
	for (size_t i = 0; i < m->n_labels; i++) {
		size_t l = m->order[i];

		if (i > 0)
			text_puts(t, ",");
		text_puts(t, m->labels[l]);
		text_puts(t, "=\"");
		text_escaped(t, s->values[l], true);
		text_puts(t, "\"");
	}
	if (le) {
		if (m->n_labels > 0)
			text_puts(t, ",");
		text_puts(t, "le=\"");
		text_puts(t, le);
		text_puts(t, "\"");
	}
	if (any)
		text_puts(t, "}");
	text_puts(t, " ");
	text_value(t, v);
	text_puts(t, "\n");
}

static void text_series(struct text *t, const struct tj_metric *m, const struct tj_series *s)
{
	double cumulative = 0;
	char le[40];

	if (m->type != TJ_METRIC_HISTOGRAM) {
		text_sample(t, m, s, "", NULL, s->value);
		return;
	}
	for (size_t b = 0; b < m->n_buckets; b++) {
		cumulative += s->bucket_hits[b];
		format_value(m->buckets[b], le);
		text_sample(t, m, s, "_bucket", le, cumulative);
	}
	text_sample(t, m, s, "_bucket", "+Inf", s->count);
	text_sample(t, m, s, "_sum", NULL, s->sum);
	text_sample(t, m, s, "_count", NULL, s->count);
}

static int compare_metrics(const void *a, const void *b)
{
	const struct tj_metric *x = *(const struct tj_metric *const *)a;
	const struct tj_metric *y = *(const struct tj_metric *const *)b;

	return strcmp(x->name, y->name);
}

/* Series order of the Go client: by label values, taken in label-name order. */
static int compare_series(const void *a, const void *b)
{
	const struct tj_series *x = *(const struct tj_series *const *)a;
	const struct tj_series *y = *(const struct tj_series *const *)b;
	const struct tj_metric *m = x->family;

	for (size_t i = 0; i < m->n_labels; i++) {
		int c = strcmp(x->values[m->order[i]], y->values[m->order[i]]);

		if (c != 0)
			return c;
	}
	return 0;
}

static const char *const type_names[] = {
	[TJ_METRIC_COUNTER] = "counter",
	[TJ_METRIC_GAUGE] = "gauge",
	[TJ_METRIC_HISTOGRAM] = "histogram",
};

int tj_metrics_render(struct tj_metrics *reg, char **ret_text, size_t *ret_len)
{
	struct text t = { 0 };

	for (size_t i = 0; i < reg->n_collectors; i++)
		reg->collectors[i].fn(reg->collectors[i].userdata);
	if (reg->n_metrics > 0)
		qsort(reg->metrics, reg->n_metrics, sizeof(*reg->metrics), compare_metrics);
	text_put(&t, "", 0);
	for (size_t i = 0; i < reg->n_metrics; i++) {
		struct tj_metric *m = reg->metrics[i];

		if (m->n_series == 0)
			continue;
		qsort(m->series, m->n_series, sizeof(*m->series), compare_series);
		text_puts(&t, "# HELP ");
		text_puts(&t, m->name);
		text_puts(&t, " ");
		text_escaped(&t, m->help, false);
		text_puts(&t, "\n# TYPE ");
		text_puts(&t, m->name);
		text_puts(&t, " ");
		text_puts(&t, type_names[m->type]);
		text_puts(&t, "\n");
		for (size_t s = 0; s < m->n_series; s++)
			text_series(&t, m, m->series[s]);
	}
	if (t.error) {
		free(t.buf);
		return t.error;
	}
	*ret_text = t.buf;
	*ret_len = t.len;
	return 0;
}
