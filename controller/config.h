/* The controller's config file (YAML, read with libfyaml): the GPU classes and the defaults
 * of the failure policy. Shipped in deploy/ as a ConfigMap. */
#pragma once

#include <stddef.h>

struct tj_kv {
	char *key;   /* owned */
	char *value; /* owned */
};

struct tj_toleration {
	char *key;       /* owned; NULL matches every key (operator Exists) */
	char *operator_; /* owned; "Equal" or "Exists" */
	char *value;     /* owned; NULL with Exists */
	char *effect;    /* owned; NULL matches every effect */
};

struct tj_gpu_class {
	char *name;                /* owned; e.g. "gh200"; runtime torch-<name> selects it */
	char *resource;            /* owned; extended resource, e.g. "nvidia.com/gpu" */
	char *arch;                /* owned; kubernetes.io/arch value, e.g. "arm64"; NULL = any */
	struct tj_kv *node_labels; /* owned array; required node labels (key In [value]) */
	size_t n_node_labels;
	struct tj_toleration *tolerations; /* owned array */
	size_t n_tolerations;
};

struct tj_config {
	struct tj_gpu_class *classes; /* owned array */
	size_t n_classes;
};

/* Parses a config document. origin names it in messages ("config.yaml"). On error returns
 * -EINVAL and writes "origin:LINE: what is wrong" into err; *ret is written only on success. */
int tj_config_parse(const char *yaml, size_t len, const char *origin, struct tj_config **ret,
                    char *err, size_t errlen);

/* Reads and parses a file; -errno if it cannot be read. */
int tj_config_load_file(const char *path, struct tj_config **ret, char *err, size_t errlen);

/* The class with that name, or NULL. */
const struct tj_gpu_class *tj_config_find_class(const struct tj_config *config, const char *name);

/* Accepts NULL; returns NULL. */
struct tj_config *tj_config_free(struct tj_config *config);
