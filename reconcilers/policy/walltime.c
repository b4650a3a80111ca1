#include "reconcilers/policy/walltime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/json.h"

/* One of the two limits, taken from the most specific place that sets it. */
struct pick {
	long long seconds;
	char source[128];
};

static void pick_from(struct pick *p, long long seconds, const char *what, const char *ns,
                      const char *cls)
{
	if (p->seconds || seconds <= 0)
		return;
	p->seconds = seconds;
	if (ns && cls)
		snprintf(p->source, sizeof(p->source), "the %s of namespace %s for GPU class %s",
		         what, ns, cls);
	else if (ns)
		snprintf(p->source, sizeof(p->source), "the %s of namespace %s", what, ns);
	else if (cls)
		snprintf(p->source, sizeof(p->source), "the %s of GPU class %s", what, cls);
	else
		snprintf(p->source, sizeof(p->source), "the cluster's %s", what);
}

/* Fills the two picks from one place of the config, where the picks are still unset. */
static void pick_limits(struct pick *def, struct pick *max, const struct tj_walltime_limits *l,
                        const char *ns, const char *cls)
{
	pick_from(def, l->default_seconds, "defaultWalltime", ns, cls);
	pick_from(max, l->max_seconds, "maxWalltime", ns, cls);
}

/* The limits set for exactly that namespace and class (NULL: every one). */
static const struct tj_walltime_override *find_override(const struct tj_walltime_policy *policy,
                                                        const char *ns, const char *cls)
{
	for (size_t i = 0; i < policy->n_overrides; i++) {
		const struct tj_walltime_override *o = &policy->overrides[i];

		if ((ns ? o->namespace && strcmp(o->namespace, ns) == 0 : !o->namespace) &&
		    (cls ? o->gpu_class && strcmp(o->gpu_class, cls) == 0 : !o->gpu_class))
			return o;
	}
	return NULL;
}

int tj_walltime_resolve(const struct tj_config *config, const char *namespace,
                        const struct tj_gpu_class *cls, int64_t requested, struct tj_walltime *ret,
                        struct tj_problem *why)
{
	const struct tj_walltime_policy *policy = tj_config_walltime(config);
	const char *class_name = cls ? cls->name : NULL;
	const struct tj_walltime_override *o;
	struct pick def = { 0, "" }, max = { 0, "" };
	char limit[32];

	if (class_name && (o = find_override(policy, namespace, class_name)))
		pick_limits(&def, &max, &o->limits, namespace, class_name);
	if ((o = find_override(policy, namespace, NULL)))
		pick_limits(&def, &max, &o->limits, namespace, NULL);
	if (class_name && (o = find_override(policy, NULL, class_name)))
		pick_limits(&def, &max, &o->limits, NULL, class_name);
	pick_limits(&def, &max, &policy->cluster, NULL, NULL);

	*ret = (struct tj_walltime){ .max_seconds = max.seconds };
	if (requested > 0) {
		ret->seconds = requested;
		snprintf(ret->source, sizeof(ret->source), "spec.activeDeadlineSeconds");
		if (max.seconds && requested > max.seconds) {
			tj_walltime_format(max.seconds, limit);
			return tj_problem_set(
			        why, "PolicyViolation",
			        "spec.activeDeadlineSeconds (%lld s) is longer than %s, "
			        "%s (%lld s); ask for at most %lld s",
			        (long long)requested, max.source, limit, max.seconds, max.seconds);
		}
		return 0;
	}
	/* Slurm's rule: without a DefaultTime, a job gets the MaxTime. */
	if (def.seconds && (!max.seconds || def.seconds <= max.seconds)) {
		ret->seconds = def.seconds;
		memcpy(ret->source, def.source, sizeof(def.source));
	} else if (max.seconds) {
		ret->seconds = max.seconds;
		memcpy(ret->source, max.source, sizeof(max.source));
	}
	ret->from_default = ret->seconds != 0;
	return 0;
}

static bool parse_warning(const char *s, int64_t *ret)
{
	char *end;
	long v;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v > TJ_WALLTIME_WARNING_MAX)
		return false;
	*ret = v;
	return true;
}

int tj_walltime_validate_warning(const char *annotation, struct tj_problem *why)
{
	int64_t v;

	if (!annotation || parse_warning(annotation, &v))
		return 0;
	return tj_problem_set(why, "InvalidSpec",
	                      "metadata.annotations[%s]: '%s' is not an integer between 0 and %d",
	                      TJ_ANNOTATION_DEADLINE_WARNING, annotation, TJ_WALLTIME_WARNING_MAX);
}

int64_t tj_walltime_warning_seconds(const char *annotation, const struct tj_config *config)
{
	int64_t v;

	if (parse_warning(annotation, &v))
		return v;
	return tj_config_walltime(config)->warning_seconds;
}

int64_t tj_walltime_warning_at(int64_t start, int64_t deadline, int64_t warning)
{
	int64_t at = deadline - warning;

	return at > start ? at : start;
}

int tj_walltime_parse(const char *s, long long *ret)
{
	static const struct {
		char unit;
		long long seconds;
	} units[] = { { 'd', 86400 }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 } };
	long long total = 0;
	size_t next = 0;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	while (*p) {
		long long n = 0;
		size_t u;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		/* Nine digits are more than any walltime needs, and cannot overflow below. */
		for (int digits = 0; *p >= '0' && *p <= '9'; p++, digits++) {
			if (digits == 9)
				return -EINVAL;
			n = n * 10 + (*p - '0');
		}
		if (!*p && next == 0) {
			total = n; /* a bare number of seconds */
			break;
		}
		for (u = next; u < sizeof(units) / sizeof(units[0]) && units[u].unit != *p; u++)
			;
		if (u == sizeof(units) / sizeof(units[0]))
			return -EINVAL; /* an unknown unit, or units out of order */
		total += n * units[u].seconds;
		if (total > TJ_WALLTIME_MAX_SECONDS)
			return -EINVAL;
		next = u + 1;
		p++;
	}
	if (total < 1 || total > TJ_WALLTIME_MAX_SECONDS)
		return -EINVAL;
	*ret = total;
	return 0;
}

void tj_walltime_format(long long seconds, char buf[static 32])
{
	static const struct {
		char unit;
		long long seconds;
	} units[] = { { 'd', 86400 }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 } };
	size_t len = 0;

	buf[0] = '\0';
	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]) && len < 32; u++) {
		long long n = seconds / units[u].seconds;

		if (n == 0)
			continue;
		seconds -= n * units[u].seconds;
		len += (size_t)snprintf(buf + len, 32 - len, "%lld%c", n, units[u].unit);
	}
	if (len == 0)
		snprintf(buf, 32, "0s");
}

static int mount_in(cJSON *containers)
{
	cJSON *c;

	cJSON_ArrayForEach(c, containers)
	{
		cJSON *mounts = cJSON_IsObject(c) ? tj_json_array(c, "volumeMounts") : NULL;
		cJSON *m;
		int r;

		if (!cJSON_IsObject(c))
			continue;
		if (!mounts)
			return -ENOMEM;
		/* A mount of another volume at the same path would hide the file: ours wins. */
		r = tj_json_put_by(mounts, "mountPath", TJ_DEADLINE_MOUNT_PATH,
		                   cJSON_Parse("{\"name\":\"" TJ_DEADLINE_VOLUME
		                               "\",\"mountPath\":\"" TJ_DEADLINE_MOUNT_PATH
		                               "\",\"readOnly\":true}"));
		if (r < 0)
			return r;
		/* And a second mount of our volume elsewhere would be a duplicate name. */
		for (int i = cJSON_GetArraySize(mounts) - 1; i >= 0; i--) {
			m = cJSON_GetArrayItem(mounts, i);
			if (strcmp(tj_or(tj_json_string(m, "name"), ""), TJ_DEADLINE_VOLUME) == 0 &&
			    strcmp(tj_or(tj_json_string(m, "mountPath"), ""),
			           TJ_DEADLINE_MOUNT_PATH) != 0)
				cJSON_DeleteItemFromArray(mounts, i);
		}
	}
	return 0;
}

int tj_walltime_add_volume(cJSON *spec)
{
	/* The downward API reads the annotation as the kubelet sees it, and rewrites the file
	 * when it changes; an annotation that does not exist reads as an empty file. */
	static const char volume[] =
	        "{\"name\":\"" TJ_DEADLINE_VOLUME
	        "\",\"downwardAPI\":{\"items\":[{\"path\":\"" TJ_DEADLINE_FILE
	        "\",\"fieldRef\":{\"fieldPath\":\"metadata.annotations['" TJ_ANNOTATION_DEADLINE
	        "']\"}}]}}";
	cJSON *volumes = tj_json_array(spec, "volumes");
	int r;

	if (!volumes)
		return -ENOMEM;
	r = tj_json_put_by(volumes, "name", TJ_DEADLINE_VOLUME, cJSON_Parse(volume));
	if (r < 0)
		return r;
	r = mount_in(cJSON_GetObjectItemCaseSensitive(spec, "initContainers"));
	if (r < 0)
		return r;
	return mount_in(cJSON_GetObjectItemCaseSensitive(spec, "containers"));
}
