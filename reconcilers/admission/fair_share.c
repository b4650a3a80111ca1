#include "reconcilers/admission/fair_share.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/policy/qos.h"

double tj_fair_share_decayed(int64_t gpu_seconds, int64_t start, int64_t until, int64_t now,
                             int64_t half_life)
{
	double mid, age;

	if (gpu_seconds <= 0)
		return 0;
	mid = until > start ? ((double)start + (double)until) / 2 : (double)start;
	age = (double)now - mid;
	if (age <= 0 || half_life <= 0)
		return (double)gpu_seconds;
	return (double)gpu_seconds * exp2(-age / (double)half_life);
}

void tj_fair_share_factors(struct tj_fair_share_account *accounts, size_t n)
{
	double usage = 0, shares = 0;

	for (size_t i = 0; i < n; i++) {
		usage += accounts[i].usage > 0 ? accounts[i].usage : 0;
		shares += accounts[i].share > 0 ? accounts[i].share : 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct tj_fair_share_account *a = &accounts[i];
		double u = usage > 0 && a->usage > 0 ? a->usage / usage : 0;
		double s = shares > 0 && a->share > 0 ? a->share / shares : 0;

		a->factor = u <= 0 ? 1 : s <= 0 ? 0 : exp2(-u / s);
		a->points = (int)lround(a->factor * TJ_FAIR_SHARE_WEIGHT);
	}
}

int tj_fair_share_age_points(int64_t place, int64_t now)
{
	int64_t age = now - place;

	if (age <= 0)
		return 0;
	if (age >= TJ_FAIR_SHARE_MAX_AGE)
		return TJ_FAIR_SHARE_AGE_WEIGHT;
	return (int)(age * TJ_FAIR_SHARE_AGE_WEIGHT / TJ_FAIR_SHARE_MAX_AGE);
}

static int cmp_account(const void *a, const void *b)
{
	const struct tj_fair_share_account *x = a, *y = b;

	return strcmp(x->namespace, y->namespace);
}

const struct tj_fair_share_account *tj_fair_share_find(const struct tj_fair_share_account *accounts,
                                                       size_t n, const char *ns)
{
	struct tj_fair_share_account key = { .namespace = ns };

	return n ? bsearch(&key, accounts, n, sizeof(key), cmp_account) : NULL;
}

struct tj_fair_share_account *tj_fair_share_account_of(struct tj_fair_share_account *accounts,
                                                       size_t *n, size_t cap, const char *ns)
{
	size_t lo = 0, hi = *n;
	char *name;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(accounts[mid].namespace, ns);

		if (c == 0)
			return &accounts[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (*n >= cap || !(name = strdup(ns)))
		return NULL;
	memmove(&accounts[lo + 1], &accounts[lo], (*n - lo) * sizeof(*accounts));
	accounts[lo] = (struct tj_fair_share_account){ .namespace = name };
	(*n)++;
	return &accounts[lo];
}

void tj_fair_share_charge(struct tj_fair_share_account *accounts, size_t *n, size_t cap,
                          const char *ns, int64_t gpu_seconds, int64_t start, int64_t until,
                          int64_t half_life, int64_t now)
{
	struct tj_fair_share_account *a;

	if (gpu_seconds <= 0 || !(a = tj_fair_share_account_of(accounts, n, cap, ns)))
		return;
	a->usage += tj_fair_share_decayed(gpu_seconds, start, until, now, half_life);
}

int64_t tj_fair_share_uncounted_since(int64_t start, int64_t counted_until)
{
	return start > 0 && counted_until > start ? counted_until : start;
}

void tj_fair_share_charge_running(struct tj_fair_share_account *accounts, size_t *n, size_t cap,
                                  const char *ns, int64_t gpus, int64_t start,
                                  int64_t counted_until, int64_t half_life, int64_t now)
{
	int64_t since = tj_fair_share_uncounted_since(start, counted_until);

	if (gpus <= 0 || since <= 0 || since >= now || gpus > INT64_MAX / (now - since))
		return;
	tj_fair_share_charge(accounts, n, cap, ns, gpus * (now - since), since, now, half_life,
	                     now);
}

double tj_fair_share_share_of(const struct tj_admission_policy *policy, const char *ns)
{
	const struct tj_qos_namespace *rule = tj_qos_namespace_rule(policy, ns);

	return rule && rule->share > 0 ? (double)rule->share : 1;
}

void tj_fair_share_settle(struct tj_fair_share_account *accounts, size_t n,
                          const struct tj_admission_policy *policy)
{
	for (size_t i = 0; i < n; i++)
		accounts[i].share = tj_fair_share_share_of(policy, accounts[i].namespace);
	tj_fair_share_factors(accounts, n);
}

void tj_fair_share_accounts_free(struct tj_fair_share_account *accounts, size_t n)
{
	for (size_t i = 0; accounts && i < n; i++)
		free((char *)accounts[i].namespace);
	free(accounts);
}
