/* The fate of every field of the shipped CRD schemas (crds/trainer.kubeflow.org_*.yaml), in
 * one table: each field a TrainJob or a runtime may carry is applied as Kubeflow Trainer
 * applies it (supported, or supported with limits whose other values are refused), kept as
 * bookkeeping that changes nothing (accepted), or refused before any pod exists with a reason
 * naming the field. crds/README.md's "Field by field" section lists the same table, and
 * tests/unit/test_fields.c checks both: every property path of the schemas has a fate, and
 * the README's rows name the same paths with the same fates.
 *
 * Paths are relative to the object's spec, with "[]" for the items of a list
 * ("template.spec.replicatedJobs[].groupName"). Two kinds of entries cover many fields at
 * once: "<path>.*" is the fate of every member of the open object at path (the schema keeps
 * unknown fields there, x-kubernetes-preserve-unknown-fields) that the table does not name,
 * and an entry marked subtree covers everything below its path. A path with no entry of its
 * own whose fields below all have entries (spec.template, spec.mlPolicy) needs none. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "reconcilers/trainjob.h"

enum tj_field_kind {
	TJ_FIELD_TRAINJOB, /* TrainJob */
	TJ_FIELD_RUNTIME,  /* ClusterTrainingRuntime and TrainingRuntime (one schema) */
};

enum tj_field_fate {
	TJ_FIELD_SUPPORTED, /* applied as Kubeflow Trainer applies it */
	TJ_FIELD_LIMITED,   /* applied for some values; the others are refused, naming the field */
	TJ_FIELD_ACCEPTED,  /* bookkeeping: kept, changes nothing, as in Kubeflow */
	TJ_FIELD_REFUSED,   /* the object is refused, naming the field */
};

struct tj_field {
	enum tj_field_kind kind;
	const char *path;
	enum tj_field_fate fate;
	bool subtree; /* the fate is that of every field below path too */
	/* Why a refused field is refused (the end of the refusal's message); NULL otherwise. */
	const char *why;
};

/* The whole table; *ret_n entries. */
const struct tj_field *tj_fields(size_t *ret_n);

/* The word crds/README.md writes for a fate: "supported", "limited", "accepted",
 * "refused". */
const char *tj_field_fate_name(enum tj_field_fate fate);

/* The entry that gives path its fate: the path's own, else the ".*" entry of the object
 * it is a member of, else an entry marked subtree above it; NULL when it has none (a path
 * with entries below it, or a path the table does not know). */
const struct tj_field *tj_field_find(enum tj_field_kind kind, const char *path);

/* Whether the table has an entry below path ("template" has "template.metadata.labels"). */
bool tj_field_has_below(enum tj_field_kind kind, const char *path);

/* Walks spec (the object's spec) and refuses the first member whose fate is refused, or
 * that the table does not know: 0, or -EOPNOTSUPP with reason (UnsupportedRuntime for a
 * runtime, InvalidSpec for a TrainJob) and a message naming the field ("spec.template.spec.
 * replicatedJobs[1].template.spec.podFailurePolicy"). The values of limited fields are
 * checked where they are read (reconcilers/runtime_support.h,
 * reconcilers/render/trainjob_support.h). */
int tj_field_check(enum tj_field_kind kind, const cJSON *spec, const char *reason,
                   struct tj_problem *why);
