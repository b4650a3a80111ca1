/* The ResourceQuota part of an admission cycle's snapshot (admitter_queue.h): the limits of
 * the quotas of the namespaces that have waiting jobs, what they hold, and what each waiting
 * job's pods would use of them (reconcilers/admission/quota.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/number.h"
#include "controller/admission/admitter_queue.h"
#include "informers/resource_quota.h"

/* The quotas of the cache by namespace, each with the index of its first limit row. */
struct quota_ref {
	const struct tj_resource_quota *quota;
	size_t first; /* into tj_admitter_snapshot.quota_limits */
};

static int cmp_ref(const void *a, const void *b)
{
	const struct quota_ref *x = a, *y = b;

	return strcmp(x->quota->namespace, y->quota->namespace);
}

/* The first quota of namespace ns in refs (n, sorted), or n. */
static size_t first_of(const struct quota_ref *refs, size_t n, const char *ns)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(refs[mid].quota->namespace, ns) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* What n pods of profile pod, and a launcher of profile launcher (NULL: none), use of limit l
 * of quota q; 0 when q counts neither. */
static int64_t use_of(const struct tj_resource_quota *q, const struct tj_quota_limit *l,
                      const struct tj_quota_pod *pod, int n, const struct tj_quota_pod *launcher)
{
	int64_t one, total = 0;

	if (pod && tj_quota_counts(q, pod) && tj_quota_usage(pod, l->resource, &one))
		for (int i = 0; i < n; i++)
			total = tj_add_capped(total, one);
	if (launcher && tj_quota_counts(q, launcher) && tj_quota_usage(launcher, l->resource, &one))
		total = tj_add_capped(total, one);
	return total;
}

static bool add_charge(struct tj_admitter_snapshot *s, size_t limit, int64_t now, int64_t whole)
{
	if (s->n_charges == s->cap_charges) {
		size_t cap = s->cap_charges ? 2 * s->cap_charges : 64;
		void *p = realloc(s->charges, cap * sizeof(*s->charges));

		if (!p)
			return false;
		s->charges = p;
		s->cap_charges = cap;
	}
	s->charges[s->n_charges++] = (struct tj_admission_quota_charge){ limit, now, whole };
	return true;
}

/* The gangs admitted whose creates may not have reached the quotas' status yet: what they
 * use counts as used. A gang created a moment ago may so count twice until its plan sees its
 * pods, which holds the next job back a cycle at most, never lets it past the quota. */
static void add_admitted(const struct tj_admitter_source *src, struct tj_admitter_snapshot *s,
                         const struct quota_ref *refs, size_t n_refs)
{
	struct tj_store_iter it;
	const struct tj_admitter_entry *e;

	tj_store_iter_init(src->entries, &it);
	while ((e = tj_store_iter_next(&it))) {
		if (e->state != TJ_ADMITTER_ADMITTED && e->state != TJ_ADMITTER_CREATED)
			continue;
		for (size_t i = first_of(refs, n_refs, e->namespace);
		     i < n_refs && strcmp(refs[i].quota->namespace, e->namespace) == 0; i++)
			for (size_t k = 0; k < refs[i].quota->n_limits; k++) {
				int64_t *used = &s->quota_limits[refs[i].first + k].used;

				*used = tj_add_capped(
				        *used, use_of(refs[i].quota, &refs[i].quota->limits[k],
				                      e->quota_pod, (int)e->n_nodes,
				                      e->launcher_node ? e->quota_launcher : NULL));
			}
	}
}

/* Job k's charges: every limit of its namespace's quotas that its pods use. */
static bool charge_job(struct tj_admitter_snapshot *s, size_t k, const struct quota_ref *refs,
                       size_t n_refs)
{
	const struct tj_admitter_entry *e = s->job_entries[k];
	const struct tj_quota_pod *launcher = e->launcher.pods ? e->quota_launcher : NULL;

	for (size_t i = first_of(refs, n_refs, e->namespace);
	     i < n_refs && strcmp(refs[i].quota->namespace, e->namespace) == 0; i++)
		for (size_t l = 0; l < refs[i].quota->n_limits; l++) {
			const struct tj_quota_limit *lim = &refs[i].quota->limits[l];
			int64_t now =
			        use_of(refs[i].quota, lim, e->quota_pod, e->num_pods, launcher);
			int64_t whole =
			        use_of(refs[i].quota, lim, e->quota_pod, e->num_nodes, launcher);

			if ((now > 0 || whole > 0) && !add_charge(s, refs[i].first + l, now, whole))
				return false;
		}
	return true;
}

int tj_admitter_quotas_build(const struct tj_admitter_source *src, struct tj_admitter_snapshot *s)
{
	const struct tj_store *quotas = tj_admitter_store_of(src->informers->resource_quotas);
	size_t n_refs = 0, n_limits = 0, *first = NULL;
	struct quota_ref *refs;
	struct tj_store_iter it;
	const struct tj_resource_quota *q;

	if (!quotas || tj_store_len(quotas) == 0 || s->n_jobs == 0)
		return 0;
	refs = calloc(tj_store_len(quotas), sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	tj_store_iter_init(quotas, &it);
	while ((q = tj_store_iter_next(&it))) {
		refs[n_refs++] = (struct quota_ref){ q, n_limits };
		n_limits += q->n_limits;
	}
	qsort(refs, n_refs, sizeof(*refs), cmp_ref);
	s->quota_limits = calloc(n_limits + 1, sizeof(*s->quota_limits));
	first = calloc(s->n_jobs + 1, sizeof(*first));
	if (!s->quota_limits || !first)
		goto oom;
	for (size_t i = 0; i < n_refs; i++)
		for (size_t k = 0; k < refs[i].quota->n_limits; k++) {
			const struct tj_quota_limit *l = &refs[i].quota->limits[k];

			s->quota_limits[refs[i].first + k] =
			        (struct tj_admission_quota_limit){ refs[i].quota->namespace,
				                                   refs[i].quota->name, l->resource,
				                                   l->hard, l->used };
		}
	s->n_quota_limits = n_limits;
	add_admitted(src, s, refs, n_refs);
	for (size_t k = 0; k < s->n_jobs; k++) {
		first[k] = s->n_charges;
		if (!charge_job(s, k, refs, n_refs))
			goto oom;
	}
	/* The charges array is complete: its address no longer moves. */
	for (size_t k = 0; k < s->n_jobs; k++) {
		size_t end = k + 1 < s->n_jobs ? first[k + 1] : s->n_charges;

		s->jobs[k].charges = end > first[k] ? &s->charges[first[k]] : NULL;
		s->jobs[k].n_charges = end - first[k];
	}
	free(first);
	free(refs);
	return 0;
oom:
	free(first);
	free(refs);
	return -ENOMEM;
}
