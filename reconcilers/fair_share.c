#include "reconcilers/fair_share.h"

#include <math.h>

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
